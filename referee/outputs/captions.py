"""What the screens say, worked out once for the pygame screen and the terminal alike.

Pure: a View in, text and times out. Timers show tenths of a second, rounded up, so a
timer reads 0.0 exactly at its deadline and the table never sees "0.0" with time left.
"""

import math

from referee.rules import NS_PER_MS, Call, Phase, RuleSet, solo_increment
from referee.rules.effects import seat
from referee.rules.engine import SOLO_HALF_LIFE_NS, SOLO_START
from referee.view import View

TENTH_NS = 100 * NS_PER_MS


def pointout_left_ns(view: View) -> int | None:
    deadline = view.state.pointout_deadline
    return None if deadline is None else max(0, deadline - view.now_ns)


def countdown_left_ns(view: View) -> int | None:
    """The super round's countdown, running or paused by a super-call."""
    sr = view.state.super_round
    if sr is None:
        return None
    if sr.countdown_deadline is not None:
        return max(0, sr.countdown_deadline - view.now_ns)
    return sr.countdown_left_ns


def countdown_paused(view: View) -> bool:
    sr = view.state.super_round
    return sr is not None and sr.countdown_left_ns is not None


def seconds(left_ns: int) -> str:
    """Tenths, rounded up: 7.25 s left reads 7.3."""
    return f"{math.ceil(left_ns / TENTH_NS) / 10:.1f}"


def increment(view: View) -> int | None:
    """Solo: what a SET pressed now would score."""
    solo = view.state.solo
    if view.settings.rules is not RuleSet.SOLO or solo is None:
        return None
    return 0 if solo.zeroed else solo_increment(solo, view.now_ns)


def next_change_ns(view: View) -> int | None:
    """The game-clock time at which something shown changes by itself, or None."""
    times = []
    for deadline in (view.state.pointout_deadline, _running_countdown(view)):
        if deadline is not None and deadline > view.now_ns:
            tenths_left = math.ceil((deadline - view.now_ns) / TENTH_NS)
            times.append(deadline - (tenths_left - 1) * TENTH_NS)
    solo = view.state.solo
    value = increment(view)
    if solo is not None and value is not None and value > 1 and view.state.phase is Phase.OPEN:
        # The shown increment drops below value - 0.5 at this many ns after its reference.
        after = SOLO_HALF_LIFE_NS * math.log2(SOLO_START / (value - 0.5))
        times.append(max(view.now_ns + 1, solo.ref_ns + math.ceil(after)))
    return min(times, default=None)


def _running_countdown(view: View) -> int | None:
    sr = view.state.super_round
    return None if sr is None else sr.countdown_deadline


def margin(call: Call) -> str:
    """The photo finish's headline: "P2 by 4.2 ms over P4", or who could not be told apart."""
    if len(call.callers) > 1:
        return ", ".join(seat(p) for p in call.callers) + ": too close to call"
    if len(call.presses) < 2:
        return f"{seat(call.callers[0])} alone"
    (first, t0), (second, t1) = call.presses[0], call.presses[1]
    return f"{seat(first)} by {(t1 - t0) / NS_PER_MS:.1f} ms over {seat(second)}"


def offsets(call: Call) -> list[tuple[int, str]]:
    """Every press of the call with its offset: (player, "+4.2 ms")."""
    return [
        (p, "first" if i == 0 else f"+{call.offset_ns(t) / NS_PER_MS:.1f} ms")
        for i, (p, t) in enumerate(call.presses)
    ]


def headline(view: View) -> str:
    """One line saying what the table is doing now and what it waits for."""
    state = view.state
    match state.phase:
        case Phase.LOBBY:
            return "press your buzzer to join; SUPER starts the game"
        case Phase.OPEN:
            return "find a SET"
        case Phase.CALL if state.claim:
            return "no SET on the table? VALID if right, INVALID if there is one"
        case Phase.CALL | Phase.SUPER_CALL:
            call = state.calls[-1]
            assert call.turn is not None
            return f"{seat(call.turn)}: show your SET"
        case Phase.SUPER_JOIN:
            return "super round: press your buzzer to join, SUPER to flip"
        case Phase.SUPER_COUNTDOWN:
            sr = state.super_round
            assert sr is not None
            return "super round: only " + ", ".join(seat(p) for p in sr.participants) + " may call"
        case Phase.OVER:
            return "game over"
