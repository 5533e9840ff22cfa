"""The ledger: every accepted input of every game, in order, in one SQLite file.

The state is never stored: it is always the replay of a game's inputs, so reopening
the file resumes the game exactly (DESIGN.md, "The store"). An input is kept as its
replay-script words (`press 2`, `end left=3`) and its game-clock time, and read back
with the replay parser: one grammar for scripts and the ledger.

    with Store.open(default_store_path()) as store:
        ledger = Ledger(store, store.new_game(settings, lobby=True))
        if not ledger.append(Press(player=2, t_ns=12_300_000)):
            show(ledger.trouble)  # kept in memory, saved on a later append or flush()

Durability: WAL with synchronous=FULL, one transaction per input, so an input is on
the disk before `append` returns (NORMAL may lose the last commits on a power cut).
"""

import gc
import json
import logging
import os
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self

import platformdirs

from .rules import (
    Input,
    Settings,
    State,
    input_maker,
    parse_input,
    replay,
    settings_from,
    settings_values,
    words,
)

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
)
SCHEMA_VERSION = len(MIGRATIONS)

# What the screen says for the failures that can come and go while a game runs.
_REASONS = {
    sqlite3.SQLITE_FULL: "disk full",
    sqlite3.SQLITE_IOERR: "I/O error",
    sqlite3.SQLITE_READONLY: "read-only storage",
}


