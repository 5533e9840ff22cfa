"""The state as JSON (RULES.md, "Replay scripts"): what `referee replay` and `state` print."""

from typing import Any

from .settings import NS_PER_MS, Settings
from .state import State


def report(settings: Settings, state: State) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rules": settings.rules.value,
        "phase": state.phase.value,
        "bank": state.bank,
        "players": [{"id": p.id, "points": p.points, "locked": p.locked} for p in state.players],
        "calls": [
            {
                "callers": list(c.callers),
                "presses": [[p, round(c.offset_ns(t) / NS_PER_MS, 6)] for p, t in c.presses],
                "verdicts": [v.value for v in c.verdicts],
                "super": c.super_round,
            }
            for c in state.calls
        ],
    }
    if state.super_round is not None:
        out["super_round"] = {
            "participants": list(state.super_round.participants),
            "dropped": list(state.super_round.dropped),
        }
    if state.solo is not None:
        out["solo"] = {"sets": state.solo.sets, "zeroed": state.solo.zeroed}
    if state.claim:
        out["claim"] = True
    if state.ranking:
        out["ranking"] = [
            {"place": r.place, "id": r.player, "points": r.points} for r in state.ranking
        ]
    return out
