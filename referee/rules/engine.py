"""Every transition of a game lives in this module; nothing else makes a new State.

The engine is sans-IO (docs/design.md): no clock, no threads, no files. `step` takes the
settings, a state and one input, and returns the next state and the effects to show:

    state, effects = step(settings, state, Press(player=2, t_ns=12_300_000))

Time comes in with the inputs. Timers are deadlines in the state: before an input at
time t is handled, every deadline <= t fires, each at its own deadline (docs/rules.md,
"Calls and who was first"). The input is then dispatched on (phase, kind) through
`_TRANSITIONS`; a pair that is not there means nothing now, and the very same State
object comes back with an `Ignored` effect saying why. What differs between rule sets is
asked of their RuleBook (rulesets.py), never of their names.

Undo: each state holds `previous`, the state just before the latest undo step, and
`step`, what that step was. A step's new state points back at the state it replaced;
a change that is not a step (lobby and super-round joins, photo-finish presses) keeps
the old pointer, so undo takes those back together with the step before them.
"""

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from referee.units import MAX_SEATS, NS_PER_S

from .effects import (
    CallOpened,
    CameraSaw,
    ClaimJudged,
    CoCaller,
    CountdownResumed,
    CountdownStarted,
    DealOver,
    DealStarted,
    DebtPaid,
    Effect,
    GameOver,
    GameStarted,
    Ignored,
    Joined,
    Judged,
    Left,
    Locked,
    NoSetClaimed,
    NoSetDealt,
    PhotoFinish,
    RoundEnded,
    SharedCards,
    SuperCancelled,
    SuperOpened,
    TimeUp,
    TurnStarted,
    Undone,
    Unlocked,
    seat,
)
from .inputs import SET, CameraVerdict, Cards, End, Input, Press, Seen, Super, Tick, Undo, Verdict
from .rulesets import SuperMeans
from .settings import DECK, Settings
from .state import (
    Call,
    Judgement,
    Phase,
    Place,
    Player,
    Result,
    Solo,
    State,
    SuperRound,
    stepped,
)

if TYPE_CHECKING:  # mypy checks each change against the fields, as for replace itself
    from dataclasses import replace as evolve
    from dataclasses import replace as evolve_state
else:
    from .state import evolve, evolve_state

SOLO_START = 100
SOLO_HALF_LIFE_NS = 15 * NS_PER_S
SUPER_PRIZE = 3
SUPER_PENALTY = 2
CAMERA = "the camera's verdict"  # how its step begins: a judge's press may overrule it
CAMERA_ON_CLAIM = f"{CAMERA} on the no-SET claim"  # the camera's check of the layout
NO_SET_CLAIM = "the no-SET claim"  # SUPER's step in solo and solitaire
TABLE = 12  # the cards dealt at the start, and kept on the table while the deck lasts


class _Change(NamedTuple):
    state: State
    effects: tuple[Effect, ...]
    step: str | None = None  # set when undo can take this change back: what it was


def _ignore(state: State, reason: str) -> _Change:
    return _Change(state, (Ignored(reason),))


def new_game(settings: Settings, *, lobby: bool = True) -> State:
    """A game in the lobby, or (as a replay's `config` line does) with every seat playing."""
    lobby_state = State(phase=Phase.LOBBY, players=())
    if lobby:
        return lobby_state
    players = tuple(Player(i) for i in range(1, settings.players + 1))
    return _started(settings, evolve_state(lobby_state, players=players), 0)


def _started(settings: Settings, state: State, t_ns: int) -> State:
    """Play begins: the solo increment's clock starts, the cards are dealt, deal 1."""
    book = settings.book
    return evolve_state(
        state,
        phase=Phase.OPEN,
        solo=Solo(ref_ns=t_ns) if book.set_points is None else None,
        table=TABLE if book.counts_cards else 0,
        deal=1 if book.deals else 0,
    )


def match_deals(settings: Settings, state: State) -> int:
    """Official: how many deals this match has (0 in the settings: one per player)."""
    return settings.deals or len(state.players)


def sitting_out(settings: Settings, state: State) -> int | None:
    """The dealer, in a match whose dealer does not play their deal."""
    return None if settings.dealer_plays else state.dealer


