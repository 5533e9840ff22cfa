"""The daemon's end of the clips' cutter (referee/audio/cutter_process.py): a real child
process, started anew as the daemon runs (as one that takes a dead one's place is),
answering or dying, and always stopped. The one forked at the daemon's start:
tests/test_cutter_fork.py."""

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from referee.audio.clips import ClipStore
from referee.audio.cutter import NICE
from referee.audio.cutter_process import CutterProcess

from .test_cutter import RATE, window

STARTS_S = 60.0  # a fresh interpreter importing numpy, on a busy machine


@pytest.fixture
def cutter():
    started = CutterProcess.spawned()
    yield started
    started.stop(5)


def test_it_runs_the_daemons_python_in_the_daemons_environment(tmp_path):
    """Under systemd that is the unit's: its sandbox, its user, its LG_WD. Its own process
    group: a Ctrl-C in the daemon's terminal reaches the daemon only."""
    environment = {k.encode(): v.encode() for k, v in os.environ.items()}
    cutter = CutterProcess.spawned()
    try:
        assert cutter.ready(tmp_path / "clips", 10**9, RATE, STARTS_S)
        proc = Path(f"/proc/{cutter.pid}")
        assert (proc / "exe").resolve() == Path(sys.executable).resolve()
        given = (proc / "environ").read_bytes().split(b"\0")
        # All of it; C libraries of this process may have added to it (curses: LINES).
        assert environment.items() <= dict(v.split(b"=", 1) for v in given if v).items()
        assert (proc / "cwd").readlink() == Path.cwd()
        assert os.getpgid(cutter.pid) == cutter.pid
        # A lower priority: on a busy CPU the daemon's loop goes first.
        own = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, cutter.pid) == min(19, own + NICE)
    finally:
        cutter.stop(5)


def test_it_cuts_a_window_and_stops_when_its_input_ends(cutter, tmp_path):
    assert cutter.ready(tmp_path / "clips", 10**9, RATE, STARTS_S)
    said = cutter.cut(window(), 30)
    assert said is not None and said["onsets"] == 1
    [kept] = ClipStore(tmp_path / "clips", max_bytes=10**9).clips()
    assert said["saved"] == kept.sound.name
    began = time.monotonic()
    cutter.stop(30)
    assert cutter.process.returncode == 0 and time.monotonic() - began < 5


def test_the_daemons_stop_signals_are_the_daemons_to_act_on(cutter, tmp_path):
    """systemd's stop sends SIGTERM to every process of the unit: the cutter saves the clip
    under way, and ends when the daemon closes it."""
    assert cutter.ready(tmp_path / "clips", 10**9, RATE, STARTS_S)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        os.kill(cutter.pid, sig)
    said = cutter.cut(window(), 30)
    assert said is not None and "saved" in said


def test_a_cutter_that_says_nothing_is_stopped(cutter, tmp_path):
    assert cutter.ready(tmp_path / "clips", 10**9, RATE, STARTS_S)
    os.kill(cutter.pid, signal.SIGSTOP)
    assert cutter.cut(window(), 0.5) is None
    assert cutter.ended() == "no answer in 0.5 s: stopped"
    assert cutter.process.returncode == -signal.SIGKILL


def test_a_cutter_that_crashes_says_why(cutter, tmp_path):
    # No rate: no sound to warm the detector with.
    assert not cutter.ready(tmp_path / "clips", 10**9, 0, STARTS_S)
    assert cutter.ended() == (
        "exit status 1: IndexError: index 0 is out of bounds for axis 0 with size 0"
    )


def test_a_cutter_the_daemon_never_needed_ends_without_a_word(cutter):
    """Stopped before it was told where clips go (the microphone did not open)."""
    began = time.monotonic()
    cutter.stop(30)
    assert cutter.process.returncode == 0 and time.monotonic() - began < 5
    cutter.stop(30)  # once more: nothing
