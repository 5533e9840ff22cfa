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
deleted or moved under the daemon is written anew at its path (`Store.follow_path`, which
the main loop calls when store/watch.py sees its folder change).
"""

import gc
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from referee.errors import StoreError as StoreError  # re-exported: callers know it from here
from referee.linux.files import NotARegularFile, open_regular
from referee.names import folded, kept_name
from referee.rules import (
    Input,
    Settings,
    State,
    input_maker,
    parse_input,
    replay,
    report,
    settings_typed,
    settings_values,
    words,
)
from referee.units import ID_MAX, MAX_SEATS

from . import lock as store_lock
from .paths import shm_path, wal_path

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
APPLICATION_ID = 0x53455421  # "SET!": PRAGMA application_id marks the file as ours

# Each step takes the schema from the version of its index to the next, in one
# transaction; a store is migrated on open. Append steps; never change a released one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"PRAGMA application_id = {APPLICATION_ID}",
        """CREATE TABLE games (
            id INTEGER PRIMARY KEY,
            started_at TEXT NOT NULL,  -- wall clock, ISO 8601 with its offset
            rules TEXT NOT NULL,  -- also in settings: here for a glance from the sqlite3 shell
            settings TEXT NOT NULL,  -- JSON of the rule keys, as a replay's config line has them
            lobby INTEGER NOT NULL CHECK (lobby IN (0, 1))  -- 0: every seat played from the start
        )""",
        """CREATE TABLE inputs (
            id INTEGER PRIMARY KEY,  -- the order the inputs were accepted in
            game_id INTEGER NOT NULL REFERENCES games (id),
            t_ns INTEGER NOT NULL CHECK (typeof(t_ns) = 'integer' AND t_ns >= 0),
            words TEXT NOT NULL  -- as a replay script writes the input: 'press 2'
        )""",
        "CREATE INDEX inputs_by_game ON inputs (game_id, id)",
    ),
    (
        # The players the box has seen, and who sat where in every game: history and
        # stats follow people, not seats (names.py says what a name may be).
        """CREATE TABLE players (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,  -- as last typed: what the screens show
            folded TEXT NOT NULL UNIQUE  -- the name case-folded: one player however typed
        )""",
        """CREATE TABLE seats (
            game_id INTEGER NOT NULL REFERENCES games (id),
            seat INTEGER NOT NULL CHECK (typeof(seat) = 'integer' AND seat BETWEEN 1 AND 8),
            player_id INTEGER NOT NULL REFERENCES players (id),
            PRIMARY KEY (game_id, seat),
            UNIQUE (game_id, player_id)  -- nobody sits at two seats of one game
        )""",
    ),
    (
        # The rule keys a phone set for the next games (config/next_rules.py): they
        # override the settings file's [rules] and are never written into it.
        """CREATE TABLE next_rules (
            key TEXT PRIMARY KEY,  -- a key of the settings file's [rules] table
            value TEXT NOT NULL  -- its value as JSON, typed as the file types it
        )""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)

# What the screen says for the failures that can come and go while a game runs.
_REASONS = {
    sqlite3.SQLITE_FULL: "disk full",
    sqlite3.SQLITE_IOERR: "I/O error",
    sqlite3.SQLITE_READONLY: "read-only storage",
    sqlite3.SQLITE_CANTOPEN: "cannot write beside it",  # its -wal and -shm files
}


# While the disk refuses, a ledger that writes behind tries again this often (and at
# every new input).
RETRY_S = 5.0
# The most inputs one write takes: its statement's parameters stay far below SQLite's
# limit (32,766 since 3.32).
BATCH_MAX = 1000
# A read-only connection's page cache (see _connect_readonly).
READ_CACHE_KIB = 256
# How long `Ledger.hand_over` waits for the writer's thread to wake.
HANDOFF_S = 0.005


@dataclass(frozen=True)
class GameHead:
    """A game without its inputs: which game it is, and the rules it is played by."""

    id: int
    settings: Settings
    lobby: bool  # the game started in the lobby (else every seat played from the start)
    started_at: datetime  # with the id, what tells this game from any other