def step(settings: Settings, state: State, inp: Input) -> tuple[State, list[Effect]]:
    effects: list[Effect] = []
    t_ns = inp.t_ns
    while (deadline := state.deadline) is not None and deadline <= t_ns:
        state = _apply(state, _expire(settings, state, deadline), effects)
    if not isinstance(inp, Tick):
        handler = _TRANSITIONS.get((state.phase, type(inp)))
        change = handler(settings, state, inp) if handler else _ignore(state, _why(state, inp))
        state = _apply(state, change, effects)
    return state, effects


def replay(settings: Settings, inputs: Iterable[Input], *, lobby: bool = True) -> State:
    state = new_game(settings, lobby=lobby)
    for inp in inputs:
        state, _ = step(settings, state, inp)
    return state


def _apply(before: State, change: _Change, effects: list[Effect]) -> State:
    effects.extend(change.effects)
    if change.step is None:
        return change.state
    return stepped(change.state, before, change.step)


def _why(state: State, inp: Input) -> str:
    """The reason an input means nothing in this phase."""
    if state.phase is Phase.OVER:
        return "the game is over (UNDO takes back the end)"
    match inp:
        case Verdict() | CameraVerdict():
            return "no call to judge"
        case Seen():
            return "no call waits for what the camera saw"
        case Undo():
            return "nothing to undo in the lobby"
        case Super() if state.phase is Phase.SUPER_CALL:
            return "a call is being judged"
        case Super():
            return "the super round's countdown is running"
    # A test walks every phase with every input, so this means a table above is incomplete.
    raise AssertionError(f"no transition and no reason for {inp} in phase {state.phase}")


# --- seats -------------------------------------------------------------------------------


def _seat_problem(settings: Settings, state: State, player: int) -> str | None:
    if not 1 <= player <= settings.players:
        return f"there is no seat {player}: the seats are 1 to {settings.players}"
    if state.phase is not Phase.LOBBY and state.player(player) is None:
        return f"{seat(player)} did not join this game"
    if not settings.dealer_plays and player == state.dealer:
        return f"{seat(player)} deals: it is best if the dealer does not take part"
    return None


def _scored(
    players: tuple[Player, ...], player: int, points: int, *, locked: bool = False
) -> tuple[Player, ...]:
    """The players with one player's points changed, and that player locked or not."""
    # A list comprehension, then a tuple: quicker than a generator, and this runs a lot.
    return tuple(
        [Player(p.id, p.points + points, locked) if p.id == player else p for p in players]
    )


def _locked_reason(player: int) -> str:
    return f"{seat(player)} is locked: no point to give, until another player's SET is valid"


# --- lobby -------------------------------------------------------------------------------


def _lobby_press(settings: Settings, state: State, inp: Press) -> _Change:
    if problem := _seat_problem(settings, state, inp.player):
        return _ignore(state, problem)
    if state.player(inp.player):
        players = tuple(p for p in state.players if p.id != inp.player)
        return _Change(evolve_state(state, players=players), (Left(inp.player),))
    players = tuple(sorted((*state.players, Player(inp.player)), key=lambda p: p.id))
    return _Change(evolve_state(state, players=players), (Joined(inp.player),))


def _start(settings: Settings, state: State, inp: Super) -> _Change:
    if len(state.players) < settings.min_players:
        need = "one player" if settings.min_players == 1 else "two players"
        return _ignore(state, f"the game needs {need}: press a buzzer to join")
    started = _started(settings, state, inp.t_ns)
    effects: list[Effect] = [GameStarted(tuple(p.id for p in state.players))]
    if started.dealer is not None:
        effects.append(DealStarted(1, match_deals(settings, started), started.dealer))
    return _Change(started, tuple(effects), "the start")


# --- calls -------------------------------------------------------------------------------


def _pointout(settings: Settings, t_ns: int) -> int | None:
    return t_ns + settings.pointout_ns if settings.pointout_ns else None


def _open_press(settings: Settings, state: State, inp: Press) -> _Change:
    if problem := _seat_problem(settings, state, inp.player):
        return _ignore(state, problem)
    who = state.player(inp.player)
    if who is not None and who.locked:
        return _ignore(state, _locked_reason(inp.player))
    return _open_call(settings, state, inp)


