"""The history and the stats as the page's routes answer them (docs/web.md, "History"
and "Stats"): times of the game's clock in milliseconds, as the state's JSON has them."""

import json
from collections.abc import Iterable
from typing import Any

from referee.rules.report import call_json, milliseconds
from referee.rules.timeline import Timeline

from .export import stats_rows
from .stats import PlayerStats, Point
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


def stats_json(players: Iterable[tuple[PlayerStats, list[Point]]], games: int) -> str:
    """Each player's numbers as the stats export has them, and their latest series, as
    JSON text made a player at a time: each one's series is garbage before the next's is
    read (one player's objects at a time, where the pages of the allocator they take stay
    the process's: docs/design.md, "The page", its history and stats)."""
    parts = [f'{{"games":{games},"players":[']
    for p, points in players:
        (row,) = stats_rows([p])
        one = {
            **row,
            "series": [
                {
                    "game": point.game,
                    "started_at": point.started_at,
                    "sets": point.sets,
                    "mistakes": point.mistakes,
                    "won": point.won,
                }
                for point in points
            ],
        }
        parts.append(("," if len(parts) > 1 else "") + _compact(one))
    parts.append("]}")
    return "".join(parts)


def _compact(value: object) -> str:
    """As Starlette's JSONResponse writes JSON."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
