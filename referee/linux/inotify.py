"""inotify(7), by ctypes on the C library (Python has no binding of its own): a
descriptor that a wait sleeps on, readable when a name in a watched folder changes.

Used where a loop must notice a change the moment it happens and do nothing at idle:
the store's folder (store/watch.py), the input devices' (a keyboard plugged in on the
console, inputs/console_keys.py).
"""

import ctypes
import os
import struct
from pathlib import Path

# The events asked for and read (<sys/inotify.h>).
IN_MODIFY, IN_ATTRIB = 0x2, 0x4
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW = 0x4000  # events were lost: the queue was full
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name


def _libc() -> ctypes.CDLL | None:
    """The C library, if it has inotify (Linux's)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return libc if hasattr(libc, "inotify_init1") else None


class Inotify:
    """One inotify descriptor, non-blocking. `Inotify.open()` is None where there is no
    inotify (not Linux, or the user's limit of instances reached)."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self._fd = fd

    @classmethod
    def open(cls) -> "Inotify | None":
        libc = _libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        return cls(libc, fd) if fd >= 0 else None

    def fileno(self) -> int:
        return self._fd

    def watch(self, folder: Path | str | bytes, mask: int) -> bool:
        """Watch the folder for these events (again: the folder may be another by now);
        False if it cannot be (gone, or the limit of watches reached)."""
        return bool(self._libc.inotify_add_watch(self._fd, os.fsencode(folder), mask) >= 0)

    def read(self) -> list[tuple[int, bytes]]:
        """The events waiting, as (mask, name in the folder); none if none."""
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return []
        events = []
        at = 0
        while at + _EVENT.size <= len(data):
            _, mask, _, size = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
            at += _EVENT.size + size
            events.append((mask, name))
        return events

    def close(self) -> None:
        os.close(self._fd)