def _open_call(
    settings: Settings, state: State, inp: Press, paused: SuperRound | None = None
) -> _Change:
    """The press opens a call, its point-out timer running: a super call when it comes
    with the super round whose countdown it paused."""
    call = Call(
        callers=_ALONE[inp.player],
        presses=((inp.player, inp.t_ns),),
        super_round=paused is not None,
        deal=state.deal,
    )
    opened = evolve_state(
        state,
        phase=Phase.CALL if paused is None else Phase.SUPER_CALL,
        calls=state.calls.added(call),
        pointout_deadline=_pointout(settings, inp.t_ns),
        super_round=paused,
    )
    return _Change(opened, (CallOpened(inp.player),), f"{seat(inp.player)}'s call")


def _order(presses: Iterable[tuple[int, int]], first: int) -> tuple[tuple[int, int], ...]:
    """The photo finish: the first caller first, then by time, equal times by seat."""
    return tuple(sorted(presses, key=lambda pt: (pt[0] != first, pt[1], pt[0])))


def _may_call(state: State, player: int) -> bool:
    if state.phase is Phase.SUPER_CALL:
        assert state.super_round is not None
        return player in state.super_round.participants
    return player not in state.locked


def _call_press(settings: Settings, state: State, inp: Press) -> _Change:
    if problem := _seat_problem(settings, state, inp.player):
        return _ignore(state, problem)
    call = state.pending
    if call is None:
        return _ignore(state, "the no-SET claim is being judged")
    if any(p == inp.player for p, _ in call.presses):
        return _ignore(state, f"{seat(inp.player)} already pressed in this call")
    offset = call.offset_ns(inp.t_ns)
    press = (inp.player, inp.t_ns)
    if not call.verdicts and offset <= settings.tie_ns and _may_call(state, inp.player):
        stamps = dict((*call.presses, press))
        callers = tuple(sorted((*call.callers, inp.player), key=lambda p: (stamps[p], p)))
        joined = evolve(call, callers=callers, presses=_order(stamps.items(), callers[0]))
        return _Change(
            evolve_state(state, calls=state.calls.with_last(joined)),
            (CoCaller(inp.player, offset),),
            f"{seat(inp.player)} joining the call",
        )
    noted = evolve(call, presses=_order((*call.presses, press), call.callers[0]))
    return _Change(
        evolve_state(state, calls=state.calls.with_last(noted)), (PhotoFinish(inp.player, offset),)
    )


def _bank_share(settings: Settings, call: Call) -> int:
    """The cards of a call's SET that no valid caller keeps: the bank's when the call ends.
    Not in a super call, whose first valid caller takes all."""
    if not settings.book.bank or call.super_round or not call.valid_count:
        return 0
    return SET - min(call.valid_count, SET)


def _takes_a_set(settings: Settings, call: Call) -> bool:
    """Whether a valid verdict now takes three more cards: every one where each valid
    caller keeps a SET of their own, else only the first (tied callers share one SET)."""
    return not (settings.book.one_set_per_call and call.valid_count)


def _no_cards(settings: Settings) -> str:
    book = settings.book
    if book.counts_cards:
        return "no card is left on the table: this SET cannot be valid"
    if book.deals:
        return f"the deck holds only {DECK} cards: this SET cannot be valid (SUPER ends the deal)"
    return f"the deck holds only {DECK} cards: this SET cannot be valid"


def _judge(settings: Settings, state: State, inp: Verdict) -> _Change:
    if state.claim:
        return _judge_claim(settings, state, inp)
    call = state.pending
    assert call is not None and call.turn is not None
    if inp.valid and _takes_a_set(settings, call) and state.taken + SET > DECK:
        return _ignore(state, _no_cards(settings))
    judgement = Judgement.VALID if inp.valid else Judgement.INVALID
    return _verdict(settings, state, judgement, inp.t_ns)


def _saw(state: State, cards: Cards | None) -> State:
    """The state with the cards the camera saw kept with the pending call: the first it
    saw, one claim a call. Not a step: UNDO takes it back with the call."""
    call = state.pending
    if cards is None or call is None or call.seen is not None:
        return state
    return evolve_state(state, calls=state.calls.with_last(evolve(call, seen=cards)))


def _seen(settings: Settings, state: State, inp: Seen) -> _Change:
    if state.pending is None:
        return _ignore(state, "the camera sees a SET taken, not a no-SET claim")
    seen = _saw(state, inp.cards)
    if seen is state:
        return _ignore(state, "the camera saw this call's claim already")
    return _Change(seen, (CameraSaw(inp.cards),))


