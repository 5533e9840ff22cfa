import os
from pathlib import Path

# Every test is headless: SDL reads these when a display or the mixer opens.
os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"

ROOT = Path(__file__).resolve().parent.parent
# The project's own replay scenarios, one per rule and fine point (docs/rules.md).
SCENARIOS = ROOT / "tests" / "scenarios"
# A working aid beside the repository, not part of it: tests that use it skip without it.
SHARED_SCENARIOS = ROOT.parent / "shared" / "scenarios"
