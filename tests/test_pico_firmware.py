"""The Pico firmware (hardware/pico/main.py), off the Pico.

tests/pico_checks.py exercises the firmware's logic under CPython here and, when the
MICROPYTHON environment variable names a MicroPython (a unix port, or the WebAssembly
port: "node .../micropython.mjs"), under MicroPython too, with its interrupt handler
running on a locked heap. What only a Pico can show is in hardware/pico/README.md.
"""

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from referee.buttons import PIN_BUTTONS

PICO = Path(__file__).resolve().parent.parent / "hardware" / "pico"
FIRMWARE = PICO / "main.py"
CHECKS = Path(__file__).resolve().parent / "pico_checks.py"


def run_checks(interpreter: list[str], tmp_path: Path) -> str:
    program = tmp_path / "pico_checks_run.py"
    program.write_text(CHECKS.read_text() + f"\nrun({FIRMWARE.read_text()!r})\n", encoding="utf-8")
    done = subprocess.run(
        [*interpreter, str(program)], capture_output=True, text=True, timeout=60, check=False
    )
    # Some MicroPython runners exit 0 after a traceback: the closing line is what counts.
    assert done.returncode == 0 and "firmware checks passed" in done.stdout, (
        done.stdout + done.stderr
    )
    return done.stdout


def test_the_firmware_logic_under_cpython(tmp_path):
    assert run_checks([sys.executable], tmp_path).startswith("cpython")


@pytest.mark.skipif("MICROPYTHON" not in os.environ, reason="set MICROPYTHON to a MicroPython")
def test_the_firmware_logic_under_micropython(tmp_path):
    assert run_checks(shlex.split(os.environ["MICROPYTHON"]), tmp_path).startswith("micropython")


def firmware_constant(name: str):
    """A constant assigned at the firmware's top level, read without importing it."""
    match = re.search(rf"^{name} = (\(.*?\n\)|\d+)", FIRMWARE.read_text(), re.M | re.S)
    assert match, f"{name} not found in {FIRMWARE}"
    return ast.literal_eval(match.group(1))


def readme_table() -> dict[str, list[tuple[str, int]]]:
    """README.md's pin table: what -> [(name, GPIO number)]."""
    rows: dict[str, list[tuple[str, int]]] = {}
    for what, name, gpio in re.findall(
        r"^\| (button|LED|beeper) +\| (\S+) +\| GP(\d+) +\|", (PICO / "README.md").read_text(), re.M
    ):
        rows.setdefault(what, []).append((name, int(gpio)))
    return rows


def test_the_pins_are_the_readmes_table():
    table = readme_table()
    assert firmware_constant("BUTTON_PINS") == tuple(table["button"])
    assert firmware_constant("LED_PINS") == tuple(table["LED"])
    assert [("beeper", firmware_constant("BEEPER_PIN"))] == table["beeper"]


def test_the_firmware_knows_the_referees_buttons():
    assert tuple(name for name, _ in firmware_constant("BUTTON_PINS")) == PIN_BUTTONS