def _camera_judge(settings: Settings, state: State, inp: CameraVerdict) -> _Change:
    """The camera's verdict on the SET a lone caller took: a verdict like a judge's, but
    that the judges' next press may overrule (_overrule); the cards it saw are kept with
    the call even when it does not judge it. During solo's no-SET claim: its check."""
    if state.claim:
        return _camera_checks_claim(settings, state, inp)
    call = state.pending
    assert call is not None, "a call waits when no no-SET claim does"
    tied = "tied callers: the table judges whose SET the camera saw"
    seen = _saw(state, inp.cards)
    if len(call.callers) > 1:
        if seen is state or inp.cards is None:
            return _ignore(state, tied)
        return _Change(seen, (CameraSaw(inp.cards, tied),))
    saw = () if seen is state or inp.cards is None else (CameraSaw(inp.cards),)
    judged = _judge(settings, seen, Verdict(inp.valid, inp.t_ns))
    if judged.step is None:  # refused (no cards left for it): as if it never came
        return _judge(settings, state, Verdict(inp.valid, inp.t_ns))
    # Stepped from the call with its cards seen, so that UNDO and a judge's overruling
    # press go back to the call still waiting and keep what the camera saw.
    step = f"{CAMERA} on {seat(call.callers[0])}"
    return _Change(stepped(judged.state, seen, step), (*saw, *judged.effects))


def _camera_checks_claim(settings: Settings, state: State, inp: CameraVerdict) -> _Change:
    """Solo: the camera's check of a no-SET claim from the layout it read at the claim
    (docs/rules.md, "The camera"): right or wrong as a judge's VALID or INVALID would
    say, and overruled as its verdict on a SET is. It read no SET taken: no cards."""
    if inp.cards is not None:
        return _ignore(state, "the camera checks a no-SET claim by the layout, not cards taken")
    judged = _judge_claim(settings, state, Verdict(inp.valid, inp.t_ns))
    return _Change(judged.state, judged.effects, CAMERA_ON_CLAIM)


def _camera_checks_no_set(settings: Settings, state: State, inp: CameraVerdict) -> _Change:
    """Solitaire: the camera's check of the no-SET claim just acted on, from the layout it
    read at the claim (docs/rules.md, "The camera"). Stepped from the claim as it acted, so
    that UNDO leaves the claim unchecked, as a table without a camera has it."""
    if not (settings.book.owes and state.step == NO_SET_CLAIM):
        return _ignore(state, _why(state, inp))
    if inp.cards is not None:
        return _ignore(state, "the camera checks a no-SET claim by the layout, not cards taken")
    checked = _checked_no_set(settings, state, right=inp.valid)
    return _Change(checked.state, checked.effects, CAMERA_ON_CLAIM)


def _checked_no_set(settings: Settings, claimed: State, *, right: bool) -> _Change:
    """Solitaire: the no-SET claim that acted (claimed) known right or wrong: the game as
    it would be from the state before it. Wrong: the owed SET, as for a claim nobody
    checked (with the deck empty too, so the end is lost), or under sudden death the loss.
    Right: three more cards and nothing owed, no sudden death; with the deck empty the end.
    """
    what = "the verdict on the no-SET claim"
    assert claimed.previous is not None, "the claim is a step"
    # Evolved from the state before the claim, but as if from the claim: it is stepped from
    # the claim, so that UNDO leaves the claim as it acted, unchecked.
    before = evolve_state(claimed.previous, previous=claimed.previous)
    owed = before.owed + (not right)
    if before.deck == 0:
        why = "no SET, and the deck is empty" if right else "there was a SET, and the deck is empty"
        ended, effects = _game_over(settings, evolve_state(before, owed=owed), why=why)
        return _Change(ended, (ClaimJudged(upheld=right, owed=owed), *effects), what)
    if not right and settings.sudden_death:
        why = "there was a SET: sudden death"
        ended, effects = _game_over(settings, before, result=Result.LOST, why=why)
        return _Change(ended, (ClaimJudged(upheld=False, owed=before.owed), *effects), what)
    dealt = evolve_state(before, table=before.table + SET, owed=owed)
    return _Change(dealt, (ClaimJudged(upheld=right, dealt=True, owed=owed),), what)


