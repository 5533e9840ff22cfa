"""While the game is drawn in the terminal, nothing else may write there.

The log, a thread's traceback, a C library's complaint: all go to standard error, which
is the game's terminal too, and would tear its picture. For as long as the game is
shown, standard error (the descriptor itself, so C code is covered too) is a log file:
beside the store, else where a rescue file would go. On a full disk a failed write
there is dropped (logging's own error report goes to the same file and fails alike),
never shown.
"""

import contextlib
import logging
import logging.handlers
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from .rescue import places

LOG_NAME = "referee.log"
KEPT_BYTES = 1_000_000  # a longer log is moved to referee.log.1 at start

log = logging.getLogger(__name__)


@contextlib.contextmanager
def held_logs() -> Iterator[Callable[[], None]]:
    """Hold log records back (while the screens open) until the function yielded is
    called, or the block ends: then they go to the handlers that were in place."""
    root = logging.getLogger()
    handlers = root.handlers[:]
    holder = logging.handlers.MemoryHandler(capacity=100_000, flushLevel=logging.CRITICAL + 1)
    root.handlers = [holder]

    def release() -> None:
        root.handlers = handlers
        for record in holder.buffer:
            root.handle(record)
        holder.buffer.clear()

    try:
        yield release
    finally:
        release()


@contextlib.contextmanager
def stderr_to_log(store: Path) -> Iterator[Path | None]:
    """Standard error goes to the log file for the block; the file, or None if no place
    would take one (then standard error goes nowhere: the screen comes first)."""
    fd, path = _open_log(store)
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _open_log(store: Path) -> tuple[int, Path | None]:
    for place in places(store):
        path = place / LOG_NAME
        try:
            if path.stat().st_size > KEPT_BYTES:
                path.replace(path.with_name(LOG_NAME + ".1"))
        except OSError:
            pass  # no log yet, or it cannot be moved: append to it all the same
        try:
            return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600), path
        except OSError:
            continue
    return os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC), None
