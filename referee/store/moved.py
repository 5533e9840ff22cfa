"""A store file deleted or moved under the running daemon: noticed by its path, and the
store kept in memory from then on, written anew at its path at the next write
(Store._write_anew). The main loop looks when store/watch.py sees the store's folder
change (Ledger.check_path).
"""

import logging
import os
import sqlite3
from contextlib import suppress
from pathlib import Path

from . import lock as store_lock
from .connect import store_error
from .paths import shm_path, wal_path

log = logging.getLogger(__name__)


class Follows:
    """What became of a writer's store file (`Store`'s), and the store taken into memory
    once its path names it no longer."""

    path: Path
    _conn: sqlite3.Connection
    _lock_fd: int | None
    _lost: str | None

    @property
    def lost(self) -> str | None:
        """What became of the store's file while it was open ("store file deleted"), as long
        as the store is only in memory: it is written anew at its path at the next write."""
        return self._lost

    def gone(self) -> str | None:
        """What became of the file this writer opened, if its path no longer names it
        ("deleted", "moved away or replaced"); else None. Looks only at the path."""
        if self._lock_fd is None:  # a reader's, or in memory already
            return None
        opened = os.fstat(self._lock_fd)
        try:
            now = self.path.stat()
        except FileNotFoundError:
            now = None
        except OSError:
            return None  # the path cannot be looked at: nothing says it changed
        if now is not None and (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino):
            return None
        return "deleted" if opened.st_nlink == 0 else "moved away or replaced"

    def follow_path(self) -> str | None:
        """Look whether the path still names the file this writer opened. Deleted, moved
        away or replaced, that file is no one's any more (at the exit SQLite would take the
        game with it): the store is copied into memory, and written anew at its path at the
        next write (StoreError then, for as long as it cannot be). What became of it, the
        first time; else None."""
        gone = self.gone()
        if gone is None or self._lock_fd is None:
            return None
        # Everything into the file, wherever it is now (a moved one is whole), and out of
        # the -wal that a new store at the path would take for its own. A connection that
        # only reads (the disk took nothing at the start) cannot: the copy is whole anyway.
        with suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            self._conn.backup(memory)
        except sqlite3.Error as err:
            memory.close()
            raise store_error(self.path, err) from err
        self._conn.close()
        os.close(self._lock_fd)
        self._lock_fd = None
        if store_lock.holder_beside(self.path) is None:  # else another process's now
            # SQLite leaves them when its file was moved.
            for beside in (wal_path(self.path), shm_path(self.path)):
                with suppress(OSError):
                    beside.unlink(missing_ok=True)
        self._conn = memory
        self._lost = f"store file {gone}"
        log.warning("%s: the %s under the running referee: kept in memory", self.path, self._lost)
        return gone