def _overrule(settings: Settings, state: State, inp: Verdict) -> _Change:
    """A judge's VALID or INVALID while the camera's verdict is the latest step: the same
    verdict confirms it (nothing changes); the other replaces it, as an UNDO of the
    camera's and that press would, but without the point-out timer, which the camera's
    verdict beat. UNDO afterwards takes back the judge's verdict, as any other."""
    waiting = state.previous
    if waiting is None or not state.step.startswith(CAMERA):
        return _ignore(state, _why(state, inp))
    if state.step == CAMERA_ON_CLAIM:  # no call with verdicts: the judges agree when
        # theirs gives the same game (states compare without their steps)
        if waiting.claim:  # solo: the claim waits for its verdict
            judged = _judge_claim(settings, waiting, inp)
        else:  # solitaire: the claim acted, unchecked
            judged = _checked_no_set(settings, waiting, right=inp.valid)
        agree = judged.state == state
    else:
        judged = _judge(settings, waiting, inp)
        agree = state.calls.last.verdicts[-1] is (
            Judgement.VALID if inp.valid else Judgement.INVALID
        )
    if agree:
        return _ignore(state, f"the judges agree with {state.step}")
    if judged.step is None:  # refused (no cards left for a VALID): the camera's stands
        return _Change(state, judged.effects)
    # Stepped from the call still waiting, so that UNDO walks back to it.
    overruled = stepped(judged.state, waiting, judged.step)
    return _Change(overruled, (Undone(state.step), *judged.effects))


def _dealt(taken: int, table: int) -> int:
    """The cards on the table once three are dealt while it has fewer than 12."""
    while table < TABLE and DECK - taken - table >= SET:
        table += SET
    return table


def _verdict(settings: Settings, state: State, judgement: Judgement, t_ns: int) -> _Change:
    """Score the co-caller whose turn it is; start the next turn or end the call."""
    call = state.pending
    assert call is not None and call.turn is not None
    player = call.turn
    who = state.player(player)
    assert who is not None
    book = settings.book
    players, bank, solo, sr = state.players, state.bank, state.solo, state.super_round
    taken, table, owed = state.taken, state.table, state.owed
    effects: list[Effect] = []
    if judgement is Judgement.VALID:
        delta = _valid_points(settings, state, call)
        players = _scored(players, player, delta)
        effects.append(Judged(player, judgement, delta))
        if _takes_a_set(settings, call):
            if book.owes and owed and state.deck == 0:
                owed -= 1
                effects.append(DebtPaid(owed))
            taken += SET
            if book.counts_cards:
                table = _dealt(taken, table - SET)
        if solo is not None:
            solo = Solo(ref_ns=t_ns, sets=solo.sets + 1)
        if book.locks and (locked := tuple(p.id for p in players if p.locked)):
            effects.append(Unlocked(locked))
            players = tuple(Player(p.id, p.points) for p in players)
    else:
        fine = SUPER_PENALTY if call.super_round else book.fine
        pay = fine if book.below_zero else min(fine, who.points)
        lock = book.locks and who.points == 0
        players = _scored(players, player, -pay, locked=lock)
        if book.bank:
            bank += pay
        effects.append(Judged(player, judgement, -pay))
        if lock:
            effects.append(Locked(player))
        if sr is not None and call.super_round:
            sr = evolve(
                sr,
                participants=tuple(p for p in sr.participants if p != player),
                dropped=(*sr.dropped, player),
            )
    call = evolve(call, verdicts=_judged(call.verdicts, judgement))
    what = f"the verdict on {seat(player)}"
    if judgement is Judgement.TIMEOUT:
        what = f"{seat(player)}'s point-out time running out"
    phase, deadline = state.phase, None
    if call.turn is not None:
        deadline = _pointout(settings, t_ns)
        effects.append(TurnStarted(call.turn))
    elif not call.super_round:
        phase = Phase.OPEN
        bank += _bank_share(settings, call)
    else:
        assert sr is not None
        rest = sr.countdown_left_ns
        assert rest is not None
        if call.valid_count or not sr.participants:
            phase, sr = Phase.OPEN, None
            effects.append(RoundEnded())
        else:
            phase = Phase.SUPER_COUNTDOWN
            sr = evolve(sr, countdown_deadline=t_ns + rest, countdown_left_ns=None)
            effects.append(CountdownResumed())
    judged = evolve_state(
        state,
        phase=phase,
        players=players,
        bank=bank,
        taken=taken,
        table=table,
        owed=owed,
        solo=solo,
        super_round=sr,
        calls=state.calls.with_last(call),
        pointout_deadline=deadline,
    )
    return _Change(judged, tuple(effects), what)


