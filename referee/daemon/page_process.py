"""`referee run --web`: the page's server started beside the daemon, as a process of its own.

The daemon binds the address itself, so that a port in use or an address not this
computer's is one line it can show the table at once, and hands the listening socket to
`referee web` (serve.py, `inherited`). The page's process reads the store as it always
does (docs/design.md, "The page"): it never shares the daemon's loop, its GIL nor its
memory. It stops when the daemon stops, and dies with it however the daemon ends
(children.die_with_parent). One that dies while the daemon runs is seen by a thread
that waits on its pidfd, told to the table (`told`) and started again on the same
socket, which the daemon keeps: a phone's request waits in its backlog meanwhile. A
page that keeps dying is started again less and less often, RESTART_S to RESTART_MAX_S
apart. On a box, referee-web.service serves the page in its own sandbox instead, and
referee.service runs without `--web` (its lobby shows the address `[web] listen` names:
daemon/lobby.py).
"""

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from referee.errors import StartError
from referee.inbox import SourceStatus
from referee.linux.children import Backoff, Stop, how_it_ended, parent_env, wait_or_kill
from referee.page_socket import SOCKET_FD, address, bind, host_port

log = logging.getLogger(__name__)

STOP_S = 3.0  # the page's own stop takes a second (web/serve.py, GRACEFUL_S)
# A dead page is started again this long after it died, twice as long each time it dies
# again soon, up to RESTART_MAX_S; one that ran SETTLED_S had died by accident.
RESTART_S = 1.0
RESTART_MAX_S = 60.0
SETTLED_S = 60.0
PAGE = "the page"  # the source its SourceStatus names


class PageProcess:
    """The page's server at `listen` (HOST:PORT) on `store`, for as long as it is entered.

    `said`: what to tell the table: where the page is, or why it is not served;
    `listening`: HOST:PORT as bound (the port the system chose for port 0), while served;
    `told`: from the watching thread, the page died (and when it is started again), or
    serves again (the inbox's put: the lobby offers no dead page's address)."""

    def __init__(
        self,
        store: Path,
        config: Path | None,
        listen: str,
        told: Callable[[SourceStatus], None] = lambda status: None,
    ) -> None:
        self.store = store
        self.config = config
        self.listen = listen
        self.told = told
        self.process: subprocess.Popen[bytes] | None = None
        self.said = ""
        self.listening: str | None = None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()  # a process started or stopped, not both at once
        self._stopping = False
        self._stop = Stop()
        self._watcher: threading.Thread | None = None

    def __enter__(self) -> "PageProcess":
        try:
            self._sock = bind(self.listen)
        except StartError as err:
            self.said = f"{err}: the page is not served"
            log.warning("%s", self.said)
            return self
        self.said = f"the page on the phones: {address(self._sock)}"
        self.listening = host_port(self._sock)
        process = self._start()
        # Started by the main thread, which lives as long as the daemon: the page's death
        # signal is bound to the thread that started it.
        self._watcher = threading.Thread(
            target=self._watch, args=(process,), name="page", daemon=True
        )
        self._watcher.start()
        return self

    def _start(self) -> subprocess.Popen[bytes]:
        """The page's process on the daemon's socket; OSError if it cannot be started."""
        assert self._sock is not None
        command = [sys.executable, "-m", "referee", "web", "--store", str(self.store)]
        command += ["--listen", self.listen]  # the socket's; its host is a name of the box
        if self.config is not None:
            command += ["--config", str(self.config)]
        fd = self._sock.fileno()
        env = dict(os.environ, **{SOCKET_FD: str(fd)}, **parent_env())
        process = subprocess.Popen(command, env=env, pass_fds=[fd], stdin=subprocess.DEVNULL)
        self.process = process
        log.info("%s (process %d)", self.said, process.pid)
        return process

    def _watch(self, process: subprocess.Popen[bytes]) -> None:
        """Until the daemon stops: a page that ends is told and started again, later each
        time it dies soon again."""
        backoff = Backoff(RESTART_S, RESTART_MAX_S, SETTLED_S)
        while True:
            started = time.monotonic()
            ended = os.pidfd_open(process.pid)
            try:
                stop = self._stop.wait([ended]) is None
            finally:
                os.close(ended)
            if stop or self._stopping:  # stopped by the daemon's own stop
                return
            code = process.wait()
            delay = backoff.after(time.monotonic() - started)
            how = how_it_ended(code)
            said = f"the page's process {process.pid} ended ({how}): started again in {delay:g} s"
            log.warning("%s", said)
            self.told(SourceStatus(PAGE, said, ok=False))
            started_again = self._again(delay, backoff)
            if started_again is None:
                return
            process = started_again
            self.told(SourceStatus(PAGE, self.said, ok=True))

    def _again(self, delay: float, backoff: Backoff) -> subprocess.Popen[bytes] | None:
        """The page started again after delay s, and twice as long each time it cannot
        be (told); None when the daemon stops meanwhile."""
        while self._stop.wait(timeout_s=delay) is not None:
            with self._lock:
                if self._stopping:
                    return None
                try:
                    return self._start()
                except OSError as err:
                    said = f"the page's process cannot be started ({err}): tried again later"
                    log.error("%s", said)
                    self.told(SourceStatus(PAGE, said, ok=False))
            delay = backoff.after()
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with self._lock:
            self._stopping = True
            process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            wait_or_kill(process, STOP_S, "the page's process")
        # Only then: a page the watcher started dies with the watcher's thread.
        self._stop.stop()
        if self._watcher is not None:
            self._watcher.join()
        self._stop.close()
        if self._sock is not None:
            self._sock.close()
