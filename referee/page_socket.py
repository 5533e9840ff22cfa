"""Where the page is served: the address `[web] listen` names, its listening socket, and
the socket `referee run --web` hands the page's process. No uvicorn here: the daemon binds
the socket (daemon/page_process.py) and shows the address (daemon/lobby.py) without the
server's imports.
"""

import errno
import os
import socket

from .config import listen_address
from .errors import StartError

# The descriptor of a listening socket a parent bound for this process
# (referee/daemon/page_process.py).
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


def address(sock: socket.socket) -> str:
    """The page's address on a bound socket: the port the system chose for port 0 too."""
    return f"http://{host_port(sock)}/"


def host_port(sock: socket.socket) -> str:
    """HOST:PORT of a bound socket, as `[web] listen` writes it ([::]:8080 for IPv6)."""
    host, port = sock.getsockname()[:2]
    return f"[{host}]:{port}" if sock.family == socket.AF_INET6 else f"{host}:{port}"


def inherited() -> socket.socket | None:
    """The listening socket `referee run` bound and handed down (referee/daemon/page_process.py)."""
    fd = os.environ.pop(SOCKET_FD, None)
    return None if fd is None else socket.socket(fileno=int(fd))
