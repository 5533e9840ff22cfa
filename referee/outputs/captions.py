"""What the screens say, worked out once for the pygame screen and the terminal alike.

Pure: a View in, text and times out. Timers show whole seconds, and tenths in their
last 3 s when every tenth counts, always rounded up: a timer reads 0.0 exactly at its
deadline, never with time left. A picture changes by itself only when a shown digit
does, so the main loop sleeps a second at a time and 10 frames a second only at the end.
"""

import re
from collections.abc import Callable, Iterable

from referee import faces
from referee.buttons import KEYMAP, QUIT_KEY
from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    Call,
    Phase,
    State,
    SuperMeans,
    match_deals,
    sitting_out,
    solo_end_bonus,
    solo_increment,
)
from referee.rules.effects import ms, seat
from referee.view import CAM_MARK, MIC_MARK, ClaimSeen, DeckSeen, Notice, Severity, View

TENTH_NS = 100 * NS_PER_MS
_KEY_NAMES = {
    "VALID": "valid",
    "INVALID": "invalid",
    "SUPER": "super",
    "UNDO": "undo",
    "END": "end",
    "REPLAY": "replay",
}
# What each key does, where the keyboard is the buttons: "v valid", a key then its name.
# The hint's `h` is left out: it needs a camera, and the bar has no room for it on the
# smallest screen (README.md lists every key).
KEY_LEGEND = (
    "1-8 buzzers",
    *(f"{key} {_KEY_NAMES[button]}" for key, button in KEYMAP.items() if button in _KEY_NAMES),
    f"{QUIT_KEY} quit",
)
TENTHS_FROM_NS = 3 * NS_PER_S


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


def urgent(left_ns: int) -> bool:
    """A timer in its last 3 s: tenths, pips and the urgent colour."""
    return left_ns <= TENTHS_FROM_NS


def _unit(left_ns: int) -> int:
    return TENTH_NS if urgent(left_ns) else NS_PER_S