@dataclass(frozen=True)
class ListedGame(GameHead):
    """A game in the store's list: its head, and where its inputs stand."""

    last_input: int  # the id of its latest input, 0 before its first: moves at every input
    # Who sat where, by seat: a tuple, so that a game named anew is a new key of the caches.
    names: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class StoredGame(GameHead):
    inputs: tuple[Input, ...]
    names: Mapping[int, str] = field(default_factory=dict)  # who sat where, by seat

    def report(self, state: State) -> dict[str, Any]:
        """The state's JSON as `referee state` prints it: `referee replay`'s, and the
        names of the seats that have one (docs/web.md)."""
        out = report(self.settings, state)
        if self.names:
            out["names"] = {str(seat): name for seat, name in sorted(self.names.items())}
        return out

    def state(self) -> State:
        # A long game's replay makes hundreds of thousands of objects that all live on
        # (undo reaches every state): the cycle collector would only scan them again and
        # again. It waits, and then leaves them out of its later rounds (bench/memory.py).
        collecting = gc.isenabled()
        gc.disable()
        try:
            return replay(self.settings, self.inputs, lobby=self.lobby)
        finally:
            if collecting:
                gc.freeze()
                gc.enable()


class Store:
    """One store file. Open it with `Store.open` (to write) or `Store.open_readonly`.

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
                current = probe._check_version() == SCHEMA_VERSION
        except BaseException:
            os.close(lock_fd)
            raise
        try:
            conn = _connect_writer(path)
        except StoreError as err:
            if not (current and err.reason in _REASONS.values()):
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
        that daemon's -shm (see _connect_readonly)."""
        store = cls._connect_readonly(path)
        with store._closed_on_error():
            version = store._check_version()
            if 0 < version < SCHEMA_VERSION:
                raise StoreError(
                    path,
                    f"store schema version {version} is older than this referee's"
                    f" ({SCHEMA_VERSION}): `referee run` with this store migrates it",
                )
        return store

    @classmethod
    def _connect_readonly(cls, path: Path) -> Self:
        """A connection that reads the store and writes no file, except the -shm of a
        store a writer (a daemon) has open: SQLite's shared index of its -wal, which
        readers update too."""
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
            store = cls(path, conn)
        except sqlite3.Error as err:
            if copy is not None:
                copy.cleanup()
            raise _store_error(path, err) from err
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
        stored = [Stored(inp.t_ns, _storable_words(inp)) for inp in inputs]
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

    def seat_names(self, game_id: int) -> dict[int, str]:
        """Who sits where in the game: their names by seat."""
        return dict(self._seated(game_id, game_id).get(game_id, ()))

    def _seated(self, first: int, last: int) -> dict[int, list[tuple[int, str]]]:
        """Who sat where in the games of ids first to last: (seat, name) by game, checked."""
        rows = self._read_all(
            "SELECT seats.game_id, seats.seat, players.name FROM seats"
            " JOIN players ON players.id = seats.player_id"
            " WHERE seats.game_id BETWEEN ? AND ? ORDER BY seats.game_id, seats.seat",
            first,
            last,
        )
        seated: dict[int, list[tuple[int, str]]] = {}
        # A table's few players sit again and again: each (seat, name) one tuple, not one
        # a game, however many games a listing holds.
        shared: dict[tuple[int, str], tuple[int, str]] = {}
        for game_id, seat, name in rows:
            checked = (self._seat(game_id, seat), self._name(f"game {game_id}", name))
            seated.setdefault(game_id, []).append(shared.setdefault(checked, checked))
        return seated

    def players(self) -> list[str]:
        """Every player the box has seen, those of the latest games first."""
        rows = self._read_all(
            "SELECT players.id, players.name FROM players"
            " LEFT JOIN seats ON seats.player_id = players.id GROUP BY players.id"
            " ORDER BY max(seats.game_id) IS NULL, max(seats.game_id) DESC, players.folded"
        )
        return [self._name(f"player {player_id}", name) for player_id, name in rows]

    def settle_lobby(self, game_id: int, settings: Settings) -> None:
        """A game still in its lobby takes other settings, or StoreError. Only a game not
        started: its settings decide nothing until SUPER starts it. Its joins stay (the
        replay ignores those of seats it no longer has), and so do its seats' players, but
        for the seats it no longer has."""
        with self._writing() as conn:
            _settle(conn, game_id, settings)

    def next_rules(self) -> dict[str, object]:
        """The rule keys a phone set for the next games, in the order they were set, as
        JSON gave them: checked by who uses them (config/next_rules.py)."""
        rows = self._read_all("SELECT key, value FROM next_rules ORDER BY rowid")
        rules: dict[str, object] = {}
        for key, text in rows:
            try:
                rules[str(key)] = json.loads(text)
            except (TypeError, ValueError, RecursionError):
                shown = repr(text) if len(repr(text)) <= 60 else f"{repr(text)[:60]}..."
                raise StoreError(self.path, f"next rules: bad value {shown} of {key!r}") from None
        return rules

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
        self._append(game_id, [Stored(inp.t_ns, _storable_words(inp))])

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
            raise _store_error(self.path, err) from err

    def latest_game(self) -> StoredGame | None:
        return self.game()

    def game(self, game_id: int | None = None, *, accepted: bool = False) -> StoredGame | None:
        """The game with this id (None: the latest), or None if there is none. Its inputs
        in event-time order, as it is replayed; `accepted`: in the order the ledger took
        them (a late input after those it came after)."""
        which = "" if game_id is None else "WHERE id = ?"
        # Event-time order: an input that came late was appended after later ones, and is
        # replayed in its place (docs/design.md, "Event time").
        order = "id" if accepted else "t_ns, id"
        try:
            # One read transaction: the game and its inputs as of one moment.
            self._conn.execute("BEGIN")
            try:
                if self._check_version() == 0:
                    return None  # an empty database: nothing was ever stored in it
                row = self._conn.execute(
                    f"SELECT id, started_at, settings, lobby FROM games {which}"
                    " ORDER BY id DESC LIMIT 1",
                    () if game_id is None else (game_id,),
                ).fetchone()
                if row is None:
                    return None
                head = self._head(row)
                rows = self._conn.execute(
                    f"SELECT id, t_ns, words FROM inputs WHERE game_id = ? ORDER BY {order}",
                    (head.id,),
                )
                # Read as they come, not fetched all first: a long game's rows would
                # take more memory than its inputs.
                inputs = self._inputs(head.id, rows)
                names = self.seat_names(head.id)
            finally:
                self._conn.execute("COMMIT")
        except sqlite3.Error as err:
            raise _store_error(self.path, err) from err
        return StoredGame(**vars(head), inputs=inputs, names=names)

    def games(self, *, through: int | None = None, limit: int = -1) -> list[ListedGame]:
        """The games, newest first, without their inputs: those with an id up to `through`
        (None: all), at most `limit` of them (-1: no limit). One look at each game's index
        entry for its latest input, whatever its length."""
        try:
            if self._check_version() == 0:
                return []  # an empty database: nothing was ever stored in it
            upto = "" if through is None else "WHERE id <= :through"
            rows = self._conn.execute(
                "SELECT id, started_at, settings, lobby,"
                " (SELECT coalesce(max(id), 0) FROM inputs WHERE game_id = games.id)"
                f" FROM games {upto} ORDER BY id DESC LIMIT :limit",
                {"through": through, "limit": limit},
            ).fetchall()
        except sqlite3.Error as err:
            raise _store_error(self.path, err) from err
        # The games listed are every one with an id between the last's and the first's.
        names = self._seated(rows[-1][0], rows[0][0]) if rows else {}
        read: dict[str, Settings] = {}
        return [
            ListedGame(
                **vars(self._head(row[:4], read)),
                last_input=row[4],
                names=tuple(names.get(row[0], ())),
            )
            for row in rows
        ]

    def versions(self, first: int = 0, last: int = ID_MAX) -> Iterator[tuple[int, int]]:
        """Each game's id and a number that changes whenever what `games` lists of it
        changes (its settings, its latest input, who sat where), of the games of ids
        `first` to `last`, oldest first, read
        as they come: a store of years is never held whole (the page's cache of summaries
        compares them with its own: referee/history/cache.py)."""
        try:
            if self._check_version() == 0:
                return  # an empty database: nothing was ever stored in it
            rows = self._conn.execute(
                "SELECT id, started_at, settings, lobby,"
                " (SELECT coalesce(max(id), 0) FROM inputs WHERE game_id = games.id),"
                " (SELECT group_concat(seat || ' ' || name, char(10)) FROM"
                "  (SELECT seats.seat, players.name FROM seats"
                "   JOIN players ON players.id = seats.player_id"
                "   WHERE seats.game_id = games.id ORDER BY seats.seat))"
                " FROM games WHERE id BETWEEN ? AND ? ORDER BY id",
                (first, last),
            )
            for row in rows:
                digest = hashlib.blake2b(repr(row[1:]).encode(), digest_size=8).digest()
                yield row[0], int.from_bytes(digest, signed=True)
        except sqlite3.Error as err:
            raise _store_error(self.path, err) from err

    def head(self, game_id: int) -> GameHead | None:
        """The game with this id without its inputs, or None if there is none."""
        row = self._read_one(
            "SELECT id, started_at, settings, lobby FROM games WHERE id = ?", game_id
        )
        return None if row is None else self._head(row)

    def find(self, head: GameHead) -> StoredGame | None:
        """The game `head` is, its inputs in the order accepted: the game of its id if it
        started when `head` did, else one written anew (under another id) that did."""
        row = self._read_one(
            "SELECT id FROM games WHERE started_at = ? ORDER BY id = ? DESC, id LIMIT 1",
            head.started_at.isoformat(),
            head.id,
        )
        return None if row is None else self.game(row[0], accepted=True)

    def _read_one(self, sql: str, *args: object) -> tuple[Any, ...] | None:
        try:
            if self._check_version() == 0:
                return None  # an empty database: nothing was ever stored in it
            row: tuple[Any, ...] | None = self._conn.execute(sql, args).fetchone()
        except sqlite3.Error as err:
            raise _store_error(self.path, err) from err
        return row

    def _read_all(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        try:
            if self._check_version() == 0:
                return []  # an empty database: nothing was ever stored in it
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as err:
            raise _store_error(self.path, err) from err

    def _seat(self, game_id: int, seat: object) -> int:
        if not isinstance(seat, int) or not 1 <= seat <= MAX_SEATS:
            raise StoreError(self.path, f"game {game_id}: bad seat {seat!r}")
        return seat

    def _name(self, where: str, name: object) -> str:
        """As strictly as a name the box ever kept: what a store holds may be damaged, and
        one kept before a name had to show something, or could not be a seat's label, is
        still read (names.kept_name)."""
        shown = repr(name) if len(repr(name)) <= 60 else f"{repr(name)[:60]}..."
        try:
            if isinstance(name, str) and kept_name(name) == name:
                return name
            why = "not as the box writes names"
        except ValueError as err:
            why = str(err)
        raise StoreError(self.path, f"{where}: bad name {shown}: {why}")

    def _head(self, row: tuple[Any, ...], read: dict[str, Settings] | None = None) -> GameHead:
        """`read`: the settings read so far, by their text: most games share theirs."""
        game_id, started_at, settings, lobby = row
        if read is None or (typed := read.get(settings)) is None:
            typed = self._settings(game_id, settings)
            if read is not None:
                read[settings] = typed
        return GameHead(
            id=game_id,
            settings=typed,
            lobby=bool(lobby),
            started_at=self._started_at(game_id, started_at),
        )

    def count_inputs(self, game_id: int) -> int:
        row = self._read_one("SELECT count(*) FROM inputs WHERE game_id = ?", game_id)
        return 0 if row is None else int(row[0])

    def _check_version(self) -> int:
        """The schema version, refusing a file that is not our store or is newer than us."""
        version: int = self._conn.execute("PRAGMA user_version").fetchone()[0]
        app: int = self._conn.execute("PRAGMA application_id").fetchone()[0]
        if app != APPLICATION_ID and (
            app != 0
            or version != 0
            or self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        ):
            raise StoreError(self.path, "an SQLite database, but not a referee store")
        if version > SCHEMA_VERSION:
            raise StoreError(
                self.path,
                f"store schema version {version} is newer than this referee knows"
                f" ({SCHEMA_VERSION}): upgrade referee",
            )
        return version

    def _migrate(self) -> None:
        while True:
            with self._writing() as conn:
                # Read again under the write lock: another process may have migrated it.
                version = self._check_version()
                if version == SCHEMA_VERSION:
                    return
                for sql in MIGRATIONS[version]:
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
            raise _store_error(self.path, err) from err
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
        conn = _connect_writer(self.path)
        self._conn.close()
        self._conn = conn
        self._unwritable = None
        log.info("%s: writable again", self.path)

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
            raise _store_error(self.path, err) from err
        self._conn.close()
        os.close(self._lock_fd)
        self._lock_fd = None
        if store_lock.holder_beside(self.path) is None:  # else another process's now
            for beside in (wal_path(self.path), shm_path(self.path)):  # SQLite leaves them
                with suppress(OSError):  # when its file was moved
                    beside.unlink(missing_ok=True)
        self._conn = memory
        self._lost = f"store file {gone}"
        log.warning("%s: the %s under the running referee: kept in memory", self.path, self._lost)
        return gone

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
            raise self._not_anew(_store_error(self.path, err).reason) from err
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
            raise _store_error(self.path, err) from err

    def _settings(self, game_id: int, text: object) -> Settings:
        """As strictly as a settings file reads them: what a store holds may be damaged."""
        try:
            values = json.loads(text) if isinstance(text, str) else None
            if not isinstance(values, dict):
                raise ValueError("not a JSON object")
            return settings_typed(values)
        except (ValueError, RecursionError) as err:  # Recursion: JSON nested too deep
            shown = repr(text) if len(repr(text)) <= 100 else f"{repr(text)[:100]}..."
            why = "nested too deeply" if isinstance(err, RecursionError) else err
            raise StoreError(self.path, f"game {game_id}: bad settings {shown}: {why}") from None

    def _started_at(self, game_id: int, text: str) -> datetime:
        try:
            return datetime.fromisoformat(text)
        except (ValueError, TypeError) as err:
            raise StoreError(self.path, f"game {game_id}: bad start time {text!r}") from err

    def _inputs(self, game_id: int, rows: Iterable[tuple[int, int, str]]) -> tuple[Input, ...]:
        # A game says the same few things over and over: each is read once.
        makers: dict[str, Callable[[int], Input]] = {}
        inputs = []
        for input_id, t_ns, text in rows:
            make = makers.get(text)
            if make is None:
                try:
                    make = makers[text] = input_maker(str(text))
                except ValueError as err:
                    raise StoreError(
                        self.path, f"game {game_id}, input {input_id} ({text!r}): {err}"
                    ) from err
            inputs.append(make(t_ns))
        return tuple(inputs)


@dataclass(frozen=True)
class Stored:
    """An input as the ledger keeps it: its time and its replay words."""

    t_ns: int
    words: str


@dataclass(frozen=True)
class Change:
    """What the table was shown while the game runs (a seat's player, the next games'
    rules), waiting for the disk like an input."""

    said: str  # what it is, for the log should the disk never take it: "P2 is Ann"
    # Into the store, in one transaction; ValueError: the caller asked the impossible.
    write: Callable[[Store], None]
    # From the writer's thread: None once on the disk; else why not, each time it fails.
    done: Callable[[str | None], None]


def settings_json(settings: Settings) -> str:
    """A game's settings as the store's `settings` column (and a rescue file) keep them."""
    return json.dumps(settings_values(settings))


def _storable_words(inp: Input) -> str:
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


def _connect_writer(path: Path) -> sqlite3.Connection:
    """A connection that writes durably, in WAL mode; StoreError if there can be none."""
    try:
        # Not checked for its thread: a ledger's writer commits on it (Ledger.write_behind),
        # one thread at a time (Store).
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as err:
        raise _store_error(path, err) from err
    try:
        # Answers with the mode it got, not an error, where WAL is not possible.
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            raise StoreError(path, f"cannot use write-ahead logging (journal mode {mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as err:
        conn.close()
        raise _store_error(path, err) from err
    except BaseException:
        conn.close()
        raise
    return conn


def _store_error(path: Path, err: sqlite3.Error) -> StoreError:
    code = getattr(err, "sqlite_errorcode", None)
    reason = _REASONS.get(code & 0xFF) if code is not None else None
    if reason in _REASONS.values():
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
        return _REASONS[sqlite3.SQLITE_READONLY]
    if disk.f_bavail == 0:
        return _REASONS[sqlite3.SQLITE_FULL]
    return None


class Ledger:
    """One game's inputs saved in order, without ever failing for storage trouble.

    What the disk cannot take now is kept in memory and written first on the next
    append or flush. The main loop shows an input's effects either way (a full disk
    does not stop a game) and puts `trouble` on the screen while inputs wait; it is
    there from the start when the disk takes nothing then.

    `append` writes at once. After `write_behind`, it only queues the input, and a thread
    of the ledger's own writes what waits: each write takes every input waiting when it
    begins, in order, in one transaction (group commit), so the caller never waits for
    the disk, and the disk always holds the game's inputs up to some point, never one
    without those before it.
    """

    def __init__(self, store: Store, game_id: int) -> None:
        self.store = store
        self.game_id = game_id
        head = store.head(game_id)
        if head is None:
            raise ValueError(f"{store.path}: no game {game_id}")
        self.head = head  # what a rescue file needs, should the store fail later
        self._unsaved: deque[Stored] = deque()
        self._changes: deque[Change] = deque()  # written after the inputs waiting with them
        self._reason: str | None = None  # set while the disk refuses
        self.saved = store.count_inputs(game_id)  # the game's inputs on the disk
        # Guards the three above for the writer's thread; notified when it has news.
        self._news = threading.Condition()
        self._one_write = threading.Lock()  # at a time: the writer thread's or flush()'s
        self._writer: threading.Thread | None = None
        self._idle = False  # the writer's thread waits for news
        self._stopping = False
        self.flush(check=True)

    @property
    def pending(self) -> int:
        """The inputs not on the disk yet: waiting, or being written."""
        return len(self._unsaved)

    @property
    def unsaved(self) -> tuple[Stored, ...]:
        """The inputs waiting for the disk, oldest first."""
        with self._news:
            return tuple(self._unsaved)

    @property
    def unsaved_changes(self) -> tuple[Change, ...]:
        """The changes shown while the game ran that the disk has not taken yet."""
        with self._news:
            return tuple(self._changes)

    @property
    def reason(self) -> str | None:
        """Why the disk refuses, in a few words ("disk full"), while it does."""
        return self._reason

    @property
    def trouble(self) -> str | None:
        with self._news:
            reason, n = self._reason, len(self._unsaved)
        if reason is None:
            return None
        if n == 0:
            return f"storage trouble: {reason}: inputs will wait in memory"
        return f"storage trouble: {reason}, {n} input{'' if n == 1 else 's'} not yet saved"

    def check_path(self) -> str | None:
        """The store's file deleted or moved away under the running daemon is written anew
        at its path at once, or as soon as it can be (till then the inputs wait in memory,
        as for a full disk, and at the exit go to a rescue file): what to tell the table,
        the first time; else None."""
        if self.store.gone() is None:  # the common case: no wait for a write under way
            return None
        try:
            # The store's connection is the writer's thread's while it writes.
            with self._one_write:
                gone = self.store.follow_path()
        except StoreError as err:  # the disk fails reading the moved file: try again later
            log.error("cannot tell whether the store file is still there: %s", err)
            return None
        if gone is None:
            return None
        kept = "written anew" if self.flush(check=True) else "inputs wait in memory"
        return f"store file {gone}: {kept}"

    def append(self, inp: Input) -> bool:
        """Save the input after those still waiting; True if all of them are on the disk
        now. Written behind: queued for the writer's thread, and False."""
        # Checked here, once: a bad input raises before it can block those after it.
        stored = Stored(inp.t_ns, _storable_words(inp))
        with self._news:
            self._unsaved.append(stored)
            if self._writer is not None:
                self._news.notify_all()
                return False
        return self.flush()

    def keep(self, change: Change) -> None:
        """Write the change as an input is written (at once, or behind the loop), after the
        inputs waiting now; its `done` says when it is on the disk."""
        with self._news:
            self._changes.append(change)
            if self._writer is not None:
                self._news.notify_all()
                return
        self.flush()

    def hand_over(self) -> None:
        """Written behind: wait, at most HANDOFF_S, until the writer's thread, woken for
        the inputs appended, has the GIL. A loop that never sleeps (drawing) would keep
        the GIL from it, as it kept it from the sound's thread (outputs/sound.py,
        QueuedSpeaker.play); awake, the thread takes what waits and lets the GIL go at
        its first call into SQLite."""
        with self._news:
            if self._idle and self._unsaved:
                self._news.wait_for(lambda: not self._idle, HANDOFF_S)

    def flush(self, *, check: bool = False) -> bool:
        """Save the waiting inputs now, oldest first; True when none is left and the disk
        takes writes. check: write to find out even with nothing waiting. Waits for the
        writer's thread to finish the write it is doing."""
        with self._one_write:
            while True:
                with self._news:
                    batch, reason = list(islice(self._unsaved, BATCH_MAX)), self._reason
                    # A change once every input before it is on the disk.
                    change = self._changes[0] if self._changes and not batch else None
                if not batch and change is None and not check and reason is None:
                    return True
                try:
                    if batch:
                        self.store._append(self.game_id, batch)
                    elif change is not None:
                        change.write(self.store)
                    else:
                        self.store.check_writable()
                except StoreError as err:
                    self._refused(err, reason)
                    for one in self.unsaved_changes:  # those behind the inputs refused too
                        one.done(f"not saved yet: {err.reason}")
                    return False
                except ValueError as err:
                    if change is None:
                        raise
                    log.error("not saved: %s: %s", change.said, err)  # the caller's mistake
                    with self._news:
                        self._changes.popleft()
                    change.done(str(err))
                    continue
                with self._news:
                    for _ in batch:
                        self._unsaved.popleft()
                    if change is not None:
                        self._changes.popleft()
                    self.saved += len(batch)
                    self._reason = None
                if change is not None:
                    change.done(None)
                if reason is not None:
                    log.info("storage trouble over: every input is saved to %s", self.store.path)
                check = False

    def _refused(self, err: StoreError, reason: str | None) -> None:
        """The disk refused a write; `reason`: why it refused the one before, if it did."""
        if err.reason != reason:
            log.warning(
                "storage trouble: %s (%s); inputs wait in memory, %d now",
                err,
                err.__cause__,
                self.pending,
            )
        with self._news:
            self._reason = err.reason

    def write_behind(self, told: Callable[[], None]) -> None:
        """From now on, `append` queues and a thread writes; `told()` (from that thread)
        when storage trouble begins or is over. While the disk refuses, the thread tries
        again every RETRY_S, and at every new input."""
        self._writer = threading.Thread(
            target=self._write, args=(told,), name="ledger", daemon=True
        )
        self._writer.start()

    def _write(self, told: Callable[[], None]) -> None:
        retry_s: float | None = None  # None: until an input comes
        while True:
            with self._news:
                idle = not self._unsaved and not self._changes
                if not self._stopping and (retry_s is not None or idle):
                    self._idle = True
                    self._news.wait(retry_s)
                    self._idle = False
                    self._news.notify_all()  # the hand-over is over
                if self._stopping:
                    return
                was = self._reason
            saved = self.flush()
            if self._reason != was:
                told()
            retry_s = None if saved else RETRY_S

    def close(self) -> None:
        """Stop the writer's thread once its write in progress is done; what still waits
        stays waiting (flush it, keep it: rescue.keep, or write it behind again)."""
        with self._news:
            self._stopping = True
            self._news.notify_all()
        if self._writer is not None:
            self._writer.join()
            self._writer = None
        self._stopping = False
