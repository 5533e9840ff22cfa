"""What a transition asks the outside world to do or say: the screen, the lights, the beeper.

Every effect has a `text` the table can read; outputs pick the ones they act on.
"""

from referee.units import NS_PER_MS

from .inputs import Cards, makes_set
from .state import Judgement, Place, Result
from .values import value


def seat(player: int) -> str:
    return f"P{player}"


def ms(offset_ns: int) -> str:
    return f"{offset_ns / NS_PER_MS:.1f} ms"


@value
class Ignored:
    """An input that means nothing now: the state is unchanged."""

    reason: str

    @property
    def text(self) -> str:
        return f"ignored: {self.reason}"


@value
class Joined:
    player: int
    super_round: bool = False

    @property
    def text(self) -> str:
        return f"{seat(self.player)} joins {'the super round' if self.super_round else 'the game'}"


@value
class Left:
    player: int
    super_round: bool = False

    @property
    def text(self) -> str:
        return f"{seat(self.player)} leaves {'the super round' if self.super_round else 'the game'}"


@value
class GameStarted:
    players: tuple[int, ...]

    @property
    def text(self) -> str:
        return "game on: " + ", ".join(seat(p) for p in self.players)


@value
class CallOpened:
    player: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} calls SET"


@value
class CoCaller:
    player: int
    offset_ns: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} too close to call (+{ms(self.offset_ns)}): co-caller"


@value
class PhotoFinish:
    player: int
    offset_ns: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} +{ms(self.offset_ns)}"


@value
class TurnStarted:
    player: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)}: show your SET"


@value
class Judged:
    player: int
    judgement: Judgement
    delta: int  # the player's change of points

    @property
    def text(self) -> str:
        what = {
            Judgement.VALID: "SET!",
            Judgement.INVALID: "no SET",
            Judgement.TIMEOUT: "too late",
            Judgement.SHARED: "shared",
        }
        return f"{seat(self.player)} {what[self.judgement]} ({self._score()})"

    def _score(self) -> str:
        if self.delta:
            return f"{self.delta:+d}"
        match self.judgement:
            case Judgement.VALID:
                return "scores 0"
            case Judgement.SHARED:
                return "nobody scores"
        return "no point to pay"


@value
class SharedCards:
    """Official: tied callers' SETs share cards; the cards go, nobody scores."""

    callers: tuple[int, ...]

    @property
    def text(self) -> str:
        who = ", ".join(seat(p) for p in self.callers)
        return f"{who}: the SETs share cards, nobody scores"


@value
class Locked:
    player: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} is locked until another player's SET is judged valid"


@value
class Unlocked:
    players: tuple[int, ...]

    @property
    def text(self) -> str:
        return ", ".join(seat(p) for p in self.players) + " may call again"


@value
class SuperOpened:
    @property
    def text(self) -> str:
        return "super round: press your buzzer to join, SUPER to flip"


@value
class SuperCancelled:
    @property
    def text(self) -> str:
        return "super round cancelled"


@value
class CountdownStarted:
    participants: tuple[int, ...]

    @property
    def text(self) -> str:
        return "flip! only " + ", ".join(seat(p) for p in self.participants) + " may call"


@value
class CountdownResumed:
    @property
    def text(self) -> str:
        return "countdown resumes"


@value
class TimeUp:
    paid: tuple[int, ...]  # participants who paid 1 point

    @property
    def text(self) -> str:
        if not self.paid:
            return "time! nobody has a point to pay"
        verb = "pays" if len(self.paid) == 1 else "pay"
        return f"time! {', '.join(seat(p) for p in self.paid)} {verb} 1"


@value
class RoundEnded:
    @property
    def text(self) -> str:
        return "super round over"


@value
class CameraSaw:
    """The cards a caller took, as the camera saw them: kept with the call."""

    cards: Cards
    note: str = ""  # why the camera's verdict does not judge the call, when it does not

    @property
    def text(self) -> str:
        sees = makes_set(self.cards)
        said = f"the camera sees {'a SET' if sees else 'no SET'}"
        if sees is None:
            said = "the camera cannot see the claim"
        return f"{said}: {' '.join(c.word for c in self.cards)}" + (
            f" ({self.note})" if self.note else ""
        )


@value
class NoSetClaimed:
    @property
    def text(self) -> str:
        return "no SET on the table? judge it"


@value
class ClaimJudged:
    upheld: bool  # there really was no SET on the table
    dealt: bool = False  # and three more cards were dealt
    owed: int | None = None  # solitaire: the SETs owed after it (solo owes none)

    @property
    def text(self) -> str:
        if self.upheld:
            return "right: no SET on the table" + ("; three more cards" if self.dealt else "")
        if self.owed is None:
            return "wrong: there was a SET; the next SET scores 0"
        if not self.dealt:  # the end follows, and says why
            return "wrong: there was a SET"
        return f"wrong: there was a SET; three more cards; {NoSetDealt(self.owed).owing}"


@value
class NoSetDealt:
    """Solitaire: no SET on the table, so three more cards, and a SET owed."""

    owed: int

    @property
    def owing(self) -> str:
        return f"{self.owed} SET{'' if self.owed == 1 else 's'} owed"

    @property
    def text(self) -> str:
        return f"no SET: three more cards; {self.owing}"


@value
class DebtPaid:
    """Solitaire: a SET found while the deck is empty pays back one owed."""

    owed: int  # still owed

    @property
    def text(self) -> str:
        return f"an owed SET paid back; {self.owed} still owed"


@value
class DealOver:
    deal: int
    deals: int

    @property
    def text(self) -> str:
        return f"deal {self.deal} of {self.deals} over"


@value
class DealStarted:
    deal: int
    deals: int
    dealer: int

    @property
    def text(self) -> str:
        return f"deal {self.deal} of {self.deals}: {seat(self.dealer)} deals"


@value
class Undone:
    step: str

    @property
    def text(self) -> str:
        return f"undone: {self.step}"


@value
class GameOver:
    ranking: tuple[Place, ...]
    result: Result | None = None  # solitaire
    why: str = ""  # when the game ended by itself

    @property
    def text(self) -> str:
        why = f" ({self.why})" if self.why else ""
        if self.result is not None:
            sets = self.ranking[0].points
            return f"game over: {self.result}{why}, {sets} SET{'' if sets == 1 else 's'} found"
        ranking = ", ".join(f"{r.place}. {seat(r.player)} {r.points}" for r in self.ranking)
        return f"game over{why}: {ranking}"


Effect = (
    Ignored
    | Joined
    | Left
    | GameStarted
    | CallOpened
    | CoCaller
    | PhotoFinish
    | TurnStarted
    | Judged
    | SharedCards
    | Locked
    | Unlocked
    | SuperOpened
    | SuperCancelled
    | CountdownStarted
    | CountdownResumed
    | TimeUp
    | RoundEnded
    | CameraSaw
    | NoSetClaimed
    | ClaimJudged
    | NoSetDealt
    | DebtPaid
    | DealOver
    | DealStarted
    | Undone
    | GameOver
)
