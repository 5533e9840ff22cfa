"""Plausible games, as a table plays them: calls mostly judged valid, photo finishes, a
few mistakes, timeouts, super rounds and UNDOs, until the deck runs out and the end."""

import random

from referee.rules import (
    End,
    Input,
    Phase,
    Press,
    RuleSet,
    Settings,
    Super,
    Undo,
    Verdict,
    new_game,
    step,
)
from referee.units import NS_PER_MS, NS_PER_S


def table_game(
    settings: Settings, seed: int, *, calls: int = 30, end: bool = True, valid: float = 0.75
) -> list[Input]:
    """The inputs of a game of about `calls` calls, every seat playing from the start,
    each verdict valid with the odds `valid`."""
    rng = random.Random(seed)
    state = new_game(settings, lobby=False)
    seats = [p.id for p in state.players]
    t = 0
    inputs: list[Input] = []

    def play(inp: Input) -> None:
        nonlocal state
        state, _ = step(settings, state, inp)
        inputs.append(inp)

    while len(inputs) < calls * 4 and state.phase is not Phase.OVER:
        t += rng.randint(2, 40) * NS_PER_S // 4
        phase = state.phase
        if rng.random() < 0.03 and inputs:
            play(Undo(t))
        elif phase is Phase.OPEN:
            if rng.random() < 0.08 and settings.rules is not RuleSet.SOLITAIRE:
                play(Super(t))
            else:
                _race(play, rng, rng.sample(seats, len(seats)), t)
        elif phase in (Phase.CALL, Phase.SUPER_CALL):
            if rng.random() < 0.05:
                t += settings.pointout_ns or 0  # too late: a timeout at the next input
            play(Verdict(valid=rng.random() < valid, t_ns=t))
        elif phase is Phase.SUPER_JOIN:
            for s in rng.sample(seats, rng.randint(0, len(seats))):
                play(Press(s, t))
                t += NS_PER_MS
            play(Super(t))
        elif phase is Phase.SUPER_COUNTDOWN:
            assert state.super_round is not None
            if rng.random() < 0.3:
                t += settings.super_ns  # time up
            _race(play, rng, list(state.super_round.participants), t)
    if end and state.phase is not Phase.OVER:
        play(End(t + NS_PER_S))
    return inputs


def _race(play, rng: random.Random, seats: list[int], t: int) -> None:
    """A press, and often others a few milliseconds after it (the photo finish)."""
    for s in seats[: rng.randint(1, len(seats))]:
        play(Press(s, t))
        t += rng.randint(1, 20 * NS_PER_MS)
