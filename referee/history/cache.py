"""Every game's summary in an SQLite file of the page's own, beside the store (as the
PIN is): a store of years would not fit the page's memory, a table of numbers on the disk
does (docs/design.md, "The page", its history and stats).

A game's row is kept under the store's `versions` number, and made anew only when that
changes (an input, its settings, who sat where). The store is the daemon's and is never
written here. The file is a cache: one that is corrupt, of another format or another
store is thrown away and made anew, with one line in the log; where it cannot be written,
the cache is in memory (the summaries are then the process's, as before the file).

One thread at a time uses a SummaryCache: the page's reading thread (web/worker.py).
"""

import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

from referee.errors import StoreError
from referee.rules import Phase, Result
from referee.store.paths import shm_path, wal_path
from referee.store.reads import ListedGame

from .summary import GameSummary, player_of, summary_array

log = logging.getLogger(__name__)

# A file of ours ('RfPc'), and the format of its tables: another is made anew.
APPLICATION_ID = 0x52665063
FORMAT = 2
# SQLite's page cache for this connection (its default is 2 MB): the queries walk
# indexes, and the page has 40 MB in all.
CACHE_KIB = 256
_TABLES = (
    """CREATE TABLE games (
        id INTEGER PRIMARY KEY,  -- the store's
        version INTEGER NOT NULL,  -- the store's `versions` number it was made from
        started_at TEXT NOT NULL,
        rules TEXT NOT NULL,
        phase TEXT NOT NULL,
        result TEXT,
        calls INTEGER NOT NULL,
        rounds INTEGER NOT NULL,
        last_ns INTEGER NOT NULL,
        tallies BLOB NOT NULL  -- summary.py's packed seats, as the history shows them
    )""",
    # The seats again, a row each, for the stats and the exports to add up in SQL.
    """CREATE TABLE seats (
        game_id INTEGER NOT NULL,
        n INTEGER NOT NULL,  -- the seat's place among the game's players
        seat INTEGER NOT NULL,
        player TEXT NOT NULL,  -- stats.player_of
        named INTEGER NOT NULL,  -- a name the ledger keeps, not the seat's label
        started INTEGER NOT NULL,  -- the game left the lobby: it counts in the stats
        points INTEGER NOT NULL,
        place INTEGER,
        won INTEGER NOT NULL,
        sets INTEGER NOT NULL,
        mistakes INTEGER NOT NULL,
        rounds_won INTEGER NOT NULL,
        rounds_lost INTEGER NOT NULL,
        PRIMARY KEY (game_id, n)
    )""",
    "CREATE INDEX seats_by_player ON seats (player, named, game_id) WHERE started",
    # The margins of the calls judged valid for a player, in games that started.
    """CREATE TABLE margins (
        game_id INTEGER NOT NULL, player TEXT NOT NULL, named INTEGER NOT NULL, ns INTEGER NOT NULL
    )""",
    "CREATE INDEX margins_by_player ON margins (player, named, ns)",
    "CREATE INDEX margins_by_game ON margins (game_id)",
    "CREATE TABLE about (store TEXT NOT NULL)",  # the store the rows are of
)


