"""The main loop's one wait (referee/daemon/mux.py): asleep, or awake for a press."""

import os
import subprocess
import sys
import threading
import time

import pytest

from referee.daemon.mux import Inputs
from referee.inbox import Inbox, Quit
from referee.inputs.keyboard import TerminalKeys
from tests.conftest import ROOT
from tests.wakeups import wakeups

MS = 1_000_000


@pytest.fixture
def inputs():
    read, write = os.pipe()
    made = Inputs([TerminalKeys(read)], Inbox())
    yield made, write
    made.close()
    os.close(write)


# In a process of its own: another thread of the test run taking the GIL mid-wait would
# put this one to sleep for the GIL, which is no sleep of the wait's.
AWAKE = """
import os, threading, time
from referee.inbox import Inbox
from referee.inputs.keyboard import TerminalKeys
from referee.daemon.mux import Inputs
from tests.wakeups import wakeups
read, write = os.pipe()
inputs = Inputs([TerminalKeys(read)], Inbox())
me = threading.current_thread()
before, started = wakeups(me), time.monotonic_ns()
got = inputs.wait(0.002, awake=True)
print(got, time.monotonic_ns() - started, wakeups(me) - before)
"""


def test_awake_the_wait_never_sleeps_and_still_ends_on_time():
    done = subprocess.run(
        [sys.executable, "-c", AWAKE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    got, waited_ns, slept = done.stdout.split()
    assert got == "[]" and int(waited_ns) >= 2 * MS
    assert int(slept) == 0  # it looked again and again: the kernel never put it to sleep


def test_awake_the_wait_ends_as_soon_as_news_comes(inputs):
    waiting, keys = inputs
    waiting.inbox.put(Quit("news"))
    os.write(keys, b"1")
    started = time.monotonic_ns()
    items = waiting.wait(10.0, awake=True)
    assert time.monotonic_ns() - started < 1_000 * MS
    # The sources first: a key is a tap, its press and its release.
    assert [type(i).__name__ for i in items] == ["Edge", "Edge", "Quit"]


def test_asleep_the_wait_blocks_in_the_kernel(inputs):
    waiting, _ = inputs
    me = threading.current_thread()
    before = wakeups(me)
    assert waiting.wait(0.002) == []
    assert wakeups(me) > before


def test_an_item_put_after_the_inbox_closed_goes_nowhere(tmp_path):
    """A sound's or the ledger's thread putting late must not write its wake-up byte into
    whatever files took the pipe's numbers."""
    inbox = Inbox()
    numbers = {inbox.fileno(), inbox._wake_w}
    inbox.close()
    files = [tmp_path / "a", tmp_path / "b"]
    reused = [os.open(f, os.O_WRONLY | os.O_CREAT) for f in files]
    try:
        assert set(reused) == numbers  # the lowest free numbers: the pipe's
        inbox.put(Quit("late"))
    finally:
        for fd in reused:
            os.close(fd)
    assert [f.read_bytes() for f in files] == [b"", b""]
