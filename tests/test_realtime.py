"""referee/daemon/realtime.py: the loop's and the sound's threads at SCHED_FIFO, what they
start not."""

import os
import re
import threading
from pathlib import Path

import pytest

from referee.daemon import realtime

UNIT = Path(__file__).resolve().parent.parent / "systemd" / "referee.service"
FIFO = os.SCHED_FIFO


def policy(thread: int = 0) -> int:
    return os.sched_getscheduler(thread) & ~os.SCHED_RESET_ON_FORK


def in_a_thread(work) -> object:
    """work() on a thread of its own, so that this process's threads keep their priority."""
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(work()))
    thread.start()
    thread.join(10)
    return found[0]


def test_the_calling_thread_runs_first_and_what_it_starts_does_not():
    def work() -> tuple[str, int, int, int]:
        said = realtime.run_first(0)
        if "refused" in said:
            pytest.skip(f"not allowed here: {said}")
        started: list[int] = []
        child = threading.Thread(target=lambda: started.append(policy()))
        child.start()
        child.join(10)
        return said, policy(), os.sched_getparam(0).sched_priority, started[0]

    said, mine, priority, child = in_a_thread(work)  # type: ignore[misc]
    assert said == "the loop and the sound run first (SCHED_FIFO 10)"
    assert (mine, priority) == (FIFO, realtime.PRIORITY)
    assert child == os.SCHED_OTHER


def test_another_thread_named_by_its_id_runs_first():
    ready, done = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: (ready.set(), done.wait(10)))
    other.start()
    ready.wait(10)
    try:
        said = in_a_thread(lambda: realtime.run_first(other.native_id))
        if "refused" in str(said):
            pytest.skip(f"not allowed here: {said}")
        assert policy(other.native_id) == FIFO
        assert policy() == os.SCHED_OTHER  # this one untouched
    finally:
        done.set()
        other.join(10)


def test_no_thread_is_passed_over():
    said = in_a_thread(lambda: (realtime.run_first(None), policy()))
    assert said == ("the loop and the sound run first (SCHED_FIFO 10)", os.SCHED_OTHER)


def test_refused_it_says_so_and_how_to_allow_it(monkeypatch):
    def refuse(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    said = realtime.run_first(0)
    assert said == (
        "the loop and the sound at normal priority: SCHED_FIFO 10 refused (Operation not "
        "permitted); a press may wait for a busy CPU (systemd: LimitRTPRIO=10)"
    )


def test_the_unit_allows_the_priority_and_nothing_more():
    text = UNIT.read_text()
    assert re.search(rf"^LimitRTPRIO={realtime.PRIORITY}$", text, re.M)
    assert not re.search(r"^RestrictRealtime=yes", text, re.M)
    assert re.search(r"^SystemCallFilter=sched_setscheduler$", text, re.M)
