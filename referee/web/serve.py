"""`referee web`: the page's server in a process of its own (docs/design.md, "The page").

The socket is bound here, before uvicorn starts, so that an address in use or not this
computer's is one line naming it, as every mistake a user can fix is.
"""

import asyncio
import errno
import logging
import os
import socket
from pathlib import Path

import uvicorn

from referee.config import listen_address
from referee.errors import StartError

from .server import create_app

log = logging.getLogger(__name__)

# How long a stop waits for open event streams before it closes them: they never end by
# themselves, and `systemctl stop` should not wait out its own timeout.
GRACEFUL_S = 1
# The descriptor of a listening socket a parent bound for this process (referee/web/child.py).
SOCKET_FD = "REFEREE_WEB_FD"
PI_LISTEN, OTHER_LISTEN = "0.0.0.0:8080", "127.0.0.1:8080"


def resolve_listen(listen: str, *, on_a_pi: bool) -> str:
    """`auto` on a Pi is the local network (the phones at the table reach it there);
    elsewhere this computer alone (a developer's laptop on a café's Wi-Fi)."""
    if listen != "auto":
        return listen
    return PI_LISTEN if on_a_pi else OTHER_LISTEN


def bind(listen: str) -> socket.socket:
    """A listening socket at HOST:PORT, or StartError in one line."""
    try:
        host, port = listen_address(listen)
    except ValueError:
        raise StartError(f"web: listen {listen!r}: must be HOST:PORT, [IPv6]:PORT or off") from None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as err:
        raise StartError(f"web: listen {listen}: no such address ({err.strerror})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart at once
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        why = {
            errno.EADDRINUSE: "in use by another program: stop it, or choose another port",
            errno.EADDRNOTAVAIL: "not an address of this computer",
            errno.EACCES: "a port under 1024 needs privileges the box does not give: use 8080",
        }.get(err.errno or 0, err.strerror)
        raise StartError(f"web: listen {listen}: {why}") from None
    return sock


class _Server(uvicorn.Server):
    """uvicorn, which ends the event streams when it stops: else it waits for them until
    its graceful shutdown's timeout, and then cuts them off with an error in the log."""

    def __init__(self, config: uvicorn.Config, closing: asyncio.Event) -> None:
        super().__init__(config)
        self._closing = closing

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._closing.set()
        await super().shutdown(sockets)


def serve(store: Path, pin: Path, sock: socket.socket) -> None:
    """Serve the page on the listening socket until SIGTERM or SIGINT."""
    closing = asyncio.Event()
    config = uvicorn.Config(
        create_app(store, pin, closing=closing),
        lifespan="on",
        log_config=None,  # the referee's own logging, to the journal
        access_log=False,  # a phone's every request would fill the journal
        proxy_headers=False,  # nothing stands in front: a header never names the client
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_S,
    )
    log.info("the page at %s (store %s)", address(sock), store)
    _Server(config, closing).run(sockets=[sock])


def address(sock: socket.socket) -> str:
    """The page's address on a bound socket: the port the system chose for port 0 too."""
    host, port = sock.getsockname()[:2]
    return (
        f"http://[{host}]:{port}/" if sock.family == socket.AF_INET6 else f"http://{host}:{port}/"
    )


def inherited() -> socket.socket | None:
    """The listening socket `referee run` bound and handed down (referee/web/child.py)."""
    fd = os.environ.pop(SOCKET_FD, None)
    return None if fd is None else socket.socket(fileno=int(fd))
