"""The inputs the rules engine understands, each stamped with the time it happened.

Times are integer nanoseconds of the game's clock (0 at the start of the game). A
press carries the time of its button's first edge, never the time software saw it.
"""

from referee.faces import code, is_set

from .values import value


@value
class Card:
    """A card the camera saw taken: its face (faces.py's values), read surely or not."""

    face: tuple[int, int, int, int]
    sure: bool = True

    @property
    def word(self) -> str:
        """As the ledger writes it: "1rSo", an unsure card "1rSo?"."""
        return code(self.face) + ("" if self.sure else "?")


SET = 3  # cards in a SET
Cards = tuple[Card, Card, Card]  # a claim: the three cards a caller took


def makes_set(cards: Cards) -> bool | None:
    """Whether the three are a SET; None when one was not read surely."""
    return is_set(*(c.face for c in cards)) if all(c.sure for c in cards) else None


@value
class Press:
    player: int
    t_ns: int


@value
class Verdict:
    valid: bool
    t_ns: int


@value
class CameraVerdict:
    """The camera's verdict on the SET a caller took (docs/rules.md, "The camera"): SET
    or not, at the time of the frame that showed the three cards gone, with those cards
    (a script may leave them out)."""

    valid: bool
    t_ns: int
    cards: Cards | None = None


@value
class Seen:
    """The three cards the camera saw a caller take, judging nothing: kept with the call."""

    cards: Cards
    t_ns: int


@value
class Super:
    t_ns: int


@value
class Undo:
    t_ns: int


@value
class End:
    t_ns: int
    left: int | None = None  # solo: the cards left on the table, when not those counted


@value
class Tick:
    """Only moves time on, so that timers can fire."""

    t_ns: int


Input = Press | Verdict | CameraVerdict | Seen | Super | Undo | End | Tick


def words(inp: Input) -> str:
    """The input as a replay script writes it, without its time: `press 2`, `valid`."""
    match inp:
        case Press(player=p):
            return f"press {p}"
        case Verdict(valid=v):
            return "valid" if v else "invalid"
        case CameraVerdict(valid=v, cards=cards):
            said = "camera valid" if v else "camera invalid"
            return said if cards is None else f"{said} {_words(cards)}"
        case Seen(cards=cards):
            return f"seen {_words(cards)}"
        case Super():
            return "super"
        case Undo():
            return "undo"
        case End(left=left):
            return "end" if left is None else f"end left={left}"
        case Tick():
            return "tick"


def _words(cards: Cards) -> str:
    return " ".join(card.word for card in cards)
