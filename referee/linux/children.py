"""The daemon's child processes (the page's server, the clips' cutter), ended in bounded time;
and a child forked at the daemon's start, which shares the daemon's pages.

A child started by `python -m ...` is a second interpreter that loads all it needs anew:
the clips' cutter so cost 23 MB of PSS, numpy's import most of it. Forked from the daemon
before the daemon's first thread, it shares what the daemon had loaded (the interpreter,
numpy, the detector's code) page by page, copied only where either one writes
(docs/design.md, "The microphone"). Forked with no other thread, it inherits no lock
that another thread held (the allocator's, logging's, the import lock), which is why
Python 3.12 warns about a fork in a threaded process: `fork` refuses one.
"""

import contextlib
import ctypes
import gc
import logging
import math
import os
import select
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, BinaryIO, NoReturn, Protocol

from .allocator import give_back_free_memory
from .signals import HANDLED

log = logging.getLogger(__name__)

TASKS = Path("/proc/self/task")

Main = Callable[[BinaryIO, BinaryIO], int]  # a forked child's life: its input, its output

# A child started with this in its environment (the daemon's pid) dies with the daemon.
PARENT = "REFEREE_PARENT"
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class Backoff:
    """How long to wait before the next try at something lost (a child that died, a camera
    unplugged): `first_s`, twice as long after each try that fails again soon, up to
    `most_s`; a try that lasted `settled_s` failed by accident, and starts again at first_s."""

    def __init__(self, first_s: float, most_s: float, settled_s: float = math.inf) -> None:
        self.first_s, self.most_s, self.settled_s = first_s, most_s, settled_s
        self._next_s = first_s

    def after(self, lasted_s: float = 0.0) -> float:
        """The wait before the next try, once a try failed after lasting lasted_s."""
        if lasted_s >= self.settled_s:
            self._next_s = self.first_s
        wait = self._next_s
        self._next_s = min(2 * wait, self.most_s)
        return wait

    def reset(self) -> None:
        """It works again: the next loss waits first_s."""
        self._next_s = self.first_s


def parent_env() -> dict[str, str]:
    """The environment of a child that is to die with this process (`die_with_parent`)."""
    return {PARENT: str(os.getpid())}


def die_with_parent() -> None:
    """In a child started with `parent_env`, first thing: killed by the kernel the moment
    the daemon ends, however it ends (SIGKILL, a crash, the OOM killer), so that nothing
    of it outlives the daemon (the page's process kept its port and served stale
    settings, and the daemon started again could not serve the page).

    PR_SET_PDEATHSIG, by the child itself once it runs: set between fork and exec it would
    be Python in a forked copy of a threaded daemon (subprocess's preexec_fn), where a lock
    another thread held is held for ever. The daemon may have died before this ran, and
    the child been given to another parent: then it ends here. The signal comes when the
    thread that started the child ends, so the daemon starts children from threads that
    live as long as it does (the main one, the page's watcher)."""
    parent = os.environ.pop(PARENT, None)
    if parent is None:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != int(parent):
        sys.stderr.write(f"the daemon that started this (process {parent}) is gone\n")
        os._exit(1)


class Child(Protocol):
    """What the daemon uses of a child process: subprocess.Popen's, or Forked's."""

    @property
    def pid(self) -> int: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


def wait_or_kill(process: Child, timeout_s: float, name: str) -> None:
    """Wait for a child told to end (a signal, its input closed); killed after timeout_s,
    said in the log: the daemon's own stop must stay quick."""
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        log.warning("%s did not stop in %g s: killed", name, timeout_s)
        process.kill()
        process.wait()


class Stop:
    """The daemon's stop, for the thread that watches a child: a pipe that select() sees,
    so that the thread waits for its child's news and for the stop in one wait."""

    def __init__(self) -> None:
        self._r, self._w = os.pipe()

    def wait(self, fds: Sequence[int] = (), timeout_s: float | None = None) -> list[int] | None:
        """The fds readable once one is or timeout_s passed ([]); None once stopped."""
        ready = select.select([*fds, self._r], [], [], timeout_s)[0]
        return None if self._r in ready else ready

    def stop(self) -> None:
        os.write(self._w, b"!")

    def close(self) -> None:
        """After the watching thread has ended."""
        os.close(self._r)
        os.close(self._w)


