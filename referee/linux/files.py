"""Opening a file that a user named, without waiting for ever on something that is not one.

Opening a FIFO to read waits until something writes to it: a settings file or a store
that is one would hang the referee at start, silently. A file the user did not name, but
that a command looks for, may sit where the user cannot look (looked_at).
"""

import errno
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class NotARegularFile(OSError):
    """The path is a directory, a FIFO, a device...: its strerror says which."""

    def __init__(self, path: Path, mode: int) -> None:
        kind = _KINDS.get(stat.S_IFMT(mode), "not a file")
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))


def open_regular(path: Path, flags: int = os.O_RDONLY) -> int:
    """A descriptor for the regular file at path (flags as os.open's); OSError else, at once."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path) -> bytes:
    """The contents of the regular file at path; OSError for anything else, at once."""
    with os.fdopen(open_regular(path), "rb") as file:
        return file.read()


def looked_at(path: Path) -> bool:
    """Whether a file the user did not name (a settings file looked for, a default store)
    is there. One that cannot be looked at (a command started in a folder its user cannot
    read: `cd /root && sudo -u referee referee pin`) is not: said in one line, as skipped."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as err:
        log.warning("%s: skipped: cannot look at it (%s)", path, err.strerror or err)
        return False
    return True