# A long game makes these few tuples over and over: one of each is enough.
_ALONE = {seat: (seat,) for seat in range(1, MAX_SEATS + 1)}
_VERDICTS: dict[tuple[Judgement, ...], tuple[Judgement, ...]] = {}


def _judged(verdicts: tuple[Judgement, ...], judgement: Judgement) -> tuple[Judgement, ...]:
    """The verdicts with one more, as a tuple shared by every call with the same verdicts."""
    more = (*verdicts, judgement)
    return _VERDICTS.setdefault(more, more)


def _valid_points(settings: Settings, state: State, call: Call) -> int:
    if call.super_round:
        return 0 if call.valid_count else SUPER_PRIZE
    book = settings.book
    if book.set_points is None:
        assert state.solo is not None
        return 0 if state.solo.zeroed else solo_increment(state.solo, call.first_ns)
    if book.one_set_per_call and call.valid_count >= SET:
        return 0  # the SET's three cards are taken
    return book.set_points


def solo_increment(solo: Solo, t_ns: int) -> int:
    """What a valid SET pressed at t_ns scores: 100 halving every 15 s, rounded half up, >= 1."""
    value = SOLO_START * 2 ** (-(t_ns - solo.ref_ns) / SOLO_HALF_LIFE_NS)
    return max(1, int(value + 0.5))


def solo_end_bonus(points: int, sets: int, cards: int) -> int:
    """Solo's end: the cards left score the average per card won, points / (3 x sets),
    rounded half up, in whole numbers."""
    return (2 * cards * points + 3 * sets) // (6 * sets)


def _call_super(settings: Settings, state: State, inp: Super) -> _Change:
    """Official: SUPER while tied callers wait for their first verdict says their SETs
    share cards: the cards go, nobody scores or pays."""
    call = state.pending
    if call is None:
        return _ignore(state, "the no-SET claim is being judged")
    if not settings.book.shared_cards:
        return _ignore(state, "a call is being judged")
    if len(call.callers) < 2:
        return _ignore(state, f"{seat(call.callers[0])} called alone: no SETs to share cards")
    if call.verdicts:
        return _ignore(state, "a verdict was given: UNDO it first to say the SETs share cards")
    if state.taken + SET > DECK:
        return _ignore(state, _no_cards(settings))
    shared = evolve(call, verdicts=(Judgement.SHARED,) * len(call.callers))
    ended = evolve_state(
        state,
        phase=Phase.OPEN,
        calls=state.calls.with_last(shared),
        taken=state.taken + SET,
        pointout_deadline=None,
    )
    return _Change(ended, (SharedCards(call.callers),), "the shared cards")


# --- SUPER in open play: a super round, the deal's end, a no-SET claim -------------------


def _open_super(settings: Settings, state: State, inp: Super) -> _Change:
    match settings.book.super:
        case SuperMeans.DEAL_OVER:
            return _deal_over(settings, state)
        case SuperMeans.NO_SET_CLAIM:
            claim = evolve_state(state, phase=Phase.CALL, claim=True)
            return _Change(claim, (NoSetClaimed(),), NO_SET_CLAIM)
        case SuperMeans.NO_SET:
            return _no_set(settings, state)
    joining = evolve_state(state, phase=Phase.SUPER_JOIN, super_round=SuperRound(participants=()))
    return _Change(joining, (SuperOpened(),), "the super round's call")


def _deal_over(settings: Settings, state: State) -> _Change:
    deals = match_deals(settings, state)
    over = DealOver(state.deal, deals)
    what = f"the end of deal {state.deal}"
    if state.deal >= deals:
        ended, effects = _game_over(settings, state)
        return _Change(ended, (over, *effects), what)
    points = tuple(p.points for p in state.players)
    dealt = evolve_state(state, deal=state.deal + 1, taken=0, deal_ends=(*state.deal_ends, points))
    assert dealt.dealer is not None
    return _Change(dealt, (over, DealStarted(dealt.deal, deals, dealt.dealer)), what)


