"""Opening a file that a user named, without waiting for ever on something that is not one.

Opening a FIFO to read waits until something writes to it: a settings file or a store
that is one would hang the referee at start, silently.
"""

import errno
import os
import stat
from pathlib import Path

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
