"""Each player's numbers over every game in the store (docs/web.md, "Stats").

A player is who sat in a seat: `player_of` is the one place that says who that was, and
every statistic and export is keyed through it.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import median

from referee.rules.effects import seat as seat_label
from referee.store import ListedGame
from referee.units import NS_PER_MS

from .summary import GameSummary, SeatTally


def player_of(game: ListedGame, seat: int) -> str:
    """Who sat in this seat in this game: the name the ledger keeps, else the seat's label
    (a seat never named is "P3" in every game, as the box showed it)."""
    return dict(game.names).get(seat) or seat_label(seat)


@dataclass(frozen=True, slots=True)
class Played:
    """One game in a player's series."""

    game: GameSummary
    tally: SeatTally


@dataclass
class PlayerStats:
    player: str
    games: int = 0
    wins: int = 0
    sets: int = 0
    mistakes: int = 0
    rounds_won: int = 0
    rounds_lost: int = 0
    margins_ns: list[int] = field(default_factory=list)
    series: list[Played] = field(default_factory=list)  # oldest game first

    @property
    def median_margin_ms(self) -> float | None:
        if not self.margins_ns:
            return None
        return round(median(self.margins_ns) / NS_PER_MS, 6)

    def add(self, game: GameSummary, tally: SeatTally) -> None:
        self.games += 1
        self.wins += tally.won
        self.sets += tally.sets
        self.mistakes += tally.mistakes
        self.rounds_won += tally.rounds_won
        self.rounds_lost += tally.rounds_lost
        self.margins_ns.extend(tally.margins_ns)
        self.series.append(Played(game, tally))


def stats(games: Iterable[GameSummary]) -> list[PlayerStats]:
    """Every player who sat in a game that started, by name; the games taken oldest first."""
    players: dict[str, PlayerStats] = {}
    for game in sorted(games, key=lambda g: g.game.id):
        if not game.started:
            continue
        for tally in game.seats:
            who = player_of(game.game, tally.seat)
            players.setdefault(who, PlayerStats(who)).add(game, tally)
    return sorted(players.values(), key=lambda p: p.player)
