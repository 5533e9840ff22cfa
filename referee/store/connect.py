"""The SQLite connections a store is opened with, and SQLite's errors said as the disk's
(docs/design.md, "The store"): a writer's, durable in WAL mode, and a reader's, which writes
no file but a live writer's -shm.
"""

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from referee.errors import StoreError
from referee.linux.files import NotARegularFile, open_regular

from . import lock as store_lock
from .paths import shm_path, wal_path
from .schema import SQLITE_HEADER

# What the screen says for the failures that can come and go while a game runs.
REASONS = {
    sqlite3.SQLITE_FULL: "disk full",
    sqlite3.SQLITE_IOERR: "I/O error",
    sqlite3.SQLITE_READONLY: "read-only storage",
    sqlite3.SQLITE_CANTOPEN: "cannot write beside it",  # its -wal and -shm files
}
# A read-only connection's page cache (see connect_reader).
READ_CACHE_KIB = 256


def connect_reader(
    path: Path,
) -> tuple[sqlite3.Connection, tempfile.TemporaryDirectory[str] | None]:
    """A connection that reads the store and writes no file, except the -shm of a
    store a writer (a daemon) has open: SQLite's shared index of its -wal, which
    readers update too. With it, the private copy it reads, if any, for its closer to
    remove."""
    try:
        with os.fdopen(open_regular(path), "rb") as file:
            header = file.read(len(SQLITE_HEADER))
            written = store_lock.held(file.fileno())
    except FileNotFoundError:
        raise StoreError(path, "no such file") from None
    except NotARegularFile as err:
        raise StoreError(path, f"{err.strerror}, so not a referee store") from None
    except OSError as err:
        raise StoreError(path, f"cannot read: {err.strerror}") from err
    if header and header != SQLITE_HEADER:
        raise StoreError(path, "not an SQLite database, so not a referee store")
    wal, shm = wal_path(path), shm_path(path)
    copy = None
    if not wal.exists():
        # No connection has the store open: all of it is in the main file. A plain
        # mode=ro connection would create -wal and -shm files and leave them behind;
        # immutable=1 reads without them (and without locks).
        uri = f"{path.absolute().as_uri()}?mode=ro&immutable=1"
    elif written:
        uri = f"{path.absolute().as_uri()}?mode=ro"
    elif shm.exists():  # a killed writer's: its -wal is read as it is, its -shm unwritten
        uri = f"{path.absolute().as_uri()}?mode=ro&readonly_shm=1"
    else:
        # SQLite cannot read a -wal without its -shm, and would make one: a private
        # copy of both files is read instead.
        copy = tempfile.TemporaryDirectory(prefix="referee-read-")
        try:
            for original in (path, wal):
                shutil.copyfile(original, Path(copy.name) / original.name)
        except OSError as err:
            copy.cleanup()
            raise StoreError(path, f"cannot copy it to read it: {err.strerror}") from err
        uri = f"{(Path(copy.name) / path.name).as_uri()}?mode=ro"
    try:
        # Not checked for its thread: the connection of a store opened while the disk
        # takes nothing is closed by the ledger's writer when it can write again.
        conn = sqlite3.connect(uri, isolation_level=None, uri=True, check_same_thread=False)
        # A reader reads a few games, or walks every game's index entries once (the
        # page's count): SQLite's default 2 MB of page cache would only be filled and
        # dropped, where the page has 40 MB in all (docs/design.md, "The page").
        conn.execute(f"PRAGMA cache_size = -{READ_CACHE_KIB}")
    except sqlite3.Error as err:
        if copy is not None:
            copy.cleanup()
        raise store_error(path, err) from err
    return conn, copy


def connect_writer(path: Path) -> sqlite3.Connection:
    """A connection that writes durably, in WAL mode; StoreError if there can be none."""
    try:
        # Not checked for its thread: a ledger's writer commits on it (Ledger.write_behind),
        # one thread at a time (Store).
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        raise store_error(path, err) from err
    try:
        # Answers with the mode it got, not an error, where WAL is not possible.
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            raise StoreError(path, f"cannot use write-ahead logging (journal mode {mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as err:
        conn.close()
        raise store_error(path, err) from err
    except BaseException:
        conn.close()
        raise
    return conn


def store_error(path: Path, err: sqlite3.Error) -> StoreError:
    code = getattr(err, "sqlite_errorcode", None)
    reason = REASONS.get(code & 0xFF) if code is not None else None
    if reason in REASONS.values():
        # SQLite says "I/O error" for a -shm file a full disk cannot grow, and "cannot
        # open" for one a read-only disk cannot create: the disk itself says which.
        reason = _disk_says(path) or reason
    return StoreError(path, reason or str(err))


def _disk_says(path: Path) -> str | None:
    try:
        disk = os.statvfs(path.parent)
    except OSError:
        return None
    if disk.f_flag & os.ST_RDONLY:
        return REASONS[sqlite3.SQLITE_READONLY]
    if disk.f_bavail == 0:
        return REASONS[sqlite3.SQLITE_FULL]
    return None
