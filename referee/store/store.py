"""The ledger: every accepted input of every game, in order, in one SQLite file.

The state is never stored: it is always the replay of a game's inputs, so reopening
the file resumes the game exactly (docs/design.md, "The store"). An input is kept as its
replay-script words (`press 2`, `end left=3`) and its game-clock time, and read back
with the replay parser: one grammar for scripts and the ledger.

    with Store.open(default_store_path()) as store:
        ledger = Ledger(store, store.new_game(settings, lobby=True))
        if not ledger.append(Press(player=2, t_ns=12_300_000)):
            show(ledger.trouble)  # kept in memory, saved on a later append or flush()

Durability: WAL with synchronous=FULL, so an input is on the disk once the transaction
that holds it has committed (NORMAL may lose the last commits on a power cut). A ledger
writes at once, in `append`, or, once `write_behind` has started its thread, behind the
main loop: every input waiting when a write begins goes in one transaction (group
commit). docs/design.md, "The store", says what a power cut may then lose. A store file
deleted or moved under the daemon is written anew at its path (moved.py).

This module opens a store and writes it; what it is made of is said by its neighbours:
schema.py (the tables and their migrations), connect.py (the connections and the disk's
errors), reads.py (the read API), moved.py (a file deleted or moved under the daemon) and
ledger.py (one game's inputs, written behind the main loop).
"""

import json
import logging
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from referee.errors import StoreError as StoreError  # re-exported: callers know it from here
from referee.linux.files import NotARegularFile
from referee.names import folded
from referee.rules import Input, Settings, parse_input, settings_values, words

from . import lock as store_lock
from . import schema
from .connect import REASONS, connect_reader, connect_writer, store_error
from .moved import Follows
from .paths import wal_path
from .reads import Reads

log = logging.getLogger(__name__)


