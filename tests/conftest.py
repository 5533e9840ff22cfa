import os
from pathlib import Path

import pytest

# Every test is headless: SDL reads these when a display or the mixer opens.
os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"

ROOT = Path(__file__).resolve().parent.parent
# The project's own replay scenarios, one per rule and fine point (docs/rules.md).
SCENARIOS = ROOT / "tests" / "scenarios"
# A working aid beside the repository, not part of it: tests that use it skip without it.
SHARED_SCENARIOS = ROOT.parent / "shared" / "scenarios"


@pytest.fixture(autouse=True)
def in_an_empty_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """`referee` reads ./referee.toml: every test runs in an empty folder of its own, not
    where a developer keeps one (README.md, "Settings", says to write it in the clone)."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
