"""What a store's readers ask of it: the games, their inputs and who sat where, the
players, the rules a phone set; as the page, the history, `referee state` and the daemon
read them. Every read is checked as strictly as a settings file: what a store holds may
have been damaged.
"""

import gc
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from referee.errors import StoreError
from referee.names import kept_name
from referee.rules import Input, Settings, State, input_maker, replay, report, settings_typed
from referee.units import ID_MAX, MAX_SEATS

from . import schema
from .connect import store_error


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


class Reads:
    """The read API of a store's connection (`Store`'s), one thread at a time."""

    path: Path
    _conn: sqlite3.Connection

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
            raise store_error(self.path, err) from err
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
            raise store_error(self.path, err) from err
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
            raise store_error(self.path, err) from err

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
            raise store_error(self.path, err) from err
        return row

    def _read_all(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        try:
            if self._check_version() == 0:
                return []  # an empty database: nothing was ever stored in it
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as err:
            raise store_error(self.path, err) from err

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
        return schema.version(self._conn, self.path)

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
