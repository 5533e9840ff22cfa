"""Every shared scenario, run through `referee replay`, meets its `# expect` lines."""

import json
import subprocess
import sys

import pytest

from .conftest import SCENARIOS

SCRIPTS = sorted(SCENARIOS.glob("*.txt"))


def expectations(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# expect "):
            for word in line.removeprefix("# expect ").split():
                key, _, value = word.partition("=")
                found[key] = value
    return found


def test_the_scenarios_are_there():
    assert len(SCRIPTS) >= 10, f"expected the shared scenarios in {SCENARIOS}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_scenario(script):
    expect = expectations(script.read_text())
    assert expect, f"{script.name} has no # expect lines"
    done = subprocess.run(
        [sys.executable, "-m", "referee", "replay", str(script)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    for key, want in expect.items():
        match key:
            case "phase":
                assert state["phase"] == want
            case "bank":
                assert state["bank"] == int(want)
            case "points":
                assert [p["points"] for p in state["players"]] == [int(n) for n in want.split(",")]
            case "locked":
                locked = [p["id"] for p in state["players"] if p["locked"]]
                assert locked == ([] if want == "none" else [int(n) for n in want.split(",")])
            case "presses":
                pairs = [pair.split(":") for pair in want.split(",")]
                got = state["calls"][-1]["presses"]
                assert [(p, o) for p, o in got] == [(int(p), float(o)) for p, o in pairs]
            case _:
                pytest.fail(f"{script.name}: unknown expectation {key!r}")
