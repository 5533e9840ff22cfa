import os
from pathlib import Path

import pytest

# Every test is headless: SDL reads these when a display or the mixer opens.
os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
SCENARIOS = SHARED / "scenarios"


@pytest.fixture
def scenarios_dir() -> Path:
    if not SCENARIOS.is_dir():
        pytest.fail(f"the shared scenarios are missing: expected them at {SCENARIOS}")
    return SCENARIOS