class Store(Reads, Follows):
    """One store file. Open it with `Store.open` (to write) or `Store.open_readonly`; its
    reads are Reads', what becomes of its file Follows'.

    One thread at a time uses it: its opener's, or while a ledger writes behind
    (`Ledger.write_behind`), that ledger's writer.
    """

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        lock_fd: int | None = None,
        *,
        unwritable: str | None = None,
        left_open: bool = False,
    ) -> None:
        self.path = path
        self._conn = conn
        self._lock_fd = lock_fd  # the writer's: see store/lock.py
        self._unwritable = unwritable  # a writer's connection could not be opened: why
        self._lost: str | None = None  # the path no longer names its file: what became of it
        self._copy: tempfile.TemporaryDirectory[str] | None = None  # a reader's, to remove
        # The last writer never closed it (a power cut, a crash, a kill): SQLite removes
        # the -wal file when the last connection closes, so one with frames in it was
        # left by a writer that did not.
        self.left_open = left_open

    @classmethod
    def open(cls, path: Path) -> Self:
        """Open the store to write, creating it (and its directory) or migrating it.

        One writer per store: StoreInUse names the process that has it open.
        """
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(path, f"cannot create its directory: {err.strerror}") from err
        try:
            lock_fd = store_lock.lock(path)
        except NotARegularFile as err:
            raise StoreError(path, f"{err.strerror}, so not a referee store") from None
        except OSError as err:
            raise StoreError(path, f"cannot open: {err.strerror}") from err
        wal = wal_path(path)
        left_open = wal.exists() and wal.stat().st_size > 0
        try:
            # Look with a connection that cannot write before one that can: a file that
            # is not our store, or is newer than us, must be left exactly as it was.
            probe = cls._connect_readonly(path)
            with probe._closed_on_error():
                current = probe._check_version() == schema.SCHEMA_VERSION
        except BaseException:
            os.close(lock_fd)
            raise
        try:
            conn = connect_writer(path)
        except StoreError as err:
            if not (current and err.reason in REASONS.values()):
                probe.close()
                os.close(lock_fd)
                raise
            # The disk takes nothing now (full, read-only, failing): the game can still be
            # read and played, its inputs waiting in memory (Ledger), and the screen says so.
            log.warning("%s: cannot write (%s): reading it only, for now", path, err.reason)
            return cls(path, probe._conn, lock_fd, unwritable=err.reason, left_open=left_open)
        probe.close()
        store = cls(path, conn, lock_fd, left_open=left_open)
        with store._closed_on_error():
            store._migrate()
        return store

    @classmethod
    def open_readonly(cls, path: Path) -> Self:
        """Open the store to read, also while a daemon writes it: it changes no file but
        that daemon's -shm (connect.connect_reader)."""
        store = cls._connect_readonly(path)
        with store._closed_on_error():
            version = store._check_version()
            if 0 < version < schema.SCHEMA_VERSION:
                raise StoreError(
                    path,
                    f"store schema version {version} is older than this referee's"
                    f" ({schema.SCHEMA_VERSION}): `referee run` with this store migrates it",
                )
        return store

    @classmethod
    def _connect_readonly(cls, path: Path) -> Self:
        conn, copy = connect_reader(path)
        store = cls(path, conn)
        store._copy = copy
        return store

    def close(self) -> None:
        self._conn.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # after the connection: its last writes are done
            self._lock_fd = None
        if self._copy is not None:
            self._copy.cleanup()
            self._copy = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def new_game(
        self,
        settings: Settings,
        *,
        lobby: bool,
        started_at: datetime | None = None,
        inputs: Sequence[Input] = (),
        names: Mapping[int, str] | None = None,
    ) -> int:
        """A new game, started now or when a game written anew started, with its inputs
        (in the order they were accepted) and who sits where, in the same transaction."""
        when = (started_at or datetime.now(UTC)).isoformat()
        stored = [Stored(inp.t_ns, storable_words(inp)) for inp in inputs]
        with self._writing() as conn:
            cursor = conn.execute(
                "INSERT INTO games (started_at, rules, settings, lobby) VALUES (?, ?, ?, ?)",
                (when, settings.rules.value, settings_json(settings), lobby),
            )
            game_id = cursor.lastrowid
            assert game_id is not None  # an INSERT always sets it
            conn.executemany(
                "INSERT INTO inputs (game_id, t_ns, words) VALUES (?, ?, ?)",
                ((game_id, one.t_ns, one.words) for one in stored),
            )
            _seat_players(conn, game_id, sorted((names or {}).items()))
        return game_id

    def name_seats(self, game_id: int, named: Sequence[tuple[int, str]]) -> None:
        """Seat these players (seat, name) in the game, in this order, in one transaction.
        A name the box has seen, however typed, is the same player, now spelt so.
        ValueError for a player who would sit at two seats; StoreError for the disk."""
        with self._writing() as conn:
            _seat_players(conn, game_id, named)

    def settle_lobby(self, game_id: int, settings: Settings) -> None:
        """A game still in its lobby takes other settings, or StoreError. Only a game not
        started: its settings decide nothing until SUPER starts it. Its joins stay (the
        replay ignores those of seats it no longer has), and so do its seats' players, but
        for the seats it no longer has."""
        with self._writing() as conn:
            _settle(conn, game_id, settings)

    def set_next_rules(
        self, rules: Mapping[str, object], lobby: tuple[int, Settings] | None = None
    ) -> None:
        """Keep these rule keys, and only these, for the next games; and settle the game
        in the lobby (its id, and the settings it takes now) in the same transaction."""
        with self._writing() as conn:
            conn.execute("DELETE FROM next_rules")
            conn.executemany(
                "INSERT INTO next_rules (key, value) VALUES (?, ?)",
                ((key, json.dumps(value)) for key, value in rules.items()),
            )
            if lobby is not None:
                _settle(conn, *lobby)

    def append(self, game_id: int, inp: Input) -> None:
        """Add an input to a game; it is on the disk when this returns, or StoreError."""
        self._append(game_id, [Stored(inp.t_ns, storable_words(inp))])

    def _append(self, game_id: int, batch: Sequence["Stored"]) -> None:
        """Write inputs already checked to read back as themselves (at most BATCH_MAX), in
        order, in one transaction: all of them are on the disk when this returns, or none.

        One statement, committed as it runs: a thread that writes behind a loop that draws
        waits for the GIL each time a call into SQLite returns, and with BEGIN, an INSERT
        a row and COMMIT the write's median took twice as long (bench/latency.py, `render`)."""
        self._ready_to_write()
        values = ", ".join(["(?, ?, ?)"] * len(batch))
        try:
            self._conn.execute(
                f"INSERT INTO inputs (game_id, t_ns, words) VALUES {values}",
                [value for s in batch for value in (game_id, s.t_ns, s.words)],
            )
        except sqlite3.IntegrityError as err:
            raise ValueError(f"{self.path}: no game {game_id}") from err
        except sqlite3.Error as err:
            raise store_error(self.path, err) from err

    def _migrate(self) -> None:
        while True:
            with self._writing() as conn:
                # Read again under the write lock: another process may have migrated it.
                version = self._check_version()
                if version == schema.SCHEMA_VERSION:
                    return
                for sql in schema.MIGRATIONS[version]:
                    conn.execute(sql)
                conn.execute(f"PRAGMA user_version = {version + 1}")
            log.info("%s: store schema migrated to version %d", self.path, version + 1)

    @contextmanager
    def _closed_on_error(self) -> Iterator[None]:
        """Close the connection when opening fails half way, naming the file in the error."""
        try:
            yield
        except sqlite3.Error as err:
            self.close()
            raise store_error(self.path, err) from err
        except BaseException:
            self.close()
            raise

    def check_writable(self) -> None:
        """Write to the disk now, changing nothing, or raise StoreError saying why not."""
        with self._writing() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute(f"PRAGMA user_version = {version}")  # rewrites the header page

    def _become_writer(self) -> None:
        """A store opened while the disk took nothing: try again to open it to write."""
        conn = connect_writer(self.path)
        self._conn.close()
        self._conn = conn
        self._unwritable = None
        log.info("%s: writable again", self.path)

    def _write_anew(self) -> None:
        """Write the store, only in memory since its file went, to its path as a new file,
        and go on with that one; StoreError if it cannot be (yet)."""
        try:
            fresh = Store.open(self.path)
        except StoreError as err:
            raise self._not_anew(err.reason) from err
        try:
            if fresh._unwritable is not None:
                raise self._not_anew(fresh._unwritable)
            if fresh.game() is not None:
                raise self._not_anew("another store is there now")
            self._conn.backup(fresh._conn)
        except sqlite3.Error as err:
            fresh.close()
            raise self._not_anew(store_error(self.path, err).reason) from err
        except BaseException:
            fresh.close()
            raise
        self._conn.close()
        self._conn, self._lock_fd, self._unwritable = fresh._conn, fresh._lock_fd, None
        log.warning("%s: the %s: written anew, every game in it", self.path, self._lost)
        self._lost = None

    def _not_anew(self, why: str) -> StoreError:
        return StoreError(self.path, f"{self._lost}, not written anew: {why}")

    def _ready_to_write(self) -> None:
        """A store only in memory since its file went is written anew first, and one opened
        while the disk took nothing is opened to write (StoreError while they cannot)."""
        if self._lost is not None:
            self._write_anew()
        if self._unwritable is not None:
            self._become_writer()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed (durably) at the end, rolled back on error."""
        self._ready_to_write()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (disk full); a failing rollback
                # leaves nothing to do.
                if self._conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise
        except sqlite3.IntegrityError:
            raise  # the caller asked for something impossible, not storage trouble
        except sqlite3.Error as err:
            raise store_error(self.path, err) from err


@dataclass(frozen=True)
class Stored:
    """An input as the ledger keeps it: its time and its replay words."""

    t_ns: int
    words: str


def settings_json(settings: Settings) -> str:
    """A game's settings as the store's `settings` column (and a rescue file) keep them."""
    return json.dumps(settings_values(settings))


def storable_words(inp: Input) -> str:
    """The input's words, checked to read back as the very same input.

    What could not be read back would make the whole game unreadable, so it is refused
    (ValueError: a bug in the caller) before anything is written.
    """
    text = words(inp)
    try:
        same = isinstance(inp.t_ns, int) and inp.t_ns >= 0
        same = same and parse_input(text.split(), inp.t_ns) == inp
    except ValueError:
        same = False
    if not same:
        raise ValueError(f"cannot store {inp!r}: it would not read back as itself")
    return text


def _settle(conn: sqlite3.Connection, game_id: int, settings: Settings) -> None:
    conn.execute(
        "UPDATE games SET rules = ?, settings = ? WHERE id = ?",
        (settings.rules.value, settings_json(settings), game_id),
    )
    conn.execute("DELETE FROM seats WHERE game_id = ? AND seat > ?", (game_id, settings.players))


def _seat_players(conn: sqlite3.Connection, game_id: int, named: Sequence[tuple[int, str]]) -> None:
    for seat, name in named:
        key = folded(name)
        conn.execute(
            "INSERT INTO players (name, folded) VALUES (?, ?)"
            " ON CONFLICT (folded) DO UPDATE SET name = excluded.name",
            (name, key),
        )
        (player_id,) = conn.execute("SELECT id FROM players WHERE folded = ?", (key,)).fetchone()
        try:
            conn.execute(
                "INSERT INTO seats (game_id, seat, player_id) VALUES (?, ?, ?)"
                " ON CONFLICT (game_id, seat) DO UPDATE SET player_id = excluded.player_id",
                (game_id, seat, player_id),
            )
        except sqlite3.IntegrityError as err:
            raise ValueError(f"{name} already sits at another seat of game {game_id}") from err
