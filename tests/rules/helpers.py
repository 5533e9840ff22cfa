"""Play a replay script through the engine, keeping every effect (h11's test helper idea)."""

from referee.rules import Effect, Settings, State, new_game, parse_script, step


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
