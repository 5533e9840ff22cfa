"""What a transition asks the outside world to do or say: the screen, the lights, the beeper.

Every effect has a `text` the table can read; outputs pick the ones they act on.
"""

from dataclasses import dataclass

from .settings import NS_PER_MS
from .state import Judgement, Place


def seat(player: int) -> str:
    return f"P{player}"


def ms(offset_ns: int) -> str:
    return f"{offset_ns / NS_PER_MS:.1f} ms"


@dataclass(frozen=True)
class Ignored:
    """An input that means nothing now: the state is unchanged."""

    reason: str

    @property
    def text(self) -> str:
        return f"ignored: {self.reason}"


@dataclass(frozen=True)
class Joined:
    player: int
    super_round: bool = False

    @property
    def text(self) -> str:
        return f"{seat(self.player)} joins {'the super round' if self.super_round else 'the game'}"


@dataclass(frozen=True)
class Left:
    player: int
    super_round: bool = False

    @property
    def text(self) -> str:
        return f"{seat(self.player)} leaves {'the super round' if self.super_round else 'the game'}"


@dataclass(frozen=True)
class GameStarted:
    players: tuple[int, ...]

    @property
    def text(self) -> str:
        return "game on: " + ", ".join(seat(p) for p in self.players)


@dataclass(frozen=True)
class CallOpened:
    player: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} calls SET"


@dataclass(frozen=True)
class CoCaller:
    player: int
    offset_ns: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} too close to call (+{ms(self.offset_ns)}): co-caller"


@dataclass(frozen=True)
class PhotoFinish:
    player: int
    offset_ns: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} +{ms(self.offset_ns)}"


@dataclass(frozen=True)
class TurnStarted:
    player: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)}: show your SET"


@dataclass(frozen=True)
class Judged:
    player: int
    judgement: Judgement
    delta: int  # the player's change of points

    @property
    def text(self) -> str:
        what = {Judgement.VALID: "SET!", Judgement.INVALID: "no SET", Judgement.TIMEOUT: "too late"}
        return f"{seat(self.player)} {what[self.judgement]} ({self._score()})"

    def _score(self) -> str:
        if self.delta:
            return f"{self.delta:+d}"
        return "scores 0" if self.judgement is Judgement.VALID else "no point to pay"


@dataclass(frozen=True)
class Locked:
    player: int

    @property
    def text(self) -> str:
        return f"{seat(self.player)} is locked until another player's SET is judged valid"


@dataclass(frozen=True)
class Unlocked:
    players: tuple[int, ...]

    @property
    def text(self) -> str:
        return ", ".join(seat(p) for p in self.players) + " may call again"


@dataclass(frozen=True)
class SuperOpened:
    @property
    def text(self) -> str:
        return "super round: press your buzzer to join, SUPER to flip"


@dataclass(frozen=True)
class SuperCancelled:
    @property
    def text(self) -> str:
        return "super round cancelled"


@dataclass(frozen=True)
class CountdownStarted:
    participants: tuple[int, ...]

    @property
    def text(self) -> str:
        return "flip! only " + ", ".join(seat(p) for p in self.participants) + " may call"


@dataclass(frozen=True)
class CountdownResumed:
    @property
    def text(self) -> str:
        return "countdown resumes"


@dataclass(frozen=True)
class TimeUp:
    paid: tuple[int, ...]  # participants who paid 1 point

    @property
    def text(self) -> str:
        if not self.paid:
            return "time! nobody has a point to pay"
        verb = "pays" if len(self.paid) == 1 else "pay"
        return f"time! {', '.join(seat(p) for p in self.paid)} {verb} 1"


@dataclass(frozen=True)
class RoundEnded:
    @property
    def text(self) -> str:
        return "super round over"


@dataclass(frozen=True)
class NoSetClaimed:
    @property
    def text(self) -> str:
        return "no SET on the table? judge it"


@dataclass(frozen=True)
class ClaimJudged:
    upheld: bool  # there really was no SET on the table

    @property
    def text(self) -> str:
        if self.upheld:
            return "right: no SET on the table"
        return "wrong: there was a SET; the next SET scores 0"


@dataclass(frozen=True)
class Undone:
    step: str

    @property
    def text(self) -> str:
        return f"undone: {self.step}"


@dataclass(frozen=True)
class GameOver:
    ranking: tuple[Place, ...]

    @property
    def text(self) -> str:
        return "game over: " + ", ".join(
            f"{r.place}. {seat(r.player)} {r.points}" for r in self.ranking
        )


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
    | Locked
    | Unlocked
    | SuperOpened
    | SuperCancelled
    | CountdownStarted
    | CountdownResumed
    | TimeUp
    | RoundEnded
    | NoSetClaimed
    | ClaimJudged
    | Undone
    | GameOver
)
