"""The exports: games, calls and stats as flat rows, written as CSV or as JSON.

One row shape for both (docs/web.md, "Exports"): the JSON twin is the same rows, each an
object keyed by the CSV's columns. In the CSV a yes or no is 1 or 0 and nothing is an
empty field, and a text that a spreadsheet would take for a formula has a ' in front.
"""

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TextIO

from referee.rules.report import milliseconds
from referee.rules.timeline import Timeline

from .cache import SummaryCache
from .stats import PlayerStats
from .summary import GameSummary, player_of

Row = dict[str, Any]
_FORMULA = ("=", "+", "-", "@", "\t", "\r")

GAME_COLUMNS = (
    "game",
    "started_at",
    "rules",
    "phase",
    "result",
    "seat",
    "player",
    "points",
    "place",
    "won",
    "sets",
    "mistakes",
    "super_won",
    "super_lost",
)
CALL_COLUMNS = (
    "game",
    "call",
    "at_ms",
    "super",
    "seat",
    "player",
    "press_ms",
    "turn",
    "verdict",
    "verdict_ms",
    "points",
    "margin_ms",
)
STATS_COLUMNS = (
    "player",
    "games",
    "wins",
    "sets",
    "mistakes",
    "super_won",
    "super_lost",
    "median_margin_ms",
)


def game_rows(cache: SummaryCache, after: int = 0, games: int = -1) -> Iterator[Row]:
    """A row for each player of each game, oldest game first, as the cache's rows come;
    a game nobody joined has one row, its player's columns empty. The games after the id
    `after`, at most `games` of them (-1: all)."""
    for row in cache.query(
        "SELECT id, started_at, rules, phase, result, seat, player, points, place, won,"
        " sets, mistakes, rounds_won, rounds_lost"
        " FROM (SELECT * FROM games WHERE id > ? ORDER BY id LIMIT ?) AS games"
        " LEFT JOIN seats ON seats.game_id = games.id ORDER BY id, n",
        after,
        games,
    ):
        out = dict(zip(GAME_COLUMNS, row, strict=True))
        if out["won"] is not None:
            out["won"] = bool(out["won"])
        yield out


def games_piece(cache: SummaryCache, kind: str, after: int, games: int) -> tuple[str, int]:
    """The games' export's rows of at most `games` games after the id `after`, as CSV
    lines or as the JSON twin's objects (joined by ", ", as `as_json` joins them), and the
    id of the last game in them (0: none): a file of every game is sent a piece at a
    time, never held whole."""
    rows = list(game_rows(cache, after, games))
    if not rows:
        return "", 0
    if kind == "csv":
        out = io.StringIO()
        _write_rows(out, GAME_COLUMNS, rows)
        text = out.getvalue()
    else:
        text = ", ".join(json.dumps(row, ensure_ascii=False) for row in rows)
    return text, rows[-1]["game"]


def call_rows(games: Iterable[tuple[GameSummary, Timeline]]) -> Iterator[Row]:
    """A row for each press of each call: its callers' with their verdicts, then the
    photo finish's later presses; the games oldest first."""
    for game, line in sorted(games, key=lambda g: g[0].game.id):
        head = game.game
        for n, record in enumerate(line.calls, 1):
            call = record.call
            judged = {r.seat: r for r in record.rulings}
            for seat, t_ns in call.presses:
                ruling = judged.get(seat)
                margin = record.margin_ns(seat) if seat in call.callers else None
                yield {
                    "game": head.id,
                    "call": n,
                    "at_ms": milliseconds(record.at_ns),
                    "super": call.super_round,
                    "seat": seat,
                    "player": player_of(head, seat),
                    "press_ms": milliseconds(call.offset_ns(t_ns)),
                    "turn": call.callers.index(seat) + 1 if seat in call.callers else None,
                    "verdict": None if ruling is None else ruling.judgement.value,
                    "verdict_ms": None if ruling is None else milliseconds(ruling.at_ns),
                    "points": None if ruling is None else ruling.delta,
                    "margin_ms": None if margin is None else milliseconds(margin),
                }


def stats_rows(players: Iterable[PlayerStats]) -> Iterator[Row]:
    for p in players:
        yield {
            "player": p.player,
            "games": p.games,
            "wins": p.wins,
            "sets": p.sets,
            "mistakes": p.mistakes,
            "super_won": p.rounds_won,
            "super_lost": p.rounds_lost,
            "median_margin_ms": p.median_margin_ms,
        }


def as_csv(columns: Sequence[str], rows: Iterable[Row]) -> str:
    out = io.StringIO()
    write_csv(out, columns, rows)
    return out.getvalue()


def write_csv(out: TextIO, columns: Sequence[str], rows: Iterable[Row]) -> None:
    """The header row, then the rows, as they come."""
    _writer(out).writerow(columns)
    _write_rows(out, columns, rows)


def csv_header(columns: Sequence[str]) -> str:
    out = io.StringIO()
    _writer(out).writerow(columns)
    return out.getvalue()


def _write_rows(out: TextIO, columns: Sequence[str], rows: Iterable[Row]) -> None:
    writer = _writer(out)
    for row in rows:
        writer.writerow(_csv_value(row[c]) for c in columns)


def _writer(out: TextIO) -> Any:
    return csv.writer(out, lineterminator="\r\n")  # RFC 4180's line end


def as_json(rows: Iterable[Row], **more: object) -> str:
    """The rows, and what else the export says (the next page's `before`)."""
    return json.dumps({"rows": list(rows), **more}, ensure_ascii=False)


def _csv_value(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value.startswith(_FORMULA):
        # A spreadsheet would run a text cell that starts like a formula (a player's name,
        # once seats have names): a quote in front keeps it text.
        return "'" + value
    return value
