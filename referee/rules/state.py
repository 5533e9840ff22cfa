"""The state of a game: immutable values, so that undo is a pointer and replay a fold."""

from dataclasses import dataclass, field
from enum import StrEnum


class Phase(StrEnum):
    LOBBY = "lobby"
    OPEN = "open"
    CALL = "call"
    SUPER_JOIN = "super-join"
    SUPER_COUNTDOWN = "super-countdown"
    SUPER_CALL = "super-call"
    OVER = "over"


class Judgement(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    TIMEOUT = "timeout"  # scored as invalid


@dataclass(frozen=True)
class Player:
    id: int
    points: int = 0
    locked: bool = False


@dataclass(frozen=True)
class Call:
    """A call and its photo finish. `callers` are in turn order; `presses` every press of it."""

    callers: tuple[int, ...]
    presses: tuple[tuple[int, int], ...]  # (player, t_ns): first caller first, then by time, seat
    verdicts: tuple[Judgement, ...] = ()
    super_round: bool = False

    @property
    def first_ns(self) -> int:
        return self.presses[0][1]

    @property
    def turn(self) -> int | None:
        """The co-caller whose verdict is awaited, or None once all are judged."""
        return self.callers[len(self.verdicts)] if len(self.verdicts) < len(self.callers) else None

    @property
    def valid_count(self) -> int:
        return self.verdicts.count(Judgement.VALID)

    def offset_ns(self, t_ns: int) -> int:
        return t_ns - self.first_ns


@dataclass(frozen=True)
class SuperRound:
    participants: tuple[int, ...]  # seats, ascending; those who paid 2 are no longer here
    dropped: tuple[int, ...] = ()  # paid 2 for an invalid call in this round
    countdown_deadline: int | None = None  # while the countdown runs
    countdown_left_ns: int | None = None  # while it is paused by a super-call


@dataclass(frozen=True)
class Solo:
    """The timed single-player score: the increment's reference time is not a timer."""

    ref_ns: int
    zeroed: bool = False  # a wrong no-SET claim: the next valid SET scores 0
    sets: int = 0


@dataclass(frozen=True)
class Place:
    place: int
    player: int
    points: int


@dataclass(frozen=True)
class State:
    phase: Phase
    players: tuple[Player, ...]  # in the lobby: those who joined so far
    bank: int = 0
    calls: tuple[Call, ...] = ()  # in phase call / super-call the last one is pending
    pointout_deadline: int | None = None
    super_round: SuperRound | None = None
    solo: Solo | None = None
    claim: bool = False  # solo: a no-SET claim waits for its verdict
    ranking: tuple[Place, ...] = ()
    # What undo returns to, and what it takes back; not part of the state's value.
    previous: "State | None" = field(default=None, compare=False, repr=False)
    step: str = field(default="", compare=False)

    @property
    def pending(self) -> Call | None:
        if self.phase in (Phase.CALL, Phase.SUPER_CALL) and not self.claim:
            return self.calls[-1]
        return None

    def player(self, seat: int) -> Player | None:
        return next((p for p in self.players if p.id == seat), None)

    @property
    def locked(self) -> tuple[int, ...]:
        return tuple(p.id for p in self.players if p.locked)

    @property
    def deadline(self) -> int | None:
        """The next time a timer fires without any input."""
        if self.pointout_deadline is not None:
            return self.pointout_deadline
        if self.super_round is not None:
            return self.super_round.countdown_deadline
        return None
