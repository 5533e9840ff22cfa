"""Play a replay script through the engine, keeping every effect (h11's test helper idea)."""

from collections.abc import Callable

from hypothesis import strategies as st

from referee.rules import (
    CameraVerdict,
    Card,
    Effect,
    Input,
    Seen,
    Settings,
    State,
    new_game,
    parse_script,
    step,
)
from referee.rules.inputs import Cards, makes_set

faces_st = st.tuples(*[st.integers(0, 2)] * 4)
# Any three cards the camera may see taken, each read surely or not.
cards_st: st.SearchStrategy[Cards] = st.tuples(*[st.builds(Card, faces_st, st.booleans())] * 3)


def play(text: str) -> tuple[Settings, State, list[Effect]]:
    script = parse_script(text)
    state = new_game(script.settings, lobby=script.lobby)
    effects: list[Effect] = []
    for _, inp in script.inputs:
        state, more = step(script.settings, state, inp)
        effects.extend(more)
    return script.settings, state, effects


def points(state: State) -> list[int]:
    return [p.points for p in state.players]


def camera_entry(cards: Cards) -> Callable[[int], Input]:
    """What the camera enters, judging with judge = "decide": its verdict on three cards
    read surely, else only what it saw."""
    sees = makes_set(cards)
    return lambda t: Seen(cards, t) if sees is None else CameraVerdict(sees, t, cards)
