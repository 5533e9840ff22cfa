"""The state of a game: immutable values, so that undo is a pointer and replay a fold.

Every state a game passed through stays reachable for undo, so a new state shares all
it can with the one before: the players it did not change, and every call but the last
(Calls). A step costs a few hundred bytes whatever the game's length.
"""

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from enum import StrEnum
from typing import Any, TypeVar, overload

from .inputs import Cards
from .settings import DECK
from .values import evolver, value

_D = TypeVar("_D")


def evolve(value: _D, /, **changes: Any) -> _D:
    """dataclasses.replace for the values here, several times as fast (values.py).
    engine.py has mypy check its calls as calls of replace itself."""
    copy: _D = _EVOLVERS[type(value)](value, **changes)
    return copy


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
    SHARED = "shared"  # official: tied callers' SETs shared cards, nobody scores


class Result(StrEnum):
    """How a solitaire game ended."""

    WON = "won"
    LOST = "lost"


@value
class Player:
    id: int
    points: int = 0
    locked: bool = False


@value
class Call:
    """A call and its photo finish. `callers` are in turn order; `presses` every press of it."""

    callers: tuple[int, ...]
    presses: tuple[tuple[int, int], ...]  # (player, t_ns): first caller first, then by time, seat
    verdicts: tuple[Judgement, ...] = ()
    super_round: bool = False
    deal: int = 0  # official: the deal it was called in
    seen: Cards | None = None  # the three cards the camera saw taken (docs/rules.md)

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


class Calls(Sequence[Call]):
    """The calls of a game, oldest first: an immutable list that shares its calls.

    `added` and `with_last` make a new list in constant time and space, sharing every
    call before the last with this one; the last is read at once, the others walk.
    """

    __slots__ = ("_before", "_last")

    def __init__(self, last: Call | None = None, before: "Calls | None" = None) -> None:
        self._last = last
        self._before = before

    def added(self, call: Call) -> "Calls":
        return Calls(call, self if self._last is not None else None)

    def with_last(self, call: Call) -> "Calls":
        """The same calls with the last one replaced."""
        assert self._last is not None, "no call to replace"
        return Calls(call, self._before)

    @property
    def last(self) -> Call:
        assert self._last is not None, "no call yet"
        return self._last

    def __bool__(self) -> bool:
        return self._last is not None

    def __len__(self) -> int:
        return sum(1 for _ in reversed(self))

    def __reversed__(self) -> Iterator[Call]:
        node: Calls | None = self
        while node is not None and node._last is not None:
            yield node._last
            node = node._before

    def __iter__(self) -> Iterator[Call]:
        return reversed(list(reversed(self)))

    @overload
    def __getitem__(self, index: int) -> Call: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Call, ...]: ...
    def __getitem__(self, index: int | slice) -> Call | tuple[Call, ...]:
        if index == -1 and self._last is not None:
            return self._last
        return tuple(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple):
            return tuple(self) == other
        if not isinstance(other, Calls):
            return NotImplemented
        a: Calls | None = self
        b: Calls | None = other
        while a is not b:  # shared tails are equal without a look
            if a is None or b is None or a._last != b._last:
                return False
            a, b = a._before, b._before
        return True

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Calls({list(self)!r})"


NO_CALLS = Calls()


@value
class SuperRound:
    participants: tuple[int, ...]  # seats, ascending; those who paid 2 are no longer here
    dropped: tuple[int, ...] = ()  # paid 2 for an invalid call in this round
    countdown_deadline: int | None = None  # while the countdown runs
    countdown_left_ns: int | None = None  # while it is paused by a super-call


@value
class Solo:
    """The timed single-player score: the increment's reference time is not a timer."""

    ref_ns: int
    zeroed: bool = False  # a wrong no-SET claim: the next valid SET scores 0
    sets: int = 0


@value
class Place:
    place: int
    player: int
    points: int


@value
class State:
    phase: Phase
    players: tuple[Player, ...]  # in the lobby: those who joined so far
    bank: int = 0
    taken: int = 0  # cards the SETs took from the deck (of this deal); points may count else
    table: int = 0  # solo and solitaire: cards on the table; the deck holds the rest
    owed: int = 0  # solitaire: SETs owed for no-SET claims while the deck had cards
    deal: int = 0  # official: the deal being played, from 1
    deal_ends: tuple[tuple[int, ...], ...] = ()  # official: every player's points after each deal
    calls: Calls = NO_CALLS  # in phase call / super-call the last one is pending
    pointout_deadline: int | None = None
    super_round: SuperRound | None = None
    solo: Solo | None = None
    claim: bool = False  # solo: a no-SET claim waits for its verdict
    ranking: tuple[Place, ...] = ()
    result: Result | None = None  # solitaire, once over
    # What undo returns to, and what it takes back; not part of the state's value.
    previous: "State | None" = field(default=None, compare=False, repr=False)
    step: str = field(default="", compare=False)

    def alone(self) -> "State":
        """This state without the states undo walks back through (to report it, say)."""
        return evolve(self, previous=None, step="")

    @property
    def pending(self) -> Call | None:
        if self.phase in (Phase.CALL, Phase.SUPER_CALL) and not self.claim:
            return self.calls.last
        return None

    def player(self, seat: int) -> Player | None:
        for p in self.players:
            if p.id == seat:
                return p
        return None

    @property
    def locked(self) -> tuple[int, ...]:
        return tuple(p.id for p in self.players if p.locked)

    @property
    def deck(self) -> int:
        """The cards still in the deck (of this deal)."""
        return DECK - self.taken - self.table

    @property
    def dealer(self) -> int | None:
        """Official: the seat dealing now; the lowest seat in play first, then the next."""
        if not self.deal:
            return None
        return self.players[(self.deal - 1) % len(self.players)].id

    @property
    def deadline(self) -> int | None:
        """The next time a timer fires without any input."""
        if self.pointout_deadline is not None or self.super_round is None:
            return self.pointout_deadline
        return self.super_round.countdown_deadline


def stepped(new: State, before: State, step: str) -> State:
    """The state an undo step just built (by evolve, from `before`), pointing back at the
    state before it: set in place, as its other fields were, before anyone sees it."""
    assert new is not before and new.previous is before.previous, "not a state just evolved"
    new.previous = before  # type: ignore[misc]
    new.step = sys.intern(step)  # type: ignore[misc]  # one string for all "P2's call"
    return new


# Every class whose values the engine evolves.
_EVOLVERS: dict[type, Callable[..., Any]] = {
    kind: evolver(kind) for kind in (Player, Call, SuperRound, Solo, State)
}
# The state's own, for the engine's every step: without evolve's look-up of the class.
evolve_state: Callable[..., State] = _EVOLVERS[State]
