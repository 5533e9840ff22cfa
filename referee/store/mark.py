"""Whether the page of a store is served now, and where: for the daemon's lobby, which
shows how to join only a page that is there (daemon/lobby.py).

`referee web` holds an flock(2) on a file beside the store, named after it (referee.db:
referee.page), for as long as it serves, the address it serves at written in it
(HOST:PORT). The kernel lets the lock go when the process ends, however it ends (SIGKILL,
a crash, the OOM killer), so the daemon asks the lock and never the file's being there:
a shared lock taken and let go at once (lock.held), an open and a read of a few
bytes, microseconds; no packet is sent (the daemon's sandbox would drop it) and nothing
waits. Whoever started the page, referee-web.service or `referee web` by hand, on whatever
address.
"""

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from referee.config import listen_address
from referee.linux.files import open_regular

from .lock import held
from .paths import mark_path

log = logging.getLogger(__name__)

# The daemon's look holds the lock a few microseconds: a server starting then tries again.
TRIES, TRY_S = 50, 0.02
ADDRESS_MAX = 300  # bytes of HOST:PORT, an IPv6 address's included, with room to spare


@contextlib.contextmanager
def marked(store: Path, listening: str) -> Iterator[None]:
    """The page of `store` marked as served at `listening` (HOST:PORT) while entered. A
    mark that cannot be made is said in the log: the page is served all the same, and the
    lobby then shows no address for it."""
    path = mark_path(store)
    try:
        fd = open_regular(path, os.O_RDWR | os.O_CREAT)
    except OSError as err:
        log.warning("%s: the box's lobby will not show the page (%s)", path, err)
        yield
        return
    try:
        for _ in range(TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(TRY_S)
        else:
            log.warning("%s: another page's server holds it; the lobby shows that one", path)
            yield
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{listening}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # and the lock with it


def served_at(store: Path) -> str | None:
    """HOST:PORT the page of `store` is served at now, as its server wrote it; "" when it
    is served but has not written where yet (or wrote what is no address); None when no
    server holds the mark."""
    try:
        fd = open_regular(mark_path(store), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None  # none, or not one a page's server made
    try:
        if not held(fd):
            return None
        text = os.pread(fd, ADDRESS_MAX, 0).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    try:
        listen_address(text)
    except ValueError:
        return ""
    return text
