"""When to look whether the store's file is still at its path: at once when its folder
changes, so that a store deleted or moved under the running daemon is noticed.

Deleted or moved, the store would go on taking inputs into a file nobody can open again,
and lose them all at the exit (moved.py keeps it in memory, store.py writes it anew).
inotify on the store's folder wakes the main loop the moment a name there is created,
deleted or moved, or the folder itself goes: nothing to do at idle. Where there is no
inotify (not Linux, its limits reached) or the folder is gone, the loop looks once a
second instead.

The page's server (`referee web`, referee/web/) watches the same way for what the daemon
writes: given `written` (the store's -wal), a write to one of those names counts too.
"""

import logging
import os
from collections.abc import Callable, Collection
from pathlib import Path

from referee.linux.inotify import (
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    Inotify,
)
from referee.units import NS_PER_S

log = logging.getLogger(__name__)

LOOK_NS = NS_PER_S  # without inotify: how often to look
# A name in the folder created, deleted, moved from or to; the folder itself deleted or
# moved.
_CHANGES = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF


class StoreWatch:
    def __init__(
        self, store: Path, clock: Callable[[], int], *, written: Collection[str] = ()
    ) -> None:
        self._folder = os.fsencode(store.parent)
        # Only these names' writes count: the folder holds others written all the time (a
        # log), and the store file's own are SQLite's checkpoints, which change nothing.
        self._written = {os.fsencode(name) for name in written}
        self._mask = _CHANGES | (IN_MODIFY if written else 0)
        self._inotify = Inotify.open()
        self._watching = False
        self._next_ns = clock() + LOOK_NS
        self._watch(self._next_ns)
        if not self._watching:
            log.warning("%s: cannot watch the folder: the store is looked at every second", store)

    def fileno(self) -> int | None:
        """What wakes the main loop when the folder changes (None: nothing)."""
        return None if self._inotify is None else self._inotify.fileno()

    @property
    def wake_ns(self) -> int | None:
        """When to look without being woken; None while inotify wakes the loop."""
        return None if self._watching else self._next_ns

    def due(self, now_ns: int) -> bool:
        """Whether to look at the store's path now: its folder changed, or (unwatched) a
        second has gone by."""
        if self._watching and self._inotify is not None:
            if not self._counts(self._inotify.read()):
                return False
        elif now_ns < self._next_ns:
            return False
        # The folder may be another now (deleted, and made again by the store written
        # anew), or gone: watch what is there, or look again in a second.
        self._watch(now_ns + LOOK_NS)
        return True

    def _counts(self, events: list[tuple[int, bytes]]) -> bool:
        """Whether the events read hold a change that counts: any but a write, or a write
        to a name in `written`."""
        return any(not mask & IN_MODIFY or name in self._written for mask, name in events)

    def _watch(self, next_ns: int) -> None:
        self._next_ns = next_ns
        self._watching = self._inotify is not None and self._inotify.watch(self._folder, self._mask)

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