class StoreError(Exception):
    """The store cannot be opened, read or written; `reason` is short enough for a screen."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


# Where the systemd unit's StateDirectory=referee keeps the box's ledger.
SERVICE_STORE = Path("/var/lib/referee/referee.db")


def default_store_path(*, reading: bool = False) -> Path:
    """systemd's StateDirectory when the daemon runs as a unit, else the user's data dir.

    To read (`referee state` from a login shell on the box), the installed service's
    ledger is the one meant when the user has none of their own.
    """
    state_directory = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    if state_directory:
        return Path(state_directory) / "referee.db"
    mine = platformdirs.user_data_path("referee") / "referee.db"
    if reading and not mine.exists() and SERVICE_STORE.exists():
        return SERVICE_STORE
    return mine


@dataclass(frozen=True)
class StoredGame:
    id: int
    settings: Settings
    lobby: bool  # the game started in the lobby (else every seat played from the start)
    started_at: datetime
    inputs: tuple[Input, ...]

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
    """One store file. Open it with `Store.open` (to write) or `Store.open_readonly`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn

    @classmethod
    def open(cls, path: Path) -> Self:
        """Open the store to write, creating it (and its directory) or migrating it."""
        if path.exists():
            # Look with a connection that cannot write before one that can: a file that
            # is not our store, or is newer than us, must be left exactly as it was.
            with cls._connect_readonly(path) as probe, probe._closed_on_error():
                probe._check_version()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None)
        except OSError as err:
            raise StoreError(path, f"cannot create its directory: {err.strerror}") from err
        except sqlite3.Error as err:
            raise _store_error(path, err) from err
        store = cls(path, conn)
        with store._closed_on_error():
            # Answers with the mode it got, not an error, where WAL is not possible.
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":
                raise StoreError(path, f"cannot use write-ahead logging (journal mode {mode})")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            store._migrate()
        return store

    @classmethod
    def open_readonly(cls, path: Path) -> Self:
        """Open the store to read, also while a daemon writes it; creates and changes nothing."""
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
        try:
            with path.open("rb") as file:
                header = file.read(len(SQLITE_HEADER))
        except FileNotFoundError:
            raise StoreError(path, "no such file") from None
        except OSError as err:
            raise StoreError(path, f"cannot read: {err.strerror}") from err
        if header and header != SQLITE_HEADER:
            raise StoreError(path, "not an SQLite database, so not a referee store")
        # With no -wal file, no connection has the store open and all of it is in the
        # main file; a plain mode=ro connection would create -wal and -shm files and
        # leave them behind. immutable=1 reads without them (and without locks).
        wal = path.with_name(path.name + "-wal")
        immutable = "" if wal.exists() else "&immutable=1"
        uri = f"{path.absolute().as_uri()}?mode=ro{immutable}"
        try:
            return cls(path, sqlite3.connect(uri, isolation_level=None, uri=True))
        except sqlite3.Error as err:
            raise _store_error(path, err) from err

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def new_game(self, settings: Settings, *, lobby: bool) -> int:
        started_at = datetime.now(UTC).isoformat()
        with self._writing() as conn:
            cursor = conn.execute(
                "INSERT INTO games (started_at, rules, settings, lobby) VALUES (?, ?, ?, ?)",
                (started_at, settings.rules.value, json.dumps(settings_values(settings)), lobby),
            )
        game_id = cursor.lastrowid
        assert game_id is not None  # an INSERT always sets it
        return game_id

    def append(self, game_id: int, inp: Input) -> None:
        """Add an input to a game; it is on the disk when this returns, or StoreError."""
        self._append(game_id, Stored(inp.t_ns, _storable_words(inp)))

    def _append(self, game_id: int, stored: "Stored") -> None:
        """Write an input already checked to read back as itself."""
        try:
            with self._writing() as conn:
                conn.execute(
                    "INSERT INTO inputs (game_id, t_ns, words) VALUES (?, ?, ?)",
                    (game_id, stored.t_ns, stored.words),
                )
        except sqlite3.IntegrityError as err:
            raise ValueError(f"{self.path}: no game {game_id}") from err

    def latest_game(self) -> StoredGame | None:
        try:
            # One read transaction: the game and its inputs as of one moment.
            self._conn.execute("BEGIN")
            try:
                if self._check_version() == 0:
                    return None  # an empty database: nothing was ever stored in it
                game = self._conn.execute(
                    "SELECT id, started_at, settings, lobby FROM games ORDER BY id DESC LIMIT 1"
                ).fetchone()
                if game is None:
                    return None
                game_id, started_at, settings, lobby = game
                rows = self._conn.execute(
                    "SELECT id, t_ns, words FROM inputs WHERE game_id = ? ORDER BY id",
                    (game_id,),
                )
                # Read as they come, not fetched all first: a long game's rows would
                # take more memory than its inputs.
                inputs = self._inputs(game_id, rows)
            finally:
                self._conn.execute("COMMIT")
        except sqlite3.Error as err:
            raise _store_error(self.path, err) from err
        return StoredGame(
            id=game_id,
            settings=self._settings(game_id, settings),
            lobby=bool(lobby),
            started_at=self._started_at(game_id, started_at),
            inputs=inputs,
        )

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

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed (durably) at the end, rolled back on error."""
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

    def _settings(self, game_id: int, text: str) -> Settings:
        try:
            values = json.loads(text)
            if not isinstance(values, dict):
                raise ValueError("not a JSON object")
            return settings_from(values)
        except (ValueError, TypeError) as err:
            raise StoreError(self.path, f"game {game_id}: bad settings {text!r}: {err}") from err

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


def _store_error(path: Path, err: sqlite3.Error) -> StoreError:
    code = getattr(err, "sqlite_errorcode", None)
    reason = _REASONS.get(code & 0xFF) if code is not None else None
    return StoreError(path, reason or str(err))


class Ledger:
    """One game's inputs saved in order, without ever failing for storage trouble.

    What the disk cannot take now is kept in memory and written first on the next
    append or flush. The main loop shows an input's effects either way (a full disk
    does not stop a game) and puts `trouble` on the screen while inputs wait.
    """

    def __init__(self, store: Store, game_id: int) -> None:
        self.store = store
        self.game_id = game_id
        self._unsaved: deque[Stored] = deque()
        self._reason: str | None = None  # set while inputs wait for the disk

    @property
    def pending(self) -> int:
        return len(self._unsaved)

    @property
    def trouble(self) -> str | None:
        if self._reason is None:
            return None
        n = len(self._unsaved)
        return f"storage trouble: {self._reason}, {n} input{'' if n == 1 else 's'} not yet saved"

    def append(self, inp: Input) -> bool:
        """Save the input after those still waiting; True if all of them are on the disk now."""
        # Checked here, once: a bad input raises before it can block those after it.
        self._unsaved.append(Stored(inp.t_ns, _storable_words(inp)))
        return self.flush()

    def flush(self) -> bool:
        """Try again to save the waiting inputs, oldest first; True when none is left."""
        while self._unsaved:
            try:
                self.store._append(self.game_id, self._unsaved[0])
            except StoreError as err:
                if err.reason != self._reason:
                    log.warning(
                        "storage trouble: %s (%s); inputs wait in memory, %d now",
                        err,
                        err.__cause__,
                        len(self._unsaved),
                    )
                self._reason = err.reason
                return False
            self._unsaved.popleft()
        if self._reason is not None:
            log.info("storage trouble over: every input is saved to %s", self.store.path)
            self._reason = None
        return True
