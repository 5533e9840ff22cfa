"""Each player's numbers over every game in the store (docs/web.md, "Stats"), added up
by SQL over the page's cache (cache.py), a player at a time: never every game at once.

A player is who sat in a seat (summary.player_of): the cache keeps each seat's player,
and whether the ledger named them. A seat nobody named counts apart from any name: a
ledger kept before a seat's label was refused as a name may hold a player called "P6".
"""

from dataclasses import dataclass

from referee.units import NS_PER_MS

from .cache import SummaryCache

# The points of a player's series in the answer: their latest games, a chart's width
# (docs/web.md, "Stats"), however many years the store holds.
SERIES_MAX = 200


@dataclass(frozen=True, slots=True)
class Point:
    """One game in a player's series."""

    game: int
    started_at: str  # ISO 8601, as the store has it
    sets: int
    mistakes: int
    won: bool


@dataclass
class PlayerStats:
    player: str
    named: bool  # a name the ledger keeps, not a seat's label
    games: int = 0
    wins: int = 0
    sets: int = 0
    mistakes: int = 0
    rounds_won: int = 0
    rounds_lost: int = 0
    median_margin_ms: float | None = None


def started_games(cache: SummaryCache) -> int:
    """The games that left the lobby."""
    return sum(n for (n,) in cache.query("SELECT count(*) FROM games WHERE phase != 'lobby'"))


def stats(cache: SummaryCache) -> list[PlayerStats]:
    """Every player who sat in a game that started, by name (SQLite's order of text, its
    UTF-8 bytes, is Python's of code points), a seat's label before a name spelt so."""
    players = [
        PlayerStats(player, bool(named), *numbers)
        for player, named, *numbers in cache.query(
            "SELECT player, named, count(*), sum(won), sum(sets), sum(mistakes),"
            " sum(rounds_won), sum(rounds_lost) FROM seats WHERE started"
            " GROUP BY player, named ORDER BY player, named"
        )
    ]
    for p in players:
        p.median_margin_ms = _median_margin_ms(cache, p)
    return players


def _median_margin_ms(cache: SummaryCache, p: PlayerStats) -> float | None:
    """statistics.median's, read from the index of margins: the middle one or two."""
    (n,) = next(
        cache.query(
            "SELECT count(*) FROM margins WHERE player = ? AND named = ?", p.player, p.named
        )
    )
    if not n:
        return None
    middle = [
        ns
        for (ns,) in cache.query(
            "SELECT ns FROM margins WHERE player = ? AND named = ? ORDER BY ns LIMIT ? OFFSET ?",
            p.player,
            p.named,
            2 - n % 2,
            (n - 1) // 2,
        )
    ]
    median: float = middle[0] if n % 2 else (middle[0] + middle[1]) / 2
    return round(median / NS_PER_MS, 6)


def series(cache: SummaryCache, p: PlayerStats) -> list[Point]:
    """The player's latest SERIES_MAX games, oldest first: asked for a player at a time,
    so that the answer holds one player's series at once."""
    latest = cache.query(
        "SELECT game_id, started_at, sets, mistakes, won FROM seats JOIN games"
        " ON games.id = seats.game_id WHERE player = ? AND named = ? AND started"
        " ORDER BY game_id DESC, n DESC LIMIT ?",
        p.player,
        p.named,
        SERIES_MAX,
    )
    points = [Point(i, at, s, m, bool(w)) for i, at, s, m, w in latest]
    return points[::-1]
