"""While the game is drawn in the terminal, nothing else may write there.

The log, a thread's traceback, a C library's complaint: all go to standard error, which
is the game's terminal too, and would tear its picture. For as long as the game is
shown, standard error (the descriptor itself, so C code is covered too) is a log file:
beside the store, else where a rescue file would go. On a full disk a failed write
there is dropped (logging's own error report goes to the same file and fails alike),
never shown.

That file is on the ledger's disk, and the page's process beside the daemon (`run --web`)
writes its log there too: so it is kept under KEPT_BYTES while it is written, whoever
writes it (StderrLog), and never fills the disk the ledger needs.
"""

import contextlib
import fcntl
import logging
import logging.handlers
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from .store.paths import LOG_NAME

KEPT_BYTES = 1_000_000  # a longer log is moved to referee.log.1 (at start, and as it is written)
PIECE = 65536  # bytes copied at a time

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


class StderrLog(logging.StreamHandler):  # type: ignore[type-arg]
    """The log, on standard error. Where that is a file (the log beside the store while the
    game is drawn in the terminal, or a file the user named), the file is kept under
    KEPT_BYTES: past it, what it holds is copied to LOG_NAME.1 (its name, and .1) and it
    is emptied in place. In place, since the page's process beside the daemon writes to
    the same open file: a file moved aside would keep growing under its other name."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(OSError, ValueError):  # no descriptor: nothing to keep small
            keep_small(self.stream.fileno())
        super().emit(record)


def keep_small(fd: int, kept_bytes: int = KEPT_BYTES) -> None:
    """The file open at `fd` copied aside and emptied once it holds `kept_bytes`; nothing
    for a terminal, a pipe or the journal's socket."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size < kept_bytes:
        return
    try:
        # Another process writing the same file may be at it now: it does it for both.
        # A POSIX lock is the process's, so the two do not empty it twice over.
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return
    try:
        # Measured again under the lock: the other writer, which found it taken, went on
        # writing meanwhile, so the file may now be past kept_bytes by as much as it wrote.
        size = os.fstat(fd).st_size
        if size >= kept_bytes:
            with contextlib.suppress(OSError):  # a full disk: emptied all the same
                _copy_aside(fd, max(0, size - kept_bytes), size)
            os.ftruncate(fd, 0)
    finally:
        fcntl.lockf(fd, fcntl.LOCK_UN)


def _copy_aside(fd: int, start: int, end: int) -> None:
    """The bytes from `start` to `end` of the file at `fd` (open for appending only), from
    the first whole line on, in its name and .1, replacing what was there; nothing if it
    has no name now (deleted)."""
    path = Path(f"/proc/self/fd/{fd}").readlink()
    if not path.is_absolute() or path.name.endswith(" (deleted)"):
        return
    kept = path.with_name(path.name + ".1")
    part = path.with_name(f".{kept.name}.{os.getpid()}")
    source = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        if os.fstat(source).st_ino != os.fstat(fd).st_ino:
            return  # another file by that name now
        out = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            at = start
            whole = start == 0 or os.pread(source, 1, start - 1) == b"\n"
            while at < end and (piece := os.pread(source, min(PIECE, end - at), at)):
                at += len(piece)
                if not whole:  # the end of a line whose start stays behind
                    cut = piece.find(b"\n") + 1
                    whole, piece = cut > 0, piece[cut:] if cut else b""
                os.write(out, piece)
        finally:
            os.close(out)
        part.replace(kept)
    except OSError:
        part.unlink(missing_ok=True)
        raise
    finally:
        os.close(source)


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
    from .store.rescue import places  # imported here: the page's process needs none of it

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
