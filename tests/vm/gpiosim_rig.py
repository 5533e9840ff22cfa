"""Drive the Linux gpio-sim driver (configfs and sysfs) from tests in the project's guest.

    with SimChip(num_lines=28) as chip:      # makes /dev/gpiochipN
        chip.path                             # '/dev/gpiochip0'
        chip.set_input(17, 0)                 # pull line 17 low from outside: a press
        chip.get_value(17)                    # the level the chip sees

Line offsets are BCM numbers. Under emulation a sysfs write takes milliseconds: leave at
least 1 ms between toggles of one line. The guest puts this module on PYTHONPATH
(tests/vm/guest/usr/local/sbin/vm-rig-init); outside it, nothing imports it.
"""

import itertools
import os
import time
from pathlib import Path
from types import TracebackType

CONFIGFS = Path("/sys/kernel/config/gpio-sim")
_ids = itertools.count()


class SimChip:
    def __init__(
        self,
        num_lines: int = 28,
        label: str = "gpio-sim-rig",
        line_names: dict[int, str] | None = None,
        name: str | None = None,
    ) -> None:
        self.name = name or f"rig{os.getpid()}_{next(_ids)}"
        self.dir = CONFIGFS / self.name
        self.bank = self.dir / "bank0"
        self._lines = sorted((line_names or {}).items())
        self.dir.mkdir()
        self.bank.mkdir()
        (self.bank / "num_lines").write_text(str(num_lines))
        (self.bank / "label").write_text(label)
        for offset, line_name in self._lines:
            (self.bank / f"line{offset}").mkdir()
            (self.bank / f"line{offset}" / "name").write_text(line_name)
        (self.dir / "live").write_text("1")
        self.dev_name = (self.dir / "dev_name").read_text().strip()  # gpio-sim.N
        self.chip_name = (self.bank / "chip_name").read_text().strip()  # gpiochipM
        self.path = "/dev/" + self.chip_name
        self.sysfs = Path("/sys/devices/platform") / self.dev_name / self.chip_name
        self.num_lines = num_lines
        deadline = time.monotonic() + 1.0
        while not Path(self.path).exists() and time.monotonic() < deadline:
            time.sleep(0.005)  # devtmpfs makes the node asynchronously

    def pull_path(self, offset: int) -> str:
        return str(self.sysfs / f"sim_gpio{offset}" / "pull")

    def set_input(self, offset: int, level: int) -> None:
        """Drive the line from outside, as a button does."""
        Path(self.pull_path(offset)).write_text("pull-up" if level else "pull-down")

    def get_value(self, offset: int) -> int:
        return int((self.sysfs / f"sim_gpio{offset}" / "value").read_text())

    def close(self) -> None:
        if not self.dir.is_dir():
            return
        (self.dir / "live").write_text("0")
        for offset, _ in self._lines:
            (self.bank / f"line{offset}").rmdir()
        self.bank.rmdir()
        self.dir.rmdir()

    def __enter__(self) -> "SimChip":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