def _no_set(settings: Settings, state: State) -> _Change:
    """Solitaire: no SET on the table; a lone player's claim acts at once."""
    what = NO_SET_CLAIM
    if state.deck == 0:
        ended, effects = _game_over(settings, state, why="no SET, and the deck is empty")
        return _Change(ended, effects, what)
    if settings.sudden_death:
        why = "no SET while the deck has cards: sudden death"
        ended, effects = _game_over(settings, state, result=Result.LOST, why=why)
        return _Change(ended, effects, what)
    dealt = evolve_state(state, table=state.table + SET, owed=state.owed + 1)
    return _Change(dealt, (NoSetDealt(dealt.owed),), what)


def _judge_claim(settings: Settings, state: State, inp: Verdict) -> _Change:
    """Solo: the verdict on a no-SET claim. Right: three more cards, or with the deck
    empty the end; wrong: the next valid SET scores 0."""
    what = "the verdict on the no-SET claim"
    back = evolve_state(state, phase=Phase.OPEN, claim=False)
    if not inp.valid:
        assert back.solo is not None
        back = evolve_state(back, solo=evolve(back.solo, zeroed=True))
        return _Change(back, (ClaimJudged(upheld=False),), what)
    if back.deck == 0:
        ended, effects = _game_over(settings, back, why="no SET, and the deck is empty")
        return _Change(ended, (ClaimJudged(upheld=True), *effects), what)
    dealt = evolve_state(back, table=back.table + SET)
    return _Change(dealt, (ClaimJudged(upheld=True, dealt=True),), what)


# --- super rounds ------------------------------------------------------------------------


def _join_press(settings: Settings, state: State, inp: Press) -> _Change:
    if problem := _seat_problem(settings, state, inp.player):
        return _ignore(state, problem)
    if inp.player in state.locked:
        return _ignore(state, _locked_reason(inp.player))
    sr = state.super_round
    assert sr is not None
    if inp.player in sr.participants:
        who = tuple(p for p in sr.participants if p != inp.player)
        effect: Effect = Left(inp.player, super_round=True)
    else:
        who = tuple(sorted((*sr.participants, inp.player)))
        effect = Joined(inp.player, super_round=True)
    return _Change(evolve_state(state, super_round=evolve(sr, participants=who)), (effect,))


def _flip(settings: Settings, state: State, inp: Super) -> _Change:
    sr = state.super_round
    assert sr is not None
    if not sr.participants:
        cancelled = evolve_state(state, phase=Phase.OPEN, super_round=None)
        return _Change(cancelled, (SuperCancelled(),), "cancelling the super round")
    deadline = inp.t_ns + settings.super_ns
    running = evolve_state(
        state, phase=Phase.SUPER_COUNTDOWN, super_round=evolve(sr, countdown_deadline=deadline)
    )
    return _Change(running, (CountdownStarted(sr.participants),), "the flip")


def _countdown_press(settings: Settings, state: State, inp: Press) -> _Change:
    if problem := _seat_problem(settings, state, inp.player):
        return _ignore(state, problem)
    sr = state.super_round
    assert sr is not None and sr.countdown_deadline is not None
    if inp.player not in sr.participants:
        who = ", ".join(seat(p) for p in sr.participants)
        return _ignore(state, f"only {who} may call in this super round")
    paused = evolve(sr, countdown_deadline=None, countdown_left_ns=sr.countdown_deadline - inp.t_ns)
    return _open_call(settings, state, inp, paused)


# --- timers ------------------------------------------------------------------------------


def _expire(settings: Settings, state: State, deadline: int) -> _Change:
    if state.pointout_deadline is not None:
        return _verdict(settings, state, Judgement.TIMEOUT, deadline)
    sr = state.super_round
    assert sr is not None
    paid = tuple(p for p in sr.participants if (who := state.player(p)) and who.points > 0)
    players = state.players
    for p in paid:
        players = _scored(players, p, -1)
    over = evolve_state(
        state, phase=Phase.OPEN, players=players, super_round=None, bank=state.bank + len(paid)
    )
    return _Change(over, (TimeUp(paid),), "the super round's time running out")


# --- undo and end ------------------------------------------------------------------------


