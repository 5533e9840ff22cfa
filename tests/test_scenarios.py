"""Every replay scenario meets its expectations, through the engine and `referee replay`.

The project's own scenarios live in tests/scenarios/; the shared ones beside the
repository (../shared/scenarios) run too when they are there. A scenario is a replay
script whose comment lines say what must be true at that point of the script:

    # expect phase=open bank=2 points=0,1,0 locked=none
    # => ignored: P2 is locked

`# expect` checks the state after the inputs above it (keys below); `# =>` says that
one of the effects of the input just above contains that text (the reason an input was
refused, what a step undid). The last `# expect` lines check the final state, which must
also be what `referee replay` prints.

A scenario in tests/scenarios/refused/ ends in a line that no script may have: its last
comment, `# refused: TEXT`, says that the line just above it stops the replay with exit
status 2 and `FILE:LINE: ...TEXT...`; the state before it is checked as in any other.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee import faces
from referee.cli import main
from referee.rules import Effect, ScriptError, new_game, parse_script, report, step

from .conftest import SCENARIOS, SHARED_SCENARIOS

OWN = sorted([*SCENARIOS.glob("*.txt"), *SCENARIOS.glob("refused/*.txt")])


def _cases() -> list[Any]:
    cases = [pytest.param(path, id=str(path.relative_to(SCENARIOS))) for path in OWN]
    if SHARED_SCENARIOS.is_dir():
        return cases + [
            pytest.param(path, id=f"shared/{path.name}")
            for path in sorted(SHARED_SCENARIOS.glob("*.txt"))
        ]
    reason = f"no shared scenarios at {SHARED_SCENARIOS} (a clone without ../shared)"
    return [*cases, pytest.param(None, id="shared", marks=pytest.mark.skip(reason=reason))]


@dataclass(frozen=True)
class Check:
    line: int
    kind: str  # "expect", "says" or "refused"
    text: str


def checks(text: str) -> list[Check]:
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("# expect "):
            found.append(Check(number, "expect", line.removeprefix("# expect ").strip()))
        elif line.startswith("# => "):
            found.append(Check(number, "says", line.removeprefix("# => ").strip()))
        elif line.startswith("# refused: "):
            found.append(Check(number, "refused", line.removeprefix("# refused: ").strip()))
    return found


def refused_line(text: str, refusal: Check) -> int:
    """The line a `# refused:` check is about: the last one above it with more than a comment."""
    lines = text.splitlines()[: refusal.line - 1]
    return max(n for n, line in enumerate(lines, start=1) if line.partition("#")[0].strip())


def _numbers(text: str) -> list[int]:
    return [] if text == "none" else [int(n) for n in text.split(",")]


def _words(text: str) -> list[str]:
    return [] if text == "none" else text.split(",")


def _last_call(state: dict[str, Any]) -> dict[str, Any]:
    assert state["calls"], "no call yet"
    call: dict[str, Any] = state["calls"][-1]
    return call


def _card(card: dict[str, Any]) -> str:
    """A card of the state's `seen` in the ledger's word."""
    face = [values.index(card[name]) for name, values in faces.ATTRIBUTES]
    return faces.code(face) + ("" if card["sure"] else "?")


def observed(state: dict[str, Any], key: str, want: str) -> tuple[Any, Any]:
    """(what the state says, what the expectation says) for one `key=value`."""
    players = state["players"]
    match key:
        case "phase" | "result":
            return state.get(key, "none"), want
        case "bank" | "deal" | "dealer" | "deck" | "table" | "owed":
            # none: the state has no such key (a lobby's deck, say: docs/rules.md)
            return state.get(key, "none"), want if want == "none" else int(want)
        case "points":
            return [p["points"] for p in players], _numbers(want)
        case "locked":
            return [p["id"] for p in players if p["locked"]], _numbers(want)
        case "calls":
            return len(state["calls"]), int(want)
        case "callers":
            return _last_call(state)["callers"], _numbers(want)
        case "verdicts":
            return _last_call(state)["verdicts"], _words(want)
        case "presses":
            pairs = [pair.split(":") for pair in _words(want)]
            return _last_call(state)["presses"], [[int(p), float(ms)] for p, ms in pairs]
        case "places":  # each player's place in the ranking, player 1 first
            place = {r["id"]: r["place"] for r in state.get("ranking", [])}
            return [place.get(p["id"]) for p in players], _numbers(want)
        case "deals":  # the points each player scored in each deal: 1,0/2,-1 for two deals
            return state.get("deals"), [_numbers(deal) for deal in want.split("/")]
        case "seen":  # the cards the camera saw taken in the ledger's words: 1rSo,2gTd,3pOs?
            seen = _last_call(state)["seen"]
            return (None if seen is None else [_card(c) for c in seen["cards"]]), (
                None if want == "none" else _words(want)
            )
        case "seen_set":  # whether they are a SET: true, false, or none (a card unsure)
            return str(_last_call(state)["seen"]["set"]).lower(), want
    raise AssertionError(f"unknown expectation {key!r}")


def check_state(where: str, state: dict[str, Any], expectation: str) -> None:
    for word in expectation.split():
        key, eq, want = word.partition("=")
        assert eq and want, f"{where}: expected key=value, got {word!r}"
        got, wanted = observed(state, key, want)
        assert got == wanted, f"{where}: {key} is {got}, expected {wanted}"


@pytest.mark.parametrize("script", _cases())
def test_scenario(script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = script.read_text(encoding="utf-8")
    todo = checks(text)
    refusal = next((c for c in todo if c.kind == "refused"), None)
    if refusal is None:
        assert any(c.kind == "expect" for c in todo), f"{script.name} has no # expect lines"
        parsed = parse_script(text)
    else:
        assert refusal is todo[-1], f"{script.name}: a refusal ends the scenario"
        line = refused_line(text, refusal)
        with pytest.raises(ScriptError) as caught:
            parse_script(text)
        assert caught.value.line == line and refusal.text in caught.value.message
        parsed = parse_script("\n".join(text.splitlines()[: line - 1]))
        todo.pop()
    settings, inputs = parsed.settings, parsed.inputs
    state = new_game(settings, lobby=parsed.lobby)
    effects: list[Effect] | None = None
    done = 0
    for check in todo:
        where = f"{script.name}:{check.line}"
        while done < len(inputs) and inputs[done][0] < check.line:
            state, effects = step(settings, state, inputs[done][1])
            done += 1
        if check.kind == "expect":
            check_state(where, report(settings, state), check.text)
            continue
        assert effects is not None, f"{where}: no input above to have said anything"
        said = [e.text for e in effects]
        assert any(check.text in s for s in said), f"{where}: the input said {said}"
    for _, inp in inputs[done:]:
        state, _ = step(settings, state, inp)
    code = main(["replay", str(script)])
    out, err = capsys.readouterr()
    if refusal is None:
        assert code == 0 and err == "" and json.loads(out) == report(settings, state)
    else:
        assert code == 2 and out == ""
        assert re.fullmatch(rf"{re.escape(str(script))}:{line}: .*\n", err), err
        assert refusal.text in err
