"""The store's schema: its tables, and the steps that take an older store to them.

Each step of MIGRATIONS takes the schema from the version of its index to the next, in one
transaction; a store is migrated when it is opened to write (store.py). PRAGMA
application_id marks the file as a referee store, user_version as its schema's version.
"""

import sqlite3
from pathlib import Path

from referee.errors import StoreError

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


def version(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version, refusing a file that is not our store or is newer than us."""
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    app: int = conn.execute("PRAGMA application_id").fetchone()[0]
    if app != APPLICATION_ID and (
        app != 0 or version != 0 or conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    ):
        raise StoreError(path, "an SQLite database, but not a referee store")
    if version > SCHEMA_VERSION:
        raise StoreError(
            path,
            f"store schema version {version} is newer than this referee knows"
            f" ({SCHEMA_VERSION}): upgrade referee",
        )
    return version
