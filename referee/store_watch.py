"""When to look whether the store's file is still at its path: at once when its folder
changes, so that a store deleted or moved under the running daemon is noticed.

Deleted or moved, the store would go on taking inputs into a file nobody can open again,
and lose them all at the exit (store.Store.follow_path writes it anew). inotify on the
store's folder wakes the main loop the moment a name there is created, deleted or moved,
or the folder itself goes: nothing to do at idle. Where there is no inotify (not Linux,
its limits reached) or the folder is gone, the loop looks once a second instead.

The page's server (`referee web`, referee/web/) watches the same way for what the daemon
writes: given `written` (the store's -wal), a write to one of those names counts too.
"""

import ctypes
import logging
import os
import struct
from collections.abc import Callable, Collection
from pathlib import Path

from .units import NS_PER_S

log = logging.getLogger(__name__)

LOOK_NS = NS_PER_S  # without inotify: how often to look
# inotify(7): a name in the folder created, deleted, moved from or to; the folder itself
# deleted or moved.
_IN_MODIFY, _IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x2, 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_CHANGES = _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF
_CHANGES |= _IN_MOVE_SELF
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name


def _libc() -> ctypes.CDLL | None:
    """The C library, if it has inotify (Linux's)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return libc if hasattr(libc, "inotify_init1") else None


class StoreWatch:
    def __init__(
        self, store: Path, clock: Callable[[], int], *, written: Collection[str] = ()
    ) -> None:
        self._folder = os.fsencode(store.parent)
        # Only these names' writes count: the folder holds others written all the time (a
        # log), and the store file's own are SQLite's checkpoints, which change nothing.
        self._written = {os.fsencode(name) for name in written}
        self._mask = _CHANGES | (_IN_MODIFY if written else 0)
        self._libc = _libc()
        fd = -1 if self._libc is None else self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        self._fd = fd if fd >= 0 else None
        self._watching = False
        self._next_ns = clock() + LOOK_NS
        self._watch(self._next_ns)
        if not self._watching:
            log.warning("%s: cannot watch the folder: the store is looked at every second", store)

    def fileno(self) -> int | None:
        """What wakes the main loop when the folder changes (None: nothing)."""
        return self._fd

    @property
    def wake_ns(self) -> int | None:
        """When to look without being woken; None while inotify wakes the loop."""
        return None if self._watching else self._next_ns

    def due(self, now_ns: int) -> bool:
        """Whether to look at the store's path now: its folder changed, or (unwatched) a
        second has gone by."""
        if self._watching and self._fd is not None:
            try:
                events = os.read(self._fd, 65536)
            except BlockingIOError:
                return False
            if not self._counts(events):
                return False
        elif now_ns < self._next_ns:
            return False
        # The folder may be another now (deleted, and made again by the store written
        # anew), or gone: watch what is there, or look again in a second.
        self._watch(now_ns + LOOK_NS)
        return True

    def _counts(self, events: bytes) -> bool:
        """Whether the events read hold a change that counts: any but a write, or a write
        to a name in `written`."""
        at = 0
        while at + _EVENT.size <= len(events):
            _, mask, _, size = _EVENT.unpack_from(events, at)
            name = events[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
            at += _EVENT.size + size
            if not mask & _IN_MODIFY or name in self._written:
                return True
        return False

    def _watch(self, next_ns: int) -> None:
        self._next_ns = next_ns
        self._watching = (
            self._libc is not None
            and self._fd is not None
            and self._libc.inotify_add_watch(self._fd, self._folder, self._mask) >= 0
        )

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
