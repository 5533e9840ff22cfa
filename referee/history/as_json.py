"""The history and the stats as the page's routes answer them (docs/web.md, "History"
and "Stats"): times of the game's clock in milliseconds, as the state's JSON has them."""

from typing import Any

from referee.rules.report import call_json, milliseconds
from referee.rules.timeline import Timeline

from .export import stats_rows
from .stats import PlayerStats
from .summary import GameSummary, player_of


def game_json(game: GameSummary) -> dict[str, Any]:
    head = game.game
    return {
        "id": head.id,
        "started_at": head.started_at.isoformat(),
        "rules": head.settings.rules.value,
        "phase": game.phase.value,
        "result": None if game.result is None else game.result.value,
        "players": [
            {
                "seat": t.seat,
                "player": player_of(head, t.seat),
                "points": t.points,
                "place": t.place,
                "won": t.won,
            }
            for t in game.seats
        ],
        "calls": game.calls,
        "super_rounds": game.rounds,
        "at_ms": milliseconds(game.last_ns),
    }


def timeline_json(game: GameSummary, timeline: Timeline) -> dict[str, Any]:
    """The game, its calls (as the state has them, with when each verdict came) and super
    rounds in order, and every player's points through it (in the order of its players)."""
    return {
        "game": game_json(game),
        "calls": [
            {
                "call": n,
                "at_ms": milliseconds(c.at_ns),
                **call_json(c.call),
                "judged": [
                    {
                        "seat": r.seat,
                        "verdict": r.judgement.value,
                        "at_ms": milliseconds(r.at_ns),
                        "points": r.delta,
                    }
                    for r in c.rulings
                ],
            }
            for n, c in enumerate(timeline.calls, 1)
        ],
        "super_rounds": [
            {
                "opened_ms": milliseconds(r.opened_ns),
                "flip_ms": None if r.flip_ns is None else milliseconds(r.flip_ns),
                "participants": list(r.participants),
                "winner": r.winner,
                "end": r.end.value,
                "ended_ms": None if r.ended_ns is None else milliseconds(r.ended_ns),
                "paid": list(r.paid),
            }
            for r in timeline.rounds
        ],
        "scores": [
            {"at_ms": milliseconds(t), "points": list(points)} for t, points in timeline.scores
        ],
    }


def stats_json(players: list[PlayerStats], games: int) -> dict[str, Any]:
    """Each player's numbers as the stats export has them, and their latest series."""
    return {
        "games": games,
        "players": [
            {
                **row,
                "series": [
                    {
                        "game": one.game,
                        "started_at": one.started_at,
                        "sets": one.sets,
                        "mistakes": one.mistakes,
                        "won": one.won,
                    }
                    for one in p.series
                ],
            }
            for p, row in zip(players, stats_rows(players), strict=True)
        ],
    }
