"""Random games through the engine, checking the rules' invariants after every input."""

import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import event
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    RULE_BOOKS,
    CameraVerdict,
    End,
    Input,
    Judgement,
    Phase,
    Press,
    RuleSet,
    Seen,
    Settings,
    State,
    Super,
    Tick,
    Undo,
    Verdict,
    match_deals,
    new_game,
    replay,
    step,
)
from referee.rules.inputs import Cards
from referee.store.store import Store

from .helpers import camera_entry, cards_st

KINDS = (
    ["press"] * 10
    + ["valid", "invalid"] * 3
    + ["camera valid", "camera invalid", "camera", "seen"]
    + ["super"] * 4
    + ["undo"] * 2
    + ["tick", "end"]
)
GAPS = st.sampled_from([0, 0, NS_PER_MS, 3 * NS_PER_MS, NS_PER_S // 2, 4 * NS_PER_S, 12 * NS_PER_S])


def timers_aside(state: State) -> State:
    """The state with its running timers' deadlines blurred to "running"."""
    sr = state.super_round
    if sr is not None and sr.countdown_deadline is not None:
        sr = replace(sr, countdown_deadline=0)
    return replace(
        state,
        pointout_deadline=None if state.pointout_deadline is None else 0,
        super_round=sr,
    )


class Game(RuleBasedStateMachine):
    @initialize(
        rules=st.sampled_from(list(RuleSet)),
        players=st.integers(2, 5),
        tie_ms=st.sampled_from([0, 5]),
        pointout_s=st.sampled_from([0, 10]),
        lobby=st.sampled_from([False, False, False, True]),
        deals=st.sampled_from([0, 1, 3]),
        dealer_plays=st.booleans(),
        sudden_death=st.booleans(),
    )
    def start(
        self,
        rules: RuleSet,
        players: int,
        tie_ms: int,
        pointout_s: int,
        lobby: bool,
        deals: int,
        dealer_plays: bool,
        sudden_death: bool,
    ):
        self.settings = Settings(
            rules=rules,
            players=1 if RULE_BOOKS[rules].single_player else players,
            tie_ns=tie_ms * NS_PER_MS,
            pointout_ns=pointout_s * NS_PER_S,
            deals=deals,
            dealer_plays=dealer_plays,
            sudden_death=sudden_death,
        )
        self.book = self.settings.book
        self.lobby = lobby
        self.state = new_game(self.settings, lobby=lobby)
        self.inputs: list[Input] = []
        self.now = 0

    def feed(self, gap: int, make) -> None:
        self.now += gap
        inp: Input = make(self.now)
        # Timers due by now fire first; what the input itself does is then a step of its own.
        before, _ = step(self.settings, self.state, Tick(self.now))
        after, effects = step(self.settings, before, inp)
        if after is before:
            assert isinstance(inp, Tick) or effects, "an ignored input must say why"
        elif after.previous is before and not isinstance(inp, Undo):
            undone, _ = step(self.settings, after, Undo(self.now))
            assert timers_aside(undone) == timers_aside(before)
        event(f"reached {after.phase}")
        self.inputs.append(inp)
        self.state = after

    # Weighted so that games get deep (super rounds, ties, timeouts) before they end.
    @rule(
        gap=GAPS,
        kind=st.sampled_from(KINDS),
        player=st.integers(1, 6),
        left=st.none() | st.integers(0, 12),
        cards=cards_st,
    )
    def act(self, gap: int, kind: str, player: int, left: int | None, cards: Cards) -> None:
        makers = {
            "press": lambda t: Press(player, t),
            "valid": lambda t: Verdict(True, t),
            "invalid": lambda t: Verdict(False, t),
            "camera valid": lambda t: CameraVerdict(True, t),
            "camera invalid": lambda t: CameraVerdict(False, t),
            "camera": camera_entry(cards),
            "seen": lambda t: Seen(cards, t),
            "super": Super,
            "undo": Undo,
            "end": lambda t: End(t, left),
            "tick": Tick,
        }
        self.feed(gap, makers[kind])

    @rule(gap=GAPS, joining=st.lists(st.integers(1, 5), min_size=1, max_size=3))
    def super_round(self, gap: int, joining: list[int]) -> None:
        """SUPER, joins, SUPER: the way into a countdown, which random inputs rarely find."""
        self.feed(gap, Super)
        for player in joining:
            self.feed(0, lambda t, p=player: Press(p, t))
        self.feed(NS_PER_S, Super)

    @rule(
        gap=GAPS,
        first=st.integers(1, 5),
        second=st.integers(1, 5),
        then=st.sampled_from(KINDS),
        cards=cards_st,
    )
    def tied_call(self, gap: int, first: int, second: int, then: str, cards: Cards) -> None:
        """Two presses at once and what follows: official shared cards, tied verdicts."""
        self.feed(gap, lambda t: Press(first, t))
        self.feed(0, lambda t: Press(second, t))
        self.act(NS_PER_MS, then, first, None, cards)

    @invariant()
    def no_points_below_zero_unless_the_rules_allow(self) -> None:
        if not self.book.below_zero:
            assert all(p.points >= 0 for p in self.state.players)

    @invariant()
    def the_deck_holds_81_cards(self) -> None:
        state = self.state
        assert 0 <= state.taken <= 81 and state.taken % 3 == 0
        if self.book.bank:
            assert sum(p.points for p in state.players) + state.bank <= state.taken
        if self.book.counts_cards and (state.table or state.taken):  # once dealt
            sets = state.solo.sets if state.solo else sum(p.points for p in state.players)
            assert state.deck >= 0 and state.table >= 0 and state.table % 3 == 0
            assert state.deck + state.table + 3 * sets == 81
            assert state.table >= 12 or state.deck == 0, "the table is dealt up to 12"

    @invariant()
    def solitaire_owes_whole_sets_and_ends_won_or_lost(self) -> None:
        state = self.state
        assert state.owed >= 0
        if self.book.owes:
            assert (state.result is not None) == (state.phase is Phase.OVER)
        else:
            assert state.owed == 0 and state.result is None

    @invariant()
    def an_official_deal_has_at_most_27_sets(self) -> None:
        state = self.state
        if not self.book.deals or not state.deal:  # not official, or never started
            assert state.deal == 0 and state.deal_ends == ()
            return
        assert 1 <= state.deal <= match_deals(self.settings, state)
        assert len(state.deal_ends) in (state.deal - 1, state.deal)
        this_deal = [c for c in state.calls if c.deal == state.deal]
        sets = sum(c.verdicts.count(Judgement.VALID) for c in this_deal)
        shared = sum(1 for c in this_deal if Judgement.SHARED in c.verdicts)
        assert sets <= 27 and 3 * (sets + shared) == state.taken

    @invariant()
    def replay_equals_the_live_state(self) -> None:
        assert replay(self.settings, self.inputs, lobby=self.lobby) == self.state

    @invariant()
    def locked_players_only_where_the_rules_lock(self) -> None:
        if not self.book.locks:
            assert self.state.locked == ()

    @invariant()
    def a_pending_call_has_a_timer_unless_switched_off(self) -> None:
        call = self.state.pending
        if call is not None and self.settings.pointout_ns:
            assert self.state.pointout_deadline is not None
        if self.state.phase is Phase.OPEN:
            assert self.state.pointout_deadline is None and self.state.super_round is None


Game.TestCase.settings = hyp_settings(max_examples=80, stateful_step_count=50)
test_random_games = Game.TestCase


class StoredGame(Game):
    """The same games, every input also written to a real store, as the daemon does."""

    def feed(self, gap: int, make) -> None:
        if not hasattr(self, "store"):  # opened here: initialize rules run in any order
            self.folder = tempfile.TemporaryDirectory()
            self.store = Store.open(Path(self.folder.name) / "referee.db")
            self.game_id = self.store.new_game(self.settings, lobby=self.lobby)
        before = self.state
        super().feed(gap, make)
        inp = self.inputs[-1]
        # Like the daemon, keep a tick only when it changed something.
        if not isinstance(inp, Tick) or self.state is not before:
            self.store.append(self.game_id, inp)

    @invariant()
    def the_stored_game_replays_to_the_live_state(self) -> None:
        if hasattr(self, "store"):
            game = self.store.latest_game()
            assert game is not None and game.state() == self.state

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.close()
            self.folder.cleanup()


StoredGame.TestCase.settings = hyp_settings(max_examples=12, stateful_step_count=40)
test_random_games_through_the_store = StoredGame.TestCase
