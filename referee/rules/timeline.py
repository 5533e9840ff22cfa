"""A game's history as it stands: its calls, super rounds and scores, each with its time.

The state keeps what a game is now, not when each thing happened; the history is read
by stepping through the inputs again and keeping each transition's time. What UNDO took
back is taken out of the history too, as it is out of the state: a verdict mended with
UNDO and then the right one reads as the right one alone, at its own time.

docs/web.md ("History" and "Stats") says what each field is, and what counts as a SET,
a mistake, a win and a super round won or lost.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from .effects import (
    CallOpened,
    CountdownStarted,
    Effect,
    GameOver,
    Judged,
    RoundEnded,
    SharedCards,
    SuperCancelled,
    SuperOpened,
    TimeUp,
    Undone,
)
from .engine import new_game, step
from .inputs import Input, Tick
from .settings import Settings
from .state import Call, Judgement, Phase, State


@dataclass(frozen=True)
class Ruling:
    """One verdict on one caller, and when it came (a timeout: at the deadline)."""

    seat: int
    judgement: Judgement
    at_ns: int
    delta: int  # the caller's change of points (0 for shared cards)


@dataclass(frozen=True)
class CallRecord:
    call: Call  # its callers, its photo finish and its verdicts
    rulings: tuple[Ruling, ...]  # the verdicts with their times, in turn order

    @property
    def at_ns(self) -> int:
        return self.call.first_ns

    def margin_ns(self, seat: int) -> int | None:
        """How long after this seat's press the next player's press came, if one did."""
        mine = next(t for s, t in self.call.presses if s == seat)
        later = [t - mine for s, t in self.call.presses if s != seat and t >= mine]
        return min(later, default=None)


class RoundEnd(StrEnum):
    """How a super round ended; it may not have yet."""

    WON = "won"  # a participant's SET was judged valid
    TIME_UP = "time up"
    ALL_OUT = "all out"  # every participant called wrong
    CANCELLED = "cancelled"  # SUPER again with nobody joined
    GAME_OVER = "game over"  # the game ended during it
    RUNNING = "running"  # it has not ended yet


@dataclass(frozen=True)
class RoundRecord:
    opened_ns: int
    flip_ns: int | None = None
    participants: tuple[int, ...] = ()  # at the flip
    winner: int | None = None  # who took the three cards
    end: RoundEnd = RoundEnd.RUNNING
    ended_ns: int | None = None
    paid: tuple[int, ...] = ()  # at its time up


@dataclass(frozen=True)
class Timeline:
    final: State  # the state at the end, alone (without what undo walks back through)
    started_ns: int | None  # when play began (None: still in the lobby)
    calls: tuple[CallRecord, ...]
    rounds: tuple[RoundRecord, ...]
    # Every player's points, by seat as in `final.players`, from the start and after each
    # transition that changed them.
    scores: tuple[tuple[int, tuple[int, ...]], ...]

    @property
    def seats(self) -> tuple[int, ...]:
        return tuple(p.id for p in self.final.players)


@dataclass
class _Transition:
    t_ns: int
    state: State
    effects: Sequence[Effect]


def timeline(settings: Settings, inputs: Iterable[Input], *, lobby: bool = True) -> Timeline:
    """The game's history; its `final` state is what `replay` makes of the same inputs."""
    state = new_game(settings, lobby=lobby)
    path = [_Transition(0, state, ())]  # the transitions that stand, oldest first
    for inp in inputs:
        # A timer fires at its own deadline (before the input, in step): one transition a
        # step, so that UNDO finds the state it goes back to on the path.
        while (deadline := state.deadline) is not None and deadline <= inp.t_ns:
            state = _advance(path, settings, state, Tick(deadline))
        state = _advance(path, settings, state, inp)
    return _read(path)


def _advance(path: list[_Transition], settings: Settings, state: State, inp: Input) -> State:
    new, effects = step(settings, state, inp)
    if new is state:
        return state
    if any(isinstance(e, Undone) for e in effects):
        # Back to the state before the step undone: what came after it no longer stands.
        while path[-1].state is not state.previous:
            path.pop()
        if new.previous is state.previous:
            # A judge's press overruling the camera's verdict: taken back, and a step
            # of its own from the state before it (engine._overrule).
            path.append(_Transition(inp.t_ns, new, effects))
        else:
            path[-1].state = new  # its timers started again; the same history
    else:
        on_its_way = new.previous
        if on_its_way is not None and on_its_way is not state and on_its_way is not state.previous:
            # A step from a change made on its way (the camera's verdict, from the call
            # with the cards it saw): UNDO goes back to that change, so it is on the path.
            path.append(_Transition(inp.t_ns, on_its_way, ()))
        path.append(_Transition(inp.t_ns, new, effects))
    return new


def _read(path: Sequence[_Transition]) -> Timeline:
    started_ns: int | None = None
    rulings: list[list[Ruling]] = []
    rounds: list[RoundRecord] = []
    scores: list[tuple[int, tuple[int, ...]]] = []
    for one in path:
        t = one.t_ns
        if started_ns is None and one.state.phase is not Phase.LOBBY:
            started_ns = t
        for e in one.effects:
            match e:
                case CallOpened():
                    rulings.append([])
                case Judged(player=seat, judgement=judgement, delta=delta):
                    rulings[-1].append(Ruling(seat, judgement, t, delta))
                    if judgement is Judgement.VALID and _first_valid(rounds):
                        rounds[-1] = replace(rounds[-1], winner=seat)
                case SharedCards(callers=callers):
                    rulings[-1].extend(Ruling(c, Judgement.SHARED, t, 0) for c in callers)
                case SuperOpened():
                    rounds.append(RoundRecord(opened_ns=t))
                case CountdownStarted(participants=who):
                    rounds[-1] = replace(rounds[-1], flip_ns=t, participants=who)
                case SuperCancelled():
                    rounds[-1] = replace(rounds[-1], end=RoundEnd.CANCELLED, ended_ns=t)
                case TimeUp(paid=paid):
                    rounds[-1] = replace(rounds[-1], end=RoundEnd.TIME_UP, ended_ns=t, paid=paid)
                case RoundEnded():
                    how = RoundEnd.ALL_OUT if rounds[-1].winner is None else RoundEnd.WON
                    rounds[-1] = replace(rounds[-1], end=how, ended_ns=t)
                case GameOver() if rounds and rounds[-1].end is RoundEnd.RUNNING:
                    # A SET taken in the countdown that ends the game won its round too.
                    how = RoundEnd.GAME_OVER if rounds[-1].winner is None else RoundEnd.WON
                    rounds[-1] = replace(rounds[-1], end=how, ended_ns=t)
        if started_ns is not None:
            points = tuple(p.points for p in one.state.players)
            if not scores or scores[-1][1] != points:
                scores.append((t, points))
    final = path[-1].state.alone()
    calls = tuple(
        CallRecord(call, tuple(times)) for call, times in zip(final.calls, rulings, strict=True)
    )
    return Timeline(final, started_ns, calls, tuple(rounds), tuple(scores))


def _first_valid(rounds: Sequence[RoundRecord]) -> bool:
    """Whether a valid verdict now is the first of a super round's countdown: its caller
    takes the three cards (a later tied caller's, nothing more)."""
    if not rounds:
        return False
    r = rounds[-1]
    return r.end is RoundEnd.RUNNING and r.flip_ns is not None and r.winner is None
