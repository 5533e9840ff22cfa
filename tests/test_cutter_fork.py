"""The clips' cutter forked at the daemon's start (referee/linux/children.py, CutterProcess.forked,
referee/audio/early.py): a child of the daemon's own process, before any thread, sharing its
pages, holding none of its descriptors; replaced by one started anew when it dies; gone
when the daemon is.

A fork needs a process with one thread, which a pytest-xdist worker is not: each fork is
made by a small program of its own, as `referee run` makes it at its start."""

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from referee.audio import pcm
from referee.audio.cutter import NICE
from referee.audio.cutter_process import CutterProcess
from referee.audio.early import fork_cutter
from referee.config import default_config
from referee.linux import children
from referee.linux.children import ThreadsRunning

from .conftest import ROOT
from .processes import wait_in_file
from .test_terminal_play import Terminal

NICE_MOST = 19  # the most a niceness may be on Linux (setpriority(2)): more is taken as 19

RUN_S = 120.0  # a program importing numpy, forking, cutting a clip or two, on a busy machine
ENDS_S = 10.0

# A daemon's start: its imports, a descriptor of its own (its store's, say), the fork,
# then its threads; the forked cutter looked at from outside, told of a window, stopped.
FORKS_FIRST = """
import json, os, signal, sys, threading
from pathlib import Path
from referee.audio.cutter_process import CutterProcess
from tests.test_cutter import RATE, window

folder = Path(sys.argv[1])
held = os.open(folder.parent, os.O_RDONLY)
cutter = CutterProcess.forked()
threading.Thread(target=threading.Event().wait, daemon=True).start()
ready = cutter.ready(folder, 10**9, RATE, 60)
proc = Path(f"/proc/{cutter.pid}")
status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines())
rollup = {}
for line in (proc / "smaps_rollup").read_text().splitlines()[1:]:
    name, _, value = line.partition(":")
    rollup[name] = int(value.split()[0])
seen = {
    "ppid": int(status["PPid"]),
    "pgid": os.getpgid(cutter.pid),
    "fds": sorted(int(fd) for fd in os.listdir(proc / "fd")),
    "same_command": (proc / "cmdline").read_bytes() == Path("/proc/self/cmdline").read_bytes(),
    "nice": [os.getpriority(os.PRIO_PROCESS, pid) for pid in (0, cutter.pid)],
    "ignored": int(status["SigIgn"], 16),
    "shared_kb": rollup["Shared_Clean"] + rollup["Shared_Dirty"],
    "rss_kb": rollup["Rss"],
}
said = cutter.cut(window(), 60)
cutter.stop(60)
print(json.dumps({"daemon": os.getpid(), "cutter": cutter.pid, "ready": ready, "seen": seen,
                  "said": said, "code": cutter.process.returncode, "how": cutter.how}))
"""

# The clips' writer given the forked cutter; it dies (killed) and one started anew cuts on.
WRITER_TAKES_IT = """
import json, logging, os, sys
from pathlib import Path
from referee.audio.capture import Capture
from referee.audio.clip_writer import ClipWriter
from referee.audio.clips import ClipStore, ClipWindow
from referee.audio.cutter_process import CutterProcess
from tests.fake_capture import NS_PER_S, FakeCard
from tests.test_clip_writer import START_NS, call, killed

logging.basicConfig(level=logging.INFO, format="%(message)s")
cutter = CutterProcess.forked()
card = FakeCard(seed=6)
capture = Capture(card)
told = []
clips = ClipWriter(
    capture,
    ClipStore(Path(sys.argv[1]), max_bytes=10**9),
    window=ClipWindow(NS_PER_S, 2 * NS_PER_S),
    told=told.append,
    clock=lambda: card.now_ns,
    cutter=cutter,
)
assert clips.warm.wait(60)
first = clips.cutter_pid
call(card, capture, clips, START_NS + 2 * NS_PER_S)
killed(first)
call(card, capture, clips, START_NS + 6 * NS_PER_S)
second = clips.cutter_pid
command = Path(f"/proc/{second}/cmdline").read_bytes().split(b"\\0")
call(card, capture, clips, START_NS + 10 * NS_PER_S)
clips.close()
print(json.dumps({"forked": cutter.pid, "first": first, "second": second,
                  "second_runs": [c.decode() for c in command if c][-2:], "told": told,
                  "saved": clips.saved, "lost": clips.lost}))
"""

# A daemon killed (a crash, SIGKILL) once its cutter is ready.
DIES = """
import os, signal, sys
from pathlib import Path
from referee.audio.cutter_process import CutterProcess

cutter = CutterProcess.forked()
assert cutter.ready(Path(sys.argv[1]), 10**9, 48_000, 60)
print(cutter.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def program(text: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", text, *args],
        capture_output=True,
        text=True,
        timeout=RUN_S,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


def ends(pid: int, timeout_s: float) -> bool:
    """Whether a process (not a child of this one) ends within timeout_s."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], timeout_s)[0])
    finally:
        os.close(pidfd)


