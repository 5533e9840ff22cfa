"""A game in a few numbers: its outcome, and what each seat did in it.

What counts as a SET, a mistake, a win and a super round won or lost is decided here, and
nowhere else (docs/web.md, "Stats"): from what stands of the game (rules/timeline.py), so
that a verdict taken back with UNDO counts for nothing.
"""

from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from referee.rules import Judgement, Phase, Result
from referee.rules.effects import seat as seat_label
from referee.rules.timeline import CallRecord, RoundEnd, RoundRecord, Timeline
from referee.store.reads import ListedGame

MISTAKES = (Judgement.INVALID, Judgement.TIMEOUT)
# A round played out: one that was cancelled or that the game's end cut short is neither
# won nor lost by anyone.
PLAYED_OUT = (RoundEnd.WON, RoundEnd.TIME_UP, RoundEnd.ALL_OUT)


def player_of(game: ListedGame, seat: int) -> str:
    """Who sat in this seat in this game: the name the ledger keeps, else the seat's label
    (a seat never named is "P3" in every game, as the box showed it). The one place that
    says who a player is: every statistic and export is keyed through it."""
    return dict(game.names).get(seat) or seat_label(seat)


@dataclass(frozen=True, slots=True)
class SeatTally:
    seat: int
    points: int
    place: int | None  # in the final ranking, once the game is over
    won: bool
    sets: int
    mistakes: int
    rounds_won: int
    rounds_lost: int
    margins_ns: tuple[int, ...]  # of the calls judged valid for this seat, where measured


@dataclass(frozen=True, slots=True)
class GameSummary:
    """Its seats' tallies as one array of numbers (`packed`), not objects of their own:
    the page's cache keeps them as that array's bytes (cache.py)."""

    game: ListedGame
    phase: Phase
    result: Result | None
    tallies: "array[int]"  # the seats' SeatTally, packed
    calls: int
    rounds: int  # super rounds opened (cancelled ones too)
    last_ns: int  # the game time of its latest input

    @property
    def started(self) -> bool:
        return self.phase is not Phase.LOBBY

    @property
    def seats(self) -> tuple[SeatTally, ...]:
        return unpacked(self.tallies)


def packed(seats: Iterable[SeatTally]) -> "array[int]":
    """Each seat's numbers in SeatTally's order (a place of 0: none; won 0 or 1), the
    last its number of margins, then its margins."""
    numbers: list[int] = []
    for t in seats:
        numbers += (t.seat, t.points, t.place or 0, t.won, t.sets, t.mistakes)
        numbers += (t.rounds_won, t.rounds_lost, len(t.margins_ns), *t.margins_ns)
    return array("q", numbers)


def summary_array(stored: bytes) -> "array[int]":
    """The packed seats from their bytes (history/cache.py keeps them so)."""
    numbers = array("q")
    numbers.frombytes(stored)
    return numbers


def unpacked(numbers: "array[int]") -> tuple[SeatTally, ...]:
    seats = []
    at = 0
    while at < len(numbers):
        seat, points, place, won, sets, mistakes, rounds_won, rounds_lost, margins = numbers[
            at : at + 9
        ]
        at += 9 + margins
        seats.append(
            SeatTally(
                seat, points, place or None, bool(won), sets, mistakes, rounds_won,
                rounds_lost, tuple(numbers[at - margins : at]),
            )
        )  # fmt: skip
    return tuple(seats)


def summarize(game: ListedGame, timeline: Timeline, last_ns: int) -> GameSummary:
    final = timeline.final
    places = {r.player: r.place for r in final.ranking}
    seats = (_tally(game, timeline, p.id, p.points, places.get(p.id)) for p in final.players)
    return GameSummary(
        game=game,
        phase=final.phase,
        result=final.result,
        tallies=packed(seats),
        calls=len(timeline.calls),
        rounds=len(timeline.rounds),
        last_ns=last_ns,
    )


def _tally(
    game: ListedGame, timeline: Timeline, seat: int, points: int, place: int | None
) -> SeatTally:
    rulings = [(call, r) for call in timeline.calls for r in call.rulings if r.seat == seat]
    return SeatTally(
        seat=seat,
        points=points,
        place=place,
        won=won(game, timeline, seat),
        sets=sum(r.judgement is Judgement.VALID for _, r in rulings),
        mistakes=sum(r.judgement in MISTAKES for _, r in rulings),
        rounds_won=sum(r.winner == seat for r in timeline.rounds),
        rounds_lost=sum(seat in lost_by(r) for r in timeline.rounds),
        margins_ns=_margins(seat, [c for c, r in rulings if r.judgement is Judgement.VALID]),
    )


def won(game: ListedGame, timeline: Timeline, seat: int) -> bool:
    """A game won: over, and won (solitaire's result), or first place, shared or not,
    among two or more players. A one-player game without a result (solo) is a score to
    beat, never a win."""
    final = timeline.final
    if final.phase is not Phase.OVER:
        return False
    if final.result is not None:
        return final.result is Result.WON
    if game.settings.book.single_player:
        return False
    return any(r.player == seat and r.place == 1 for r in final.ranking)


def lost_by(r: RoundRecord) -> tuple[int, ...]:
    """The participants at the flip who did not win a round that was played out."""
    if r.end not in PLAYED_OUT:
        return ()
    return tuple(p for p in r.participants if p != r.winner)


def _margins(seat: int, calls: list[CallRecord]) -> tuple[int, ...]:
    return tuple(m for call in calls if (m := call.margin_ns(seat)) is not None)