def how_it_ended(code: int) -> str:
    """How a child ended, from its exit status (negative: the signal that killed it)."""
    if code >= 0:
        return f"exit {code}"
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


class ThreadsRunning(RuntimeError):
    """A fork asked for in a process that runs more than one thread."""


def threads() -> int:
    """The threads of this process, the native ones too (OpenBLAS's, SDL's, libraries')."""
    try:
        return sum(1 for _ in TASKS.iterdir())
    except OSError:  # no /proc: Python's own threads at least
        return threading.active_count()


class Forked:
    """A forked child, from the daemon's side: as much of subprocess.Popen as the daemon
    uses (its pid, its three pipes, wait, kill, returncode)."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdin: IO[bytes] = os.fdopen(stdin, "wb")
        self.stdout: IO[bytes] = os.fdopen(stdout, "rb")
        self.stderr: IO[bytes] = os.fdopen(stderr, "rb")
        self.returncode: int | None = None
        # Readable once the child ended; a signal sent by it never reaches another process
        # that took the pid over.
        self._ended: int | None = os.pidfd_open(pid)
        self._reaping = threading.Lock()  # its end taken, or a signal sent: one at a time

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status (negative: the signal that killed it); TimeoutExpired if it has
        not ended within timeout seconds."""
        ended = self._ended
        if ended is not None and not select.select([ended], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(f"process {self.pid}", timeout or 0.0)
        with self._reaping:
            if self.returncode is None:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
                assert self._ended is not None
                os.close(self._ended)
                self._ended = None
            return self.returncode

    def kill(self) -> None:
        with self._reaping:
            if self._ended is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(self._ended, signal.SIGKILL)


def fork(main: Main) -> Forked:
    """A child process running main(its input, its output) and ending with what it returns,
    in a process group of its own (a Ctrl-C in the daemon's terminal is the daemon's), the
    daemon's signal handlers undone, no descriptor of the daemon's open but its three
    pipes (standard input, output and error: a crash's traceback). ThreadsRunning if this
    process runs another thread; OSError if the fork failed.

    The objects made so far are frozen first (gc.freeze), in both processes: a collection
    would write to every one of them, and so copy every page they share."""
    running = threads()
    if running != 1:
        raise ThreadsRunning(f"{running} threads run: a fork would copy their locks held")
    pipes = [os.pipe() for _ in range(3)]  # input, output, error: (read, write) each
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()  # what waits in a buffer is written once, not twice
    gc.freeze()
    try:
        pid = os.fork()
    except OSError:
        for pipe in pipes:
            for fd in pipe:
                os.close(fd)
        raise
    (in_r, in_w), (out_r, out_w), (err_r, err_w) = pipes
    if pid == 0:
        _child(main, in_r, out_w, err_w)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    return Forked(pid, in_w, out_r, err_r)


def _child(main: Main, stdin: int, stdout: int, stderr: int) -> NoReturn:
    """The forked child: never returns into the daemon's code, whatever happens."""
    code = 1
    try:
        os.setpgid(0, 0)
        for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, to)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        signal.set_wakeup_fd(-1)
        for sig in HANDLED:
            signal.signal(sig, signal.SIG_DFL)
        # The allocator's free chunks: the daemon reuses them as it goes on, and each
        # page it writes there would be copied for this child, which holds nothing in
        # them (0.6 MB here).
        give_back_free_memory()
        code = main(os.fdopen(0, "rb"), os.fdopen(1, "wb"))
    except BaseException:
        # On the error pipe, which the daemon reads once this ended; by the descriptor,
        # whatever the daemon had made of sys.stderr.
        with contextlib.suppress(BaseException):
            os.write(2, traceback.format_exc().encode(errors="replace"))
    finally:
        os._exit(code)