def shown_ns(left_ns: int) -> int:
    """The time left as a timer shows it: rounded up to the second, or the tenth at the end."""
    if left_ns <= 0:
        return 0
    unit = _unit(left_ns)
    return -(-left_ns // unit) * unit


def seconds(left_ns: int) -> str:
    """7.25 s left reads 8; 2.41 s left reads 2.5."""
    shown = shown_ns(left_ns)
    return f"{shown / NS_PER_S:.1f}" if urgent(shown) else str(shown // NS_PER_S)


def increment(view: View) -> int | None:
    """Solo: what a valid SET would score: pressed now, or at the pending call's press."""
    state = view.state
    if state.solo is None or state.phase is Phase.OVER:
        return None
    if state.solo.zeroed:
        return 0
    call = state.pending
    return solo_increment(state.solo, view.now_ns if call is None else call.first_ns)


def shown_clocks(view: View) -> tuple[str | None, str | None, int | None]:
    """Everything on a screen that moves with time alone, as shown."""
    pointout, countdown = pointout_left_ns(view), countdown_left_ns(view)
    return (
        None if pointout is None else seconds(pointout),
        None if countdown is None else seconds(countdown),
        increment(view),
    )


def next_change_ns(view: View) -> int | None:
    """The game-clock time at which something shown changes by itself, or None."""
    state = view.state
    sr = state.super_round
    times = [
        _next_tick(deadline, view.now_ns)
        for deadline in (state.pointout_deadline, None if sr is None else sr.countdown_deadline)
        if deadline is not None
    ]
    if state.pending is None:  # during a call the increment stands still at the press
        times.append(_increment_drop(view))
    if view.replay is not None:  # its cursor moves: a frame as often as the screen draws
        times.append(view.now_ns + 1)
    return min((t for t in times if t is not None), default=None)


def _next_tick(deadline_ns: int, now_ns: int) -> int | None:
    shown = shown_ns(deadline_ns - now_ns)
    if shown == 0:
        return None  # run out: the engine's timer fires and the state changes instead
    return deadline_ns - (shown - _unit(shown))


def _increment_drop(view: View) -> int | None:
    """The first time after now at which the solo increment shows less."""
    value = increment(view)
    solo = view.state.solo
    if value is None or value <= 1 or solo is None:
        return None  # no solo game, zeroed, or at its floor of 1
    # Searched, not inverted, so that the engine's formula alone decides (exactly).
    lo, step = view.now_ns, NS_PER_S
    while solo_increment(solo, lo + step) == value:
        lo, step = lo + step, step * 2
    hi = lo + step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if solo_increment(solo, mid) == value else (lo, mid)
    return hi


def who(view: View, player: int) -> str:
    """The player as the screens name them: their name where the seat has one, else "P3"."""
    return view.name(player) or seat(player)


def named(view: View, text: str) -> str:
    """A message of the engine's ("P2 calls SET") with the seats' names in it."""
    return _SEAT.sub(lambda m: view.name(int(m[1])) or m[0], text)


_SEAT = re.compile(r"\bP([1-8])\b")


def margin(call: Call, who: Callable[[int], str] = seat) -> str:
    """The photo finish's headline: "Ann by 4.2 ms over Bob", or who could not be told
    apart; `who` names a seat's player."""
    if len(call.callers) > 1:
        return ", ".join(who(p) for p in call.callers) + ": too close to call"
    if len(call.presses) < 2:
        return f"{who(call.callers[0])} alone"
    (first, t0), (second, t1) = call.presses[0], call.presses[1]
    return f"{who(first)} by {ms(t1 - t0)} over {who(second)}"


def offsets(call: Call) -> list[tuple[int, str]]:
    """Every press of the call with its offset: (player, "+4.2 ms")."""
    return [
        (p, "first" if i == 0 else f"+{ms(call.offset_ns(t))}")
        for i, (p, t) in enumerate(call.presses)
    ]


def photo_finish_call(view: View) -> Call | None:
    """The call whose photo finish to show: the one being judged, or in open play the
    one just judged, until the next step (never an old one after a super round). None
    with one player: there is no one to be first over."""
    state = view.state
    if view.settings.book.single_player:
        return None
    if state.pending is not None:
        return state.pending
    before = state.previous
    if state.phase is Phase.OPEN and before is not None and before.pending is not None:
        return state.calls[-1]
    return None


def shared_cards_hint(view: View) -> str | None:
    """Official rules, tied callers before their first verdict: what SUPER means now."""
    call = view.state.pending
    if not view.settings.book.shared_cards or call is None or view.state.claim:
        return None
    if len(call.callers) < 2 or call.verdicts:
        return None
    return "SUPER: their SETs share cards"


def solo_end(view: View) -> str | None:
    """Solo's end bonus worked out: "152 + 12 cards x 16.9 a card = 355"."""
    state, before = view.state, view.state.previous
    if not view.settings.book.end_bonus or state.phase is not Phase.OVER or before is None:
        return None
    if before.solo is None or not before.solo.sets:
        return None
    base, total = before.players[0].points, state.players[0].points
    if total == base:
        return None
    sets, cards = before.solo.sets, state.table
    if solo_end_bonus(base, sets, cards) != total - base:  # a script's `end left=N`
        return f"{base} + {total - base} for the cards left = {total}"
    return f"{base} + {cards} cards x {base / (3 * sets):.1f} a card = {total}"


def deal(view: View) -> str | None:
    """An official match's deal and dealer: "deal 2 of 4 · dealer P2"."""
    state = view.state
    if state.dealer is None:
        return None
    deals = match_deals(view.settings, state)
    out = f"deal {state.deal} of {deals} · dealer {who(view, state.dealer)}"
    if sitting_out(view.settings, state) is not None and state.phase is not Phase.OVER:
        out += " (sits out)"
    return out


def deal_points(state: State) -> dict[int, list[int]]:
    """Each player's points in each deal played (an official match), by seat."""
    out: dict[int, list[int]] = {p.id: [] for p in state.players}
    before = [0] * len(state.players)
    for after in state.deal_ends:
        for p, now, then in zip(state.players, after, before, strict=True):
            out[p.id].append(now - then)
        before = list(after)
    return out


def cards(view: View) -> str | None:
    """Where the box counts the cards: "deck 63 · table 15", and what is owed."""
    state = view.state
    if not view.settings.book.counts_cards or not (state.table or state.taken):
        return None
    out = f"deck {state.deck} · table {state.table}"
    if view.settings.book.owes:
        out += f" · owed {state.owed}"
    return out


def marks(view: View) -> tuple[str, ...]:
    """The marks of what records the table now, for privacy: the microphone, the camera."""
    return (MIC_MARK,) * view.listening + (CAM_MARK,) * view.watching


def table_seen(view: View) -> str | None:
    """What the camera's reading tells the table (docs/rules.md, "The camera"): the claim
    of the call being judged, once seen; else, as advice, that there is no SET."""
    table = view.table
    if table is not None and table.claim is not None:
        return claim_seen(table.claim)
    if table is None or not table.no_set:
        return None
    return f"no SET in these {table.cards}: deal three more"


def camera_notices(view: View) -> tuple[Notice, ...]:
    """What the camera tells the table beside the box's notices: the deck by sight amiss,
    then the claim or the advice (table_seen), the short form before the cards."""
    seen = table_seen(view)
    advice = (Notice(seen, Severity.INFO, seen.partition(CARDS_SEEN)[0]),) if seen else ()
    return (*deck_notices(None if view.table is None else view.table.deck), *advice)


def deck_notices(deck: DeckSeen | None) -> tuple[Notice, ...]:
    """What is amiss in the deck counted by sight (docs/rules.md, "The deck counted by
    sight"), a notice each: asked, not told, since the camera sees the table and not how
    it came to be so."""
    if deck is None or not deck.amiss:
        return ()
    said = []
    cards = f"{deck.table} card{'' if deck.table == 1 else 's'}"
    if deck.table is not None and deck.box is not None and deck.table != deck.box:
        why = "a card dropped, or a misdeal?" if deck.table < deck.box else "a misdeal?"
        text = f"the camera counts {cards} on the table, the box {deck.box}: {why}"
        said.append((text, f"the camera counts {cards}, the box {deck.box}"))
    elif deck.deck is not None and deck.deck < 0:
        counts = f"{cards} on the table, {deck.taken} taken"
        text = f"the camera counts {counts}: more than a deck, two decks mixed?"
        said.append((text, f"{counts}: two decks?"))
    for face in deck.twice:
        text = f"the camera sees {faces.words(face)} twice on the table: two decks mixed?"
        said.append((text, "a card twice on the table"))
    for face in deck.again:
        text = f"the camera sees {faces.words(face)} on the table, taken in a SET: a misdeal?"
        said.append((text, "a card taken is on the table"))
    return tuple(Notice(text, Severity.WARNING, short) for text, short in said)


def deck_by_sight(view: View) -> str | None:
    """Where the box does not count the cards: the deck left by sight, "deck 54 by sight",
    while the camera counts the table (the box's own count is `cards`)."""
    deck = None if view.table is None else view.table.deck
    if view.settings.book.counts_cards or deck is None or deck.deck is None or deck.deck < 0:
        return None
    return f"deck {deck.deck} by sight"


CARDS_SEEN = " · "  # before the claim's cards: a small screen shows what comes before


def claim_seen(seen: ClaimSeen) -> str:
    """ "SET · 1 red solid oval, 2 red solid ovals, 3 red solid ovals", "not a SET: two
    red, one green · ...", with the press that confirms it when proposed."""
    claim = seen.claim
    if not claim.sure:
        return "the camera cannot see the claim"
    said = "SET" if claim.why_not is None else f"not a SET: {claim.why_not}"
    if seen.propose:
        said += f" ({'VALID' if claim.why_not is None else 'INVALID'} to confirm)"
    return said + cards_seen(card.face for card in claim.cards)


def cards_seen(seen: Iterable[faces.Values]) -> str:
    """Cards the camera saw, in words, to follow what is said of them: " · 1 red solid
    oval, 2 red solid ovals, 3 red solid ovals"."""
    return CARDS_SEEN + ", ".join(faces.words(face) for face in seen)


def joining(view: View) -> str | None:
    """How a phone joins the page, in one line (the terminal's lobby): its address, or
    why phones cannot reach it, and the PIN."""
    if (join := view.join) is None:
        return None
    where = join.url or join.unreachable
    if join.url is not None and join.unreachable:
        where += f" ({join.unreachable})"
    pin = f"PIN {join.pin}" if join.pin is not None else "no PIN: see the log"
    return f"the page on the phones: {where} · {pin}"


_OPEN_HINT = {
    SuperMeans.SUPER_ROUND: "",
    SuperMeans.DEAL_OVER: " · SUPER ends the deal",
    SuperMeans.NO_SET_CLAIM: " · SUPER if there is none",
    SuperMeans.NO_SET: " · SUPER if there is none",
}


def headline(view: View) -> str:
    """One line saying what the table is doing now and what it waits for."""
    state = view.state
    match state.phase:
        case Phase.LOBBY if len(state.players) < (need := view.settings.min_players):
            players = "one player" if need == 1 else f"{need} players"
            return f"press your buzzer to join; SUPER needs {players} in to start"
        case Phase.LOBBY:
            return "press your buzzer to join; SUPER starts the game"
        case Phase.OPEN:
            return "find a SET" + _OPEN_HINT[view.settings.book.super]
        case Phase.CALL if state.claim:
            return "no SET on the table? VALID if right, INVALID if there is one"
        case Phase.CALL | Phase.SUPER_CALL:
            call = state.calls[-1]
            assert call.turn is not None
            return f"{who(view, call.turn)}: show your SET"
        case Phase.SUPER_JOIN:
            return "super round: press your buzzer to join, SUPER to flip"
        case Phase.SUPER_COUNTDOWN:
            sr = state.super_round
            assert sr is not None
            players = ", ".join(who(view, p) for p in sr.participants)
            return f"super round: only {players} may call"
        case Phase.OVER if state.result is not None:
            return f"game over: {state.result} · SUPER starts a new game"
        case Phase.OVER:
            return "game over: SUPER starts a new game"
