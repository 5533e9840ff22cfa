"""What every benchmark says about the machine it ran on, and the small helpers they share."""

import contextlib
import math
import os
import platform
import random
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CPUIDLE_DRIVER = Path("/sys/devices/system/cpu/cpuidle/current_driver")
HALT_POLL_SETTING = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile, nearest rank (p99 of 1000 values is the 990th smallest)."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * p / 100)) - 1]


def store_dir(parent: str | None = None) -> tempfile.TemporaryDirectory:
    # On the disk by default, not in memory: the ledger's fsync is part of every decision,
    # as on a Pi.
    return tempfile.TemporaryDirectory(prefix="referee-bench-", dir=parent or "/var/tmp")


def machine() -> str:
    model = "unknown CPU"
    with Path("/proc/cpuinfo").open() as cpuinfo:
        for line in cpuinfo:
            if line.startswith(("model name", "Model")):
                model = line.split(":", 1)[1].strip()
                break
    os_name = platform.platform(terse=True)
    with Path("/etc/os-release").open() as release:
        for line in release:
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    return (
        f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{_pygame()}"
        f"{os_name}, kernel {platform.release()}"
    )


def _pygame() -> str:
    """pygame-ce's version and its SDL's, where the benchmark loads it."""
    pygame = sys.modules.get("pygame")
    if pygame is None:
        return ""
    sdl = ".".join(map(str, pygame.get_sdl_version()))
    return f"pygame-ce {pygame.version.ver} (SDL {sdl}), "


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min)"


def header(title: str) -> None:
    print(title)
    print(f"machine: {machine()}")
    print(f"at start: {load()}; GIL switch interval {sys.getswitchinterval() * 1000:g} ms")


def wake_overshoot_ms(sleeps: int = 1000, sleep_s: float = 0.0011) -> list[float]:
    """How late this machine wakes a thread from a timed select(), in ms: the floor under
    every timed wake-up of a benchmarked loop (a virtual machine's CPUs are sometimes
    taken by its host)."""
    late = []
    for _ in range(sleeps):
        start = time.monotonic_ns()
        select.select([], [], [], sleep_s)
        late.append((time.monotonic_ns() - start) / 1e6 - sleep_s * 1e3)
        time.sleep(random.uniform(0, 0.002))  # at a random phase of the host's ticks
    return late


def cpu_ticks() -> tuple[int, int]:
    """(stolen, all) of every CPU's time since boot, in ticks: `steal` is the time a
    virtual machine's host ran something else while this machine had work for the CPU."""
    with Path("/proc/stat").open() as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest time is counted in user)
    return fields[7], sum(fields[:8])


def stolen_percent(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of the CPUs' time the host took between two cpu_ticks() readings."""
    return 100 * (after[0] - before[0]) / max(1, after[1] - before[1])


@contextlib.contextmanager
def halt_polling(ns: int) -> Iterator[int | None]:
    """A virtual machine's idle CPUs polling for work `ns` before they halt (Linux's
    cpuidle-haltpoll driver), as a bare-metal CPU wakes from its idle in microseconds
    where a halted virtual one waits for its host to run it again. Yields the setting it
    replaced, or None where there is no such setting (no haltpoll, not root): nothing
    changed. The old setting is put back."""
    try:
        if CPUIDLE_DRIVER.read_text().strip() != "haltpoll":
            yield None
            return
        old = int(HALT_POLL_SETTING.read_text())
        HALT_POLL_SETTING.write_text(str(ns))
    except OSError:
        yield None
        return
    try:
        yield old
    finally:
        HALT_POLL_SETTING.write_text(str(old))


class Hogs:
    """A busy process on every core, for as long as the `with` lasts."""

    def __enter__(self) -> "Hogs":
        self.hogs = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(os.cpu_count() or 1)
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        for hog in self.hogs:
            hog.kill()
            hog.wait()
