"""`referee run --web`: the page's server started beside the daemon, as a process of its own.

The daemon binds the address itself, so that a port in use or an address not this
computer's is one line it can show the table at once, and hands the listening socket to
`referee web` (serve.py, `inherited`). The page's process reads the store as it always
does (docs/design.md, "The page"): it never shares the daemon's loop, its GIL nor its
memory. It stops when the daemon stops. On a box, referee-web.service serves the page in
its own sandbox instead, and referee.service runs without `--web` (its lobby shows the
address `[web] listen` names: web/join.py).
"""

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import TracebackType

from referee.children import wait_or_kill
from referee.errors import StartError

from .listen import SOCKET_FD, address, bind, host_port

log = logging.getLogger(__name__)

STOP_S = 3.0  # the page's own stop takes a second (web/serve.py, GRACEFUL_S)


class PageProcess:
    """The page's server at `listen` (HOST:PORT) on `store`, for as long as it is entered.

    `said`: what to tell the table: where the page is, or why it is not served;
    `listening`: HOST:PORT as bound (the port the system chose for port 0), while served."""

    def __init__(self, store: Path, config: Path | None, listen: str) -> None:
        self.store = store
        self.config = config
        self.listen = listen
        self.process: subprocess.Popen[bytes] | None = None
        self.said = ""
        self.listening: str | None = None

    def __enter__(self) -> "PageProcess":
        try:
            sock = bind(self.listen)
        except StartError as err:
            self.said = f"{err}: the page is not served"
            log.warning("%s", self.said)
            return self
        with sock:
            command = [sys.executable, "-m", "referee", "web", "--store", str(self.store)]
            command += ["--listen", self.listen]  # the socket's; its host is a name of the box
            if self.config is not None:
                command += ["--config", str(self.config)]
            env = dict(os.environ, **{SOCKET_FD: str(sock.fileno())})
            self.process = subprocess.Popen(
                command, env=env, pass_fds=[sock.fileno()], stdin=subprocess.DEVNULL
            )
            self.said = f"the page on the phones: {address(sock)}"
            self.listening = host_port(sock)
        log.info("%s (process %d)", self.said, self.process.pid)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        wait_or_kill(process, STOP_S, "the page's process")