def _undo(settings: Settings, state: State, inp: Undo) -> _Change:
    restored = state.previous
    if restored is None:
        return _ignore(state, "nothing to undo")
    # A timer running in the restored state starts again in full; a paused one keeps its rest.
    if restored.pointout_deadline is not None:
        restored = evolve_state(restored, pointout_deadline=_pointout(settings, inp.t_ns))
    sr = restored.super_round
    if sr is not None and sr.countdown_deadline is not None:
        sr = evolve(sr, countdown_deadline=inp.t_ns + settings.super_ns)
        restored = evolve_state(restored, super_round=sr)
    return _Change(restored, (Undone(state.step),))


def _end(settings: Settings, state: State, inp: End) -> _Change:
    ended, effects = _game_over(settings, state, left=inp.left)
    return _Change(ended, effects, "the end of the game")


def _game_over(
    settings: Settings,
    state: State,
    *,
    left: int | None = None,
    result: Result | None = None,
    why: str = "",
) -> tuple[State, tuple[Effect, ...]]:
    """The game over: a pending call's bank share paid, solo's end bonus (for the cards
    left on the table: `left`, else those the box counted), the deal's points, the ranking
    and, in solitaire, won or lost."""
    book = settings.book
    call = state.pending
    bank = state.bank + (_bank_share(settings, call) if call else 0)
    players = state.players
    cards = state.table if left is None else left
    if book.end_bonus and state.solo and state.solo.sets and cards:
        sets = state.solo.sets
        players = tuple(
            evolve(p, points=p.points + solo_end_bonus(p.points, sets, cards)) for p in players
        )
    if book.owes and result is None:
        result = Result.LOST if state.owed else Result.WON
    deal_ends = state.deal_ends
    if state.deal:
        deal_ends = (*deal_ends, tuple(p.points for p in players))
    ranking = rank(players)
    over = evolve_state(
        state,
        phase=Phase.OVER,
        players=players,
        bank=bank,
        pointout_deadline=None,
        super_round=None,
        claim=False,
        ranking=ranking,
        result=result,
        deal_ends=deal_ends,
    )
    return over, (GameOver(ranking, result, why),)


def _lobby_end(settings: Settings, state: State, inp: End) -> _Change:
    if not state.players:  # a game with nobody in it is no game to rank
        return _ignore(state, "nobody has joined yet: there is no game to end")
    return _end(settings, state, inp)


def rank(players: Iterable[Player]) -> tuple[Place, ...]:
    """Standard competition ranking (1, 1, 3): equal points share a place."""
    ordered = sorted(players, key=lambda p: (-p.points, p.id))
    return tuple(
        Place(1 + sum(1 for o in ordered if o.points > p.points), p.id, p.points) for p in ordered
    )


_Handler = Callable[..., _Change]  # each takes the input type it is keyed on

_LIVE = (Phase.OPEN, Phase.CALL, Phase.SUPER_JOIN, Phase.SUPER_COUNTDOWN, Phase.SUPER_CALL)

_TRANSITIONS: dict[tuple[Phase, type], _Handler] = {
    (Phase.LOBBY, Press): _lobby_press,
    (Phase.LOBBY, Super): _start,
    (Phase.LOBBY, End): _lobby_end,
    (Phase.OPEN, Press): _open_press,
    (Phase.OPEN, Super): _open_super,
    (Phase.OPEN, Verdict): _overrule,
    (Phase.OPEN, CameraVerdict): _camera_checks_no_set,
    (Phase.CALL, Press): _call_press,
    (Phase.CALL, Verdict): _judge,
    (Phase.CALL, CameraVerdict): _camera_judge,
    (Phase.CALL, Seen): _seen,
    (Phase.CALL, Super): _call_super,
    (Phase.SUPER_JOIN, Press): _join_press,
    (Phase.SUPER_JOIN, Super): _flip,
    (Phase.SUPER_COUNTDOWN, Press): _countdown_press,
    (Phase.SUPER_COUNTDOWN, Verdict): _overrule,
    (Phase.SUPER_CALL, Press): _call_press,
    (Phase.SUPER_CALL, Verdict): _judge,
    (Phase.SUPER_CALL, CameraVerdict): _camera_judge,
    (Phase.SUPER_CALL, Seen): _seen,
    # The camera's check of a no-SET claim may end the game, or a claim it checks have.
    (Phase.OVER, Verdict): _overrule,
    (Phase.OVER, CameraVerdict): _camera_checks_no_set,
    (Phase.OVER, Undo): _undo,
    **{(phase, Undo): _undo for phase in _LIVE},
    **{(phase, End): _end for phase in _LIVE},
}
