"""The daemon's end of the camera's process (watch.py): started, read, kept alive.

The camera's process is started as the page's is (daemon/page_process.py): a new Python
running `referee.camera.watch`, in a process group of its own, dying with the daemon
(children.die_with_parent); the daemon imports neither OpenCV nor numpy for it, so its
memory is the same with the camera on. A thread of the daemon reads its output, a line at a
time (framing.py) and each line checked (wire.parse): a frame's reading goes to the main
loop's inbox as a `Seen`, the camera lost or back as a `SourceStatus`; a line too long or
not the wire's is dropped with one line in the log. Of the readings that came together only
the last is handed on: a process that floods its pipe costs the loop one item a read. One
that ends is told and started again, RESTART_S later and twice as long each time it ends
again soon, up to RESTART_MAX_S (children.Backoff, the page's figures).

Given the clips' folder and budget, the process writes each call's snapshot there (snapshot.py)
when `snap` says so: a line on its input, written without blocking (a process that does
not read it loses the snapshot, never the loop's time).
"""

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from referee.framing import LineFramer
from referee.inbox import InboxItem, Seen, SourceStatus, Unread
from referee.linux.children import Backoff, Stop, how_it_ended, parent_env, wait_or_kill

from .wire import CAMERA, MAX_LINE, BadLine, parse

log = logging.getLogger(__name__)

STOP_S = 2.0
RESTART_S = 1.0
RESTART_MAX_S = 60.0
SETTLED_S = 60.0
READ_SIZE = 65_536
PROCESS = "process"  # the condition of its SourceStatus when the process itself ended
# numpy's OpenBLAS starts a thread a core at its import (it reads these then), OpenCV is
# held to one by the process itself: the camera takes one core at most.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


class CameraProcess:
    """The camera's process on `source` (the settings' [camera] source), for as long as
    it is not closed; what it says goes to `put` (the inbox's), from a thread of its own.
    `watching`: the camera gives frames now (the screens' mark)."""

    def __init__(
        self,
        source: str,
        put: Callable[[InboxItem], None],
        *,
        restart_s: float | None = None,
        command: list[str] | None = None,
        from_thread: bool = False,
        snapshots: tuple[Path, int] | None = None,
    ) -> None:
        """command: the process's command line (the tests' hostile ones); by default
        `python -m referee.camera.watch SOURCE`. from_thread: started by the reader's
        thread, not this one (the main loop, which a fork would hold for milliseconds).
        snapshots: the clips' folder and their budget in bytes, where it writes each
        call's snapshot."""
        self.source = source
        self.command = command or [sys.executable, "-m", "referee.camera.watch", source]
        if snapshots is not None:
            self.command += [str(snapshots[0]), str(snapshots[1])]
        self.put = put
        self.watching = False
        self._lost_told = False  # a loss of the camera was told: its return is told too
        self._backoff = Backoff(restart_s or RESTART_S, RESTART_MAX_S, SETTLED_S)
        self._lock = threading.Lock()  # a process started or stopped, not both at once
        self._stopping = False
        self._stop = Stop()
        # Started by the main thread (or the reader: from_thread), and again by the reader,
        # which lives as long as the daemon: the process's death signal is bound to the
        # thread that started it.
        self.process: subprocess.Popen[bytes] | None = None
        if not from_thread:
            self._try_start()
        self._reader = threading.Thread(
            target=self._run, args=(from_thread,), name="camera", daemon=True
        )
        self._reader.start()

    def _try_start(self) -> "subprocess.Popen[bytes] | None":
        """The process started; None if it cannot be (told: tried again later)."""
        try:
            process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=dict(os.environ, **ONE_THREAD, **parent_env()),
                process_group=0,  # a Ctrl-C in the daemon's terminal is the daemon's
            )
        except OSError as err:
            said = f"the camera's process cannot be started ({err}): tried again later"
            log.error("%s", said)
            self.put(SourceStatus(CAMERA, said, ok=False, condition=PROCESS))
            return None
        assert process.stdin is not None
        os.set_blocking(process.stdin.fileno(), False)  # the loop writes to it: never waits
        self.process = process
        log.info("camera %s: read by process %d", self.source, process.pid)
        return process

    def _run(self, start: bool) -> None:
        with self._lock:
            process = self._try_start() if start and not self._stopping else self.process
        while True:
            if process is None:  # it could not be started
                delay = self._backoff.after()
            else:
                started = time.monotonic()
                if self._read(process):
                    return
                process.kill()  # its output closed, it tells nothing more: ended, if not yet
                code = process.wait()
                self.watching = False
                if self._stopping:
                    return
                delay = self._backoff.after(time.monotonic() - started)
                said = f"the camera's process {process.pid} ended ({how_it_ended(code)}):"
                said += f" started again in {delay:g} s"
                log.warning("%s", said)
                self.put(SourceStatus(CAMERA, said, ok=False, condition=PROCESS))
            if self._stop.wait(timeout_s=delay) is None:
                return
            with self._lock:
                if self._stopping:
                    return
                process = self._try_start()
            if process is not None:
                self.put(SourceStatus(CAMERA, "the camera's process started again", True, PROCESS))

    def _read(self, process: "subprocess.Popen[bytes]") -> bool:
        """Its lines until its output ends (False), or the daemon stops (True)."""
        assert process.stdout is not None
        out = process.stdout.fileno()
        lines = LineFramer(MAX_LINE)
        while True:
            if self._stop.wait([out]) is None:
                return True
            data = os.read(out, READ_SIZE)
            if not data:
                process.stdout.close()
                return False
            self._take(lines.feed(data))

    def _take(self, lines: list[bytes]) -> None:
        """Each line checked; of the readings in a row only the last is handed on, before
        the status that follows it: handed on after a loss, it said the camera watched."""
        last: Seen | None = None
        for line in lines:
            try:
                said = parse(line)
            except BadLine as err:
                log.warning("camera: a line from its process refused: %s", err)
                continue
            if isinstance(said, Seen):
                last = said
                continue
            if last is not None:
                self._seen(last)
                last = None
            if isinstance(said, Unread):  # for the phone that sent it, through the loop
                self.put(said)
            else:
                self._status(said)
        if last is not None:
            self._seen(last)

    def _seen(self, seen: Seen) -> None:
        self.watching = True
        self.put(seen)

    def snap(self, name: str, t_ns: int) -> None:
        """Ask for the snapshot of the call `name` first pressed at t_ns (monotonic), from
        the main loop: a line of some 50 bytes written at once, or lost (said in the log)
        if the process is not there to take it now."""
        process = self.process
        try:
            if process is None or process.stdin is None:
                raise BrokenPipeError("no camera process now")
            os.write(process.stdin.fileno(), f"snap {name} {t_ns}\n".encode())
        except (OSError, ValueError) as err:  # its pipe full, closed, or it is gone
            log.warning("camera: the snapshot of %s is lost: %s", name, err)

    def _status(self, status: SourceStatus) -> None:
        """The camera lost, or watching: the first opening is only logged (the process
        logs it), its return after a loss told, for the screen's notice to go."""
        self.watching = status.ok
        if status.ok and not self._lost_told:
            return
        self._lost_told = not status.ok
        self.put(status)

    def close(self) -> None:
        with self._lock:
            self._stopping = True
            process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            wait_or_kill(process, STOP_S, "the camera's process")
        self._stop.stop()
        self._reader.join()
        if process is not None:
            for pipe in (process.stdout, process.stdin):
                if pipe is not None:
                    pipe.close()
        self._stop.close()
