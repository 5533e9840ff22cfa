import logging
import os
from collections.abc import Iterator
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


@pytest.fixture(autouse=True)
def logging_as_it_was() -> Iterator[None]:
    """A command run in the test's process (`referee web`, `check-buttons`) points the root
    logger at the test's captured stderr: put it back, or a later test's log lines go to a
    closed stream ("--- Logging error ---" in its stderr)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
