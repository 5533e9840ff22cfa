"""The daemon's end of the clips' cutter (cutter.py): one child process, its pipes, its end.

Forked at the daemon's start (`forked`, before the daemon's first thread: it shares the
daemon's pages, referee/linux/children.py), or started with the daemon's own Python and
environment (`spawned`, for one that takes a dead one's place); either way in the
daemon's sandbox under systemd, and in a process group of its own: a Ctrl-C in the
daemon's terminal is the daemon's to act on, and the daemon closes it. Every wait on it
is bounded: a cutter that says nothing for too long is killed, and counts as dead.
"""

import contextlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from referee.linux import children
from referee.linux.children import Forked

from . import cutter
from .cutter import Reply, Window

log = logging.getLogger(__name__)


class CutterProcess:
    def __init__(self, process: "subprocess.Popen[bytes] | Forked", how: str) -> None:
        """process: a child running cutter.main on its pipes; how it came (for the log)."""
        self.process = process
        self.how = how
        assert self.process.stdin is not None
        # Written a bounded wait at a time (_send): a cutter that stopped reading cannot
        # hold the writer's thread.
        self._requests = self.process.stdin.fileno()
        os.set_blocking(self._requests, False)
        self._timeout_s = 0.0  # of the wait under way
        self._silent_s: float | None = None  # it said nothing for that long: killed

    @classmethod
    def forked(cls) -> "CutterProcess":
        """One forked from this process, which must run no other thread yet: at the
        daemon's start (ThreadsRunning otherwise; OSError if the fork failed)."""
        return cls(children.fork(cutter.main), "forked at the daemon's start")

    @classmethod
    def spawned(cls) -> "CutterProcess":
        """One started anew, `python -m referee.audio.cutter`; OSError if it cannot be."""
        process = subprocess.Popen(
            [sys.executable, "-m", "referee.audio.cutter"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,  # a crash's traceback, read once it ended
            process_group=0,
        )
        return cls(process, "started anew")

    @property
    def pid(self) -> int:
        return self.process.pid

    def ready(self, folder: Path, max_bytes: int, rate: int, timeout_s: float) -> bool:
        """Told where the clips go and the microphone's rate, until it has warmed its
        detector; False if it ended (or was killed) first."""
        deadline = self._deadline(timeout_s)
        said = cutter.setup(folder, max_bytes, rate)
        return self._send(said, deadline) and self._reply(deadline) is not None

    def cut(self, window: Window, timeout_s: float) -> Reply | None:
        """The window cut: what the cutter said, or None if it ended first."""
        deadline = self._deadline(timeout_s)
        if not (self._send(window.header(), deadline) and self._send(window.samples(), deadline)):
            return None
        return self._reply(deadline)

    def _send(self, data: bytes | memoryview, deadline: float) -> bool:
        """All of data, as fast as the cutter reads it (each blocked wait lets the GIL go);
        False if it ended, or read nothing more until the deadline (then it is killed)."""
        requests = self._requests
        view = memoryview(data)
        while view:
            if not select.select([], [requests], [], max(0.0, deadline - time.monotonic()))[1]:
                self._silent()
                return False
            try:
                view = view[os.write(requests, view) :]
            except BrokenPipeError:
                return False
        return True

    def _reply(self, deadline: float) -> Reply | None:
        replies = self.process.stdout
        assert replies is not None
        # One line answers each request, so nothing waits in the reader's buffer unseen.
        if not select.select([replies], [], [], max(0.0, deadline - time.monotonic()))[0]:
            self._silent()
            return None
        line = replies.readline()
        if not line.endswith(b"\n"):
            return None
        said: Reply = json.loads(line)
        for level, name, message in said.pop("log", ()):
            logging.getLogger(name).log(level, "%s", message)
        return said

    def _deadline(self, timeout_s: float) -> float:
        self._timeout_s = timeout_s
        return time.monotonic() + timeout_s

    def _silent(self) -> None:
        self._silent_s = self._timeout_s
        self.kill()

    def ended(self) -> str:
        """Once it ended (or was killed): how, in a few words, its crash's last line too;
        the whole of what it wrote on its standard error goes to the log."""
        code = self.process.wait()
        assert self.process.stderr is not None
        crash = self.process.stderr.read().decode(errors="replace").strip()
        self._close_pipes()
        if crash:
            log.warning("the clips' cutter (process %d) wrote: %s", self.pid, crash)
        if self._silent_s is not None:
            return f"no answer in {self._silent_s:g} s: stopped"
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        return f"{how}: {crash.splitlines()[-1]}" if crash else how

    def kill(self) -> None:
        """At once, from any thread: what waits on it sees its end."""
        if self.process.returncode is None:
            self.process.kill()

    def stop(self, timeout_s: float) -> None:
        """Its input closed: it ends once the clip it cuts is saved, or is killed after
        timeout_s. Once more, it does nothing."""
        process = self.process
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # what waited for an ended cutter
            process.stdin.close()
        children.wait_or_kill(process, timeout_s, "the clips' cutter")
        self._close_pipes()

    def _close_pipes(self) -> None:
        process = self.process
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                with contextlib.suppress(BrokenPipeError):  # what waited for an ended cutter
                    pipe.close()