def test_it_is_the_daemons_own_process_and_holds_none_of_its_descriptors(tmp_path):
    done = program(FORKS_FIRST, str(tmp_path / "clips"))
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    seen = said["seen"]
    assert said["ready"] and said["how"] == "forked at the daemon's start"
    # Forked, not started anew: the daemon's child, running the daemon's command line.
    assert seen["ppid"] == said["daemon"] and seen["same_command"]
    # Its own process group (a Ctrl-C in the daemon's terminal is the daemon's), its pipes
    # and nothing else of the daemon's (a store's lock held by it would outlive the daemon).
    assert seen["pgid"] == said["cutter"]
    assert seen["fds"] == [0, 1, 2]
    # NICE over the daemon's, as far as Linux allows: it caps a niceness at 19, and a
    # suite run under `nice -n 10` starts the daemon at 10.
    daemon_nice, cutter_nice = seen["nice"]
    assert cutter_nice == min(daemon_nice + NICE, NICE_MOST)
    stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
    assert all(seen["ignored"] >> (sig - 1) & 1 for sig in stops)
    # Most of what it holds it shares with the daemon: the interpreter, numpy, the code.
    assert seen["shared_kb"] > seen["rss_kb"] / 2
    assert said["said"]["onsets"] == 1 and said["said"]["saved"].startswith("game00001-call")
    assert said["code"] == 0
    assert sorted(p.suffix for p in (tmp_path / "clips").iterdir()) == [".json", ".wav"]


def test_one_that_dies_is_replaced_by_one_started_anew(tmp_path):
    """The daemon runs threads by then: it is not forked again."""
    done = program(WRITER_TAKES_IT, str(tmp_path / "clips"))
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["first"] == said["forked"]
    assert said["second_runs"] == ["-m", "referee.audio.cutter"]
    assert said["told"] == [
        "clips: 1 lost (their cutter died: killed by SIGKILL); the ledger is whole"
    ]
    assert (said["saved"], said["lost"]) == (2, 1)
    log = done.stderr
    assert f"the clips' cutter: process {said['forked']}, forked at the daemon's start" in log
    assert f"the clips' cutter: process {said['second']}, started anew" in log


def test_it_ends_with_the_daemon(tmp_path):
    """Killed, the daemon closes nothing: the kernel closes the cutter's input."""
    done = program(DIES, str(tmp_path / "clips"))
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert ends(int(done.stdout), ENDS_S)


def test_no_fork_while_another_thread_runs():
    """Another thread may hold a lock (the allocator's, logging's) that the child would
    find held for ever; Python 3.12 warns of it. Nothing is forked, nothing is left open."""
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    fds = sorted(Path("/proc/self/fd").iterdir())
    try:
        with pytest.raises(ThreadsRunning, match=r"^\d+ threads run"):
            CutterProcess.forked()
    finally:
        release.set()
        thread.join()
    assert sorted(Path("/proc/self/fd").iterdir()) == fds


def test_the_daemon_forks_one_only_for_a_microphone_that_keeps_clips(monkeypatch, caplog):
    audio = default_config().audio
    monkeypatch.setattr(pcm, "find_capture_device", lambda: None)
    assert fork_cutter(replace(audio, microphone="off")) is None
    assert fork_cutter(replace(audio, microphone="plughw:1", clips_mb=0)) is None
    assert fork_cutter(replace(audio, microphone="auto")) is None  # no card captures
    # A thread runs (a bug of the start's order): not forked, said, and no clip lost: the
    # clips' writer starts one anew.
    monkeypatch.setattr(children, "threads", lambda: 2)
    assert fork_cutter(replace(audio, microphone="plughw:1")) is None
    assert "the clips' cutter is not forked, 2 threads run" in caplog.text


# Slow: the null device is read as fast as it gives, a core's whole time while the game
# is played (5 s of CPU, a tenth of the suite's on two cores).
@pytest.mark.slow
def test_referee_run_forks_it_before_any_thread(tmp_path):
    """`referee run` on ALSA's null device (silence, as fast as it is read): the log names
    the forked cutter, a call is given to the clips' writer, and `q` quits the daemon and
    its cutter (a device never read dry kept it from quitting). A daemon killed: above."""
    store = tmp_path / "referee.db"
    term = Terminal(tmp_path, store, '[audio]\nmicrophone = "null"\n')
    try:
        term.wait_for("PRESS YOUR BUZZER TO JOIN")
        log = tmp_path / "referee.log"
        found = re.search(
            r"the clips' cutter: process (\d+), forked at the daemon's start",
            wait_in_file(log, "forked at the daemon's start", timeout=RUN_S),
        )
        assert found is not None
        cutter = int(found[1])
        status = Path(f"/proc/{cutter}/status").read_text()
        assert f"PPid:\t{term.proc.pid}\n" in status
        for key, shown in (("1", "P1 ●"), ("2", "P2 ▲"), ("s", "FIND A SET"), ("1", "P1: SHOW")):
            term.press(key)
            term.wait_for(shown)
        # Read as fast as it is read, the null device is never read dry, so its pointer's
        # stamp is never taken: its samples have no times, and the call is heard in none
        # of them. Its clip was 0 samples, its press marked past the end.
        wait_in_file(log, "game 1's call: no clip, the microphone did not hear it", RUN_S)
        assert "not forked" not in log.read_text()
        assert term.quit() == 0
    finally:
        if term.proc.poll() is None:
            term.kill()
    assert ends(cutter, ENDS_S)


def test_a_box_without_a_microphone_loads_no_numpy_for_the_cutter():
    """`referee run` with the microphone `auto` and no card that captures: numpy was
    imported to fork a cutter that was not forked, and stayed in the daemon's memory."""
    probe = (
        "import sys\n"
        "from referee.audio import early, pcm\n"
        "from referee.config import default_config\n"
        "pcm.find_capture_device = lambda: None\n"
        "assert early.fork_cutter(default_config().audio) is None\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
