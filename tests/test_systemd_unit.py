"""systemd/*.service: systemd accepts each unit, and each one's exposure stays at 2.0 or lower."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNITS = sorted((Path(__file__).resolve().parent.parent / "systemd").glob("*.service"))
ANALYZE = shutil.which("systemd-analyze")

pytestmark = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def analyze(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    return subprocess.run(
        [ANALYZE, "--no-pager", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def runnable_copy(folder: Path, unit: Path, text: str) -> Path:
    """The unit with ExecStart's program swapped for one that exists on this machine.

    verify fails on a missing program, and /opt/referee is only there on an installed box
    (test_install.py checks that the install puts the program at that path). Every other
    line is the unit's own.
    """
    program = "/opt/referee/bin/referee"
    assert f"\nExecStart={program} " in text
    copy = folder / unit.name
    copy.write_text(text.replace(f"\nExecStart={program} ", f"\nExecStart={sys.executable} "))
    return copy


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_verify_accepts_the_unit(tmp_path, unit):
    checked = analyze("verify", runnable_copy(tmp_path, unit, unit.read_text()))
    # verify exits 0 even for an unknown option, which it only prints: demand silence.
    assert (checked.returncode, checked.stdout + checked.stderr) == (0, "")


def test_verify_would_catch_a_misspelt_option(tmp_path):
    unit = UNITS[0]
    text = unit.read_text().replace("\nProtectHome=", "\nProtectHomes=")
    checked = analyze("verify", runnable_copy(tmp_path, unit, text))
    assert "ProtectHomes" in checked.stdout + checked.stderr


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_exposure_is_two_or_lower(unit):
    # --threshold is on the 0-100 scale that the report prints divided by ten.
    rated = analyze("security", "--offline=yes", "--threshold=20", unit)
    found = re.search(
        rf"Overall exposure level for {re.escape(unit.name)}: (\d+\.\d+)", rated.stdout
    )
    assert found, rated.stdout + rated.stderr
    assert float(found[1]) <= 2.0
    assert rated.returncode == 0, rated.stderr
