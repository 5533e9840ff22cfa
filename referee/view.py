"""What the outputs show: the game's state, the time, and the box's own conditions.

The app builds a View after every change; the screen, the terminal and the lights draw
it and nothing else, so they never need the engine, the store or the inputs.
"""

from dataclasses import dataclass
from enum import StrEnum

from .claim import Claim
from .rules import Settings, State
from .rules.engine import TABLE
from .rules.settings import DECK


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Notice:
    """A lasting condition of the box: a stuck button, an unplugged board, storage trouble."""

    text: str
    severity: Severity = Severity.WARNING
    short: str = ""  # where the text does not fit (a small screen): what is said instead


@dataclass(frozen=True)
class ReplayView:
    """A call's sound replayed slowed down, as the screen draws it: positions are shares
    of the clip's length, 0 to 1."""

    title: str  # "P2's call at 4:07.3, 4x slower"
    lows: tuple[float, ...]  # the span's waveform: each column's lowest and highest, +-1
    highs: tuple[float, ...]
    presses: tuple[tuple[int, float], ...]  # (player, where)
    onsets: tuple[float, ...]  # where a voice starts
    gaps: tuple[float, ...]  # where samples were lost
    cursor: float  # what is heard now
    span: tuple[float, float] = (0.0, 1.0)  # the part the waveform shows: around the presses
    heard: bool = True  # False: no speaker, the replay is only seen
    # Those of onsets whose start is soft: a weak rise, or one over another voice, that the
    # detector cannot place as surely (docs/rules.md, "Replay").
    soft: tuple[float, ...] = ()


@dataclass(frozen=True)
class Join:
    """How a phone joins the page (docs/web.md): shown in the lobby while it is served."""

    url: str | None  # the page's address, http://192.168.1.23:8080/; None: none to reach
    pin: str | None  # the box's PIN; None: it cannot be read (the log says why)
    # Why phones cannot reach the url ("no network", "this computer only"); "": they can,
    # and the screen shows its QR code.
    unreachable: str = ""


@dataclass(frozen=True)
class ClaimSeen:
    """The SET a caller took, as the camera saw it (docs/rules.md, "The camera")."""

    claim: Claim
    propose: bool = False  # [camera] judge = "propose": the press that confirms it is shown


@dataclass(frozen=True)
class DeckSeen:
    """The deck counted by sight (docs/rules.md, "The deck counted by sight"): what the
    camera read the same for a while, beside what the box counts."""

    table: int | None  # the cards on the table, every one read surely; None: one unsure
    taken: int  # the cards the SETs took, as the box counts them (of this deal)
    box: int | None = None  # the cards on the table as the box counts them, where it deals
    twice: tuple[tuple[int, int, int, int], ...] = ()  # faces read surely twice on it
    again: tuple[tuple[int, int, int, int], ...] = ()  # faces on it that a SET seen took

    @property
    def deck(self) -> int | None:
        """The cards left in the deck by sight; None when the table is not counted."""
        return None if self.table is None else DECK - self.table - self.taken

    @property
    def amiss(self) -> bool:
        """Something the table is to be told: counts that differ, or a face that cannot be."""
        differ = self.table is not None and self.box is not None and self.table != self.box
        return differ or (self.deck or 0) < 0 or bool(self.twice or self.again)


@dataclass(frozen=True)
class TableSeen:
    """What the camera sees on the table, in counts: the cards, those read surely, the
    SETs among them; the claim of the call being judged, once seen; the deck by sight."""

    cards: int
    sure: int
    sets: int
    claim: ClaimSeen | None = None
    deck: DeckSeen | None = None

    @property
    def no_set(self) -> bool:
        """No SET among a whole table read surely: three more cards are due. A table of
        fewer than the deal's 12 is the deck's end (or a table the camera sees only part
        of), and one with a card unsure may hide the SET in it."""
        return self.sets == 0 and self.cards >= TABLE and self.sure == self.cards


@dataclass(frozen=True)
class View:
    settings: Settings
    state: State
    now_ns: int  # the game clock, on which the state's deadlines are set
    messages: tuple[str, ...] = ()  # the latest effects' texts, newest last
    notices: tuple[Notice, ...] = ()
    source: str = ""  # where the buttons come from, e.g. "GPIO (lgpio: kernel edge times)"
    listening: bool = False  # the microphone keeps the last seconds: its mark is shown
    watching: bool = False  # the camera reads the table: its mark is shown
    table: TableSeen | None = None  # what the camera sees, while it watches
    replay: ReplayView | None = None  # a call's sound played again, slowed down
    names: tuple[tuple[int, str], ...] = ()  # (seat, player's name), for the named seats
    join: Join | None = None  # in the lobby, while the page is served

    def name(self, player: int) -> str | None:
        """The name of the player at this seat, if the seat has one."""
        return next((name for seat, name in self.names if seat == player), None)


MIC_MARK = "● mic"  # while the microphone listens, on every screen (issue 17: privacy)
CAM_MARK = "● cam"  # while the camera watches, beside it (issue 32: privacy too)