class SummaryCache:
    def __init__(self, path: Path | None, store: Path) -> None:
        """`path` None: in memory. Opened at its first use, on the thread that uses it."""
        self.path = path
        self._store = str(store.resolve())
        self._conn: sqlite3.Connection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def versions(self) -> Iterator[tuple[int, int]]:
        """Each game's id and version, by id, as they come."""
        with self._guarded() as conn:
            yield from conn.execute("SELECT id, version FROM games ORDER BY id")

    def summaries(self, listed: Iterable[tuple[ListedGame, int]]) -> dict[int, GameSummary]:
        """The summaries kept of these games (each with its version), by id; a game of
        another version has none."""
        wanted = {g.id: (g, v) for g, v in listed}
        found = {}
        with self._guarded() as conn:
            for row in conn.execute(
                "SELECT id, version, phase, result, calls, rounds, last_ns, tallies FROM games"
                f" WHERE id IN ({','.join('?' * len(wanted))})",
                list(wanted),
            ):
                game, version = wanted[row[0]]
                if row[1] == version:
                    found[row[0]] = _summary(game, row[2:])
        return found

    def put(self, made: Sequence[tuple[GameSummary, int]]) -> None:
        """Keep these summaries (each with the version it was made from), in place of any
        of the same games."""
        with self._guarded() as conn, conn:
            self._delete(conn, [s.game.id for s, _ in made])
            for summary, version in made:
                head = summary.game
                conn.execute(
                    "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        head.id, version, head.started_at.isoformat(),
                        head.settings.rules.value, summary.phase.value,
                        None if summary.result is None else summary.result.value,
                        summary.calls, summary.rounds, summary.last_ns,
                        summary.tallies.tobytes(),
                    ),
                )  # fmt: skip
                names = dict(head.names)
                for n, t in enumerate(summary.seats):
                    who, named = player_of(head, t.seat), t.seat in names
                    conn.execute(
                        "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            head.id, n, t.seat, who, named, summary.started, t.points, t.place,
                            t.won, t.sets, t.mistakes, t.rounds_won, t.rounds_lost,
                        ),
                    )  # fmt: skip
                    if summary.started:
                        conn.executemany(
                            "INSERT INTO margins VALUES (?, ?, ?, ?)",
                            ((head.id, who, named, m) for m in t.margins_ns),
                        )

    def forget(self, ids: Sequence[int]) -> None:
        """Games no longer in the store (written anew under other ids)."""
        with self._guarded() as conn, conn:
            self._delete(conn, ids)

    def query(self, sql: str, *args: object) -> Iterator[tuple[Any, ...]]:
        """The rows of a read of the tables above, as they come (stats.py, export.py)."""
        with self._guarded() as conn:
            yield from conn.execute(sql, args)

    @staticmethod
    def _delete(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
        for table, column in (("games", "id"), ("seats", "game_id"), ("margins", "game_id")):
            conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", ((i,) for i in ids))

    @contextmanager
    def _guarded(self) -> Iterator[sqlite3.Connection]:
        """The connection; a file found corrupt while in use is made anew, and the
        request that found it is told to ask again (a 503, never a traceback)."""
        try:
            yield self._opened()
        except sqlite3.DatabaseError as err:
            if self.path is None:
                raise
            log.warning("%s: %s: the page's cache of summaries is made anew", self.path, err)
            self.close()
            _remove(self.path)
            raise StoreError(self.path, "the page's cache was unreadable: ask again") from None

    def _opened(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        if self.path is not None:
            try:
                return self._open_file(self.path)
            except (sqlite3.Error, OSError) as err:
                log.warning(
                    "%s: cannot write the page's cache of summaries (%s): kept in memory",
                    self.path,
                    err,
                )
                self.path = None
        memory = sqlite3.connect(":memory:", check_same_thread=False)
        memory.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        return self._made(memory)

    def _open_file(self, path: Path) -> sqlite3.Connection:
        if path.exists():
            why = self._unusable(path)
            if why is None:
                return self._tuned(sqlite3.connect(path, check_same_thread=False))
            log.warning("%s: %s: the page's cache of summaries is made anew", path, why)
            _remove(path)
        return self._made(self._tuned(sqlite3.connect(path, check_same_thread=False)))

    def _unusable(self, path: Path) -> str | None:
        """Why the file at `path` may not be used as it is; None if it may."""
        try:
            with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
                app = conn.execute("PRAGMA application_id").fetchone()[0]
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if (app, version) != (APPLICATION_ID, FORMAT):
                    return f"not this page's cache of format {FORMAT}"
                if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                    return "corrupt"
                store = conn.execute("SELECT store FROM about").fetchone()
                if store != (self._store,):
                    return "the cache of another store"
        except sqlite3.DatabaseError as err:
            return str(err)
        return None

    @staticmethod
    def _tuned(conn: sqlite3.Connection) -> sqlite3.Connection:
        # WAL: its -wal and -shm are made once, where a rollback journal would be made
        # and deleted at every write, and each would wake whoever watches the store's
        # folder (store/watch.py: the daemon's loop, the page's follower). A cache needs
        # no fsync: a file a power cut spoilt is found so at the next start.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        return conn

    def _made(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        with conn:
            for sql in _TABLES:
                conn.execute(sql)
            conn.execute("INSERT INTO about VALUES (?)", (self._store,))
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {FORMAT}")
        return conn


def _summary(game: ListedGame, row: Sequence[Any]) -> GameSummary:
    phase, result, calls, rounds, last_ns, tallies = row
    return GameSummary(
        game=game,
        phase=Phase(phase),
        result=None if result is None else Result(result),
        tallies=summary_array(tallies),
        calls=calls,
        rounds=rounds,
        last_ns=last_ns,
    )


def _remove(path: Path) -> None:
    for name in (path, wal_path(path), shm_path(path)):
        with suppress(FileNotFoundError):
            name.unlink()
