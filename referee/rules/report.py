"""The state as JSON, as `referee replay` and `referee state` print it.

docs/rules.md, "Replay scripts and the state", says what each key means.
"""

from typing import Any

from referee.faces import ATTRIBUTES
from referee.units import NS_PER_MS

from .engine import match_deals
from .inputs import Cards, makes_set
from .settings import Settings
from .state import Call, State


def milliseconds(ns: int) -> float:
    """A time or a duration as the JSON writes it: milliseconds, exact to the nanosecond."""
    return round(ns / NS_PER_MS, 6)


def call_json(c: Call) -> dict[str, Any]:
    """A call: its callers, its photo finish (each press after the first), its verdicts
    and what the camera saw of it."""
    return {
        "callers": list(c.callers),
        "presses": [[p, milliseconds(c.offset_ns(t))] for p, t in c.presses],
        "verdicts": [v.value for v in c.verdicts],
        "super": c.super_round,
        "seen": None if c.seen is None else seen_json(c.seen),
    }


def seen_json(cards: Cards) -> dict[str, Any]:
    """The cards the camera saw taken, named as `referee look --json` names them, and
    whether they are a SET (null when one was not read surely)."""
    named = [
        {name: values[v] for (name, values), v in zip(ATTRIBUTES, c.face, strict=True)}
        | {"sure": c.sure}
        for c in cards
    ]
    return {"cards": named, "set": makes_set(cards)}


def report(settings: Settings, state: State) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rules": settings.rules.value,
        "phase": state.phase.value,
        "bank": state.bank,
        "players": [{"id": p.id, "points": p.points, "locked": p.locked} for p in state.players],
        "calls": [call_json(c) for c in state.calls],
    }
    book = settings.book
    if state.deal:
        out["deal"] = state.deal
        out["deals_in_match"] = match_deals(settings, state)
        out["dealer"] = state.dealer
    if state.deal_ends:
        # The points each player scored in each deal played, player 1 first.
        before = (0,) * len(state.players)
        out["deals"] = []
        for after in state.deal_ends:
            out["deals"].append([a - b for a, b in zip(after, before, strict=True)])
            before = after
    if book.counts_cards and (state.table or state.taken):
        out["deck"] = state.deck
        out["table"] = state.table
    if book.owes:
        out["owed"] = state.owed
    if state.result is not None:
        out["result"] = state.result.value
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
