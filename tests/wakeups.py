"""Does a thread sleep? The kernel counts every time a thread blocks (Linux /proc)."""

import threading
from pathlib import Path

import pytest


def thread_named(name: str) -> threading.Thread:
    found = [t for t in threading.enumerate() if t.name == name]
    assert len(found) == 1, f"expected one thread {name!r}, found {len(found)}"
    return found[0]


def wakeups(thread: threading.Thread) -> int:
    """How many times the thread has gone to sleep: each wake-up ends in one more."""
    return task_wakeups("self", thread.native_id)


def task_wakeups(pid: int | str, tid: int | None) -> int:
    """The same for any process's thread (its main thread: tid = pid)."""
    status = Path(f"/proc/{pid}/task/{tid}/status")
    if not status.exists():
        pytest.skip("needs Linux's /proc/PID/task to count a thread's wake-ups")
    for line in status.read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    raise AssertionError(f"no voluntary_ctxt_switches in {status}")


def assert_asleep(thread: threading.Thread, watch_s: float = 0.2) -> None:
    """The thread, once settled, does not wake at all while we watch."""
    quiet = threading.Event()
    quiet.wait(0.05)  # let it finish what it was doing and block
    before = wakeups(thread)
    quiet.wait(watch_s)
    assert wakeups(thread) == before, f"{thread.name} woke while nothing was due"
