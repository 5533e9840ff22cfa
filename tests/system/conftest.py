"""`make test-system` (tests/system/run.sh): the box installed and played on a booted Debian.

These tests run one after another on one machine and its one disk: each step builds on the
last (installed, rebooted, played, cut off). They run only through run.sh, which builds
the image and sets REFEREE_SYSTEM_TEST; `make test` skips them.
"""

import json
import os
import subprocess
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .audio import WavClock
from .machine import ROOT, Machine

ENABLED = bool(os.environ.get("REFEREE_SYSTEM_TEST"))
VM_DIR = Path(os.environ.get("VM_DIR", ROOT / "build" / "vm"))
OUT = Path(os.environ.get("SYSTEM_TEST_OUT") or ROOT / "build" / "system")
GUEST_FILES = ROOT / "tests" / "system" / "guest"


@dataclass
class Box:
    """The machine under test and what the steps found out, for the steps after."""

    disk: Path
    machine: Machine | None = None
    wav_clock: WavClock | None = None
    boots: int = 0
    findings: dict[str, object] = field(default_factory=dict)
    agent_after_s: list[float] = field(default_factory=list)

    def boot(self) -> Machine:
        self.boots += 1
        self.machine = Machine(VM_DIR / "image", self.disk, OUT, f"boot{self.boots:02}")
        if self.wav_clock is not None:
            self.wav_clock.close()
        self.wav_clock = WavClock(self.machine.wav)
        self.agent_after_s.append(round(self.machine.wait_agent(600), 1))
        return self.machine

    @property
    def vm(self) -> Machine:
        assert self.machine is not None, "the machine is not running"
        return self.machine

    def shutdown(self) -> None:
        if self.machine is not None:
            self.machine.kill()
            self.machine = None


def pins() -> dict[str, int]:
    """The buttons' lines: the pin map's defaults, as the installed settings hold them."""
    with (ROOT / "referee.example.toml").open("rb") as f:
        named = tomllib.load(f)["pins"]
    return {button: int(pin.removeprefix("GPIO")) for button, pin in named.items() if pin}


@pytest.fixture(scope="session")
def box() -> Iterator[Box]:
    OUT.mkdir(parents=True, exist_ok=True)
    disk = OUT / "disk.img"
    # SYSTEM_TEST_DISK: start from another disk, one a run already installed on, to work on
    # the later steps without the install's quarter of an hour (deselect the install then).
    start = os.environ.get("SYSTEM_TEST_DISK") or VM_DIR / "image" / "rootfs.img"
    subprocess.run(["cp", "--sparse=always", str(start), str(disk)], check=True)
    state = Box(disk)
    try:
        yield state
    finally:
        state.shutdown()
        state.findings["agent_answers_after_boot_s"] = state.agent_after_s
        (OUT / "findings.json").write_text(json.dumps(state.findings, indent=1))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not ENABLED:
        return
    passed = len(terminalreporter.stats.get("passed", []))
    failed = len(terminalreporter.stats.get("failed", [])) + len(
        terminalreporter.stats.get("error", [])
    )
    terminalreporter.write_line(f"test-system: {passed} passed, {failed} failed")
