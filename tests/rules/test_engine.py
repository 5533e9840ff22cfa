"""The engine against docs/rules.md, rule by rule and decision by decision."""

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import (
    NS_PER_S,
    CameraVerdict,
    Card,
    End,
    Ignored,
    Judgement,
    Phase,
    Press,
    RuleSet,
    Seen,
    Settings,
    Super,
    Tick,
    Undo,
    Verdict,
    engine,
    new_game,
    parse_input,
    replay,
    step,
    words,
)
from referee.rules import effects as fx
from referee.rules.engine import _TRANSITIONS
from referee.rules.inputs import makes_set
from tests.tables import table_game

from .helpers import camera_entry, cards_st, play, points

S = NS_PER_S


# --- lobby ---------------------------------------------------------------------------------


def test_lobby_join_leave_and_start():
    _, state, effects = play("0 press 1\n1 press 3\n2 press 3\n3 press 2\n4 super\n")
    assert state.phase is Phase.OPEN
    assert [p.id for p in state.players] == [1, 2]
    assert isinstance(effects[-1], fx.GameStarted)


def test_lobby_needs_two_players_and_says_so():
    _, state, effects = play("0 press 1\n1 super\n")
    assert state.phase is Phase.LOBBY
    assert isinstance(effects[-1], Ignored) and "two players" in effects[-1].reason


def test_solo_lobby_starts_with_one_player():
    settings = Settings(rules=RuleSet.SOLO, players=1)
    state = new_game(settings)
    state, _ = step(settings, state, Press(1, 0))
    state, _ = step(settings, state, Super(5 * S))
    assert state.phase is Phase.OPEN and state.solo is not None and state.solo.ref_ns == 5 * S


def test_a_seat_above_players_is_ignored_everywhere():
    _, state, effects = play("config players=3\n0 press 5\n1 press 4\n")
    assert state.phase is Phase.OPEN and not state.calls
    assert all(isinstance(e, Ignored) and "no seat" in e.reason for e in effects)


def test_a_seat_that_did_not_join_cannot_call():
    _, state, effects = play("0 press 1\n0 press 2\n1 super\n2 press 3\n")
    assert state.phase is Phase.OPEN
    assert "did not join" in effects[-1].reason


# --- calls, first caller, photo finish -----------------------------------------------------


def test_photo_finish_keeps_every_later_press_with_its_offset():
    _, state, _ = play("config players=4\n0.000 press 2\n0.0042 press 4\n0.5 press 1\n")
    call = state.calls[-1]
    assert call.callers == (2,)
    assert [(p, call.offset_ns(t)) for p, t in call.presses] == [
        (2, 0),
        (4, 4_200_000),
        (1, 500_000_000),
    ]


def test_a_photo_finish_effect_says_the_offset_from_the_first_press():
    _, _, effects = play("config players=3\n60 press 1\n60.037 press 2\n")
    assert effects[-1] == fx.PhotoFinish(2, 37_000_000)
    assert effects[-1].text == "P2 +37.0 ms"


def test_photo_finish_press_is_not_an_undo_step():
    _, state, effects = play("config players=3\n0 press 1\n0.1 press 2\n1 undo\n")
    assert state.phase is Phase.OPEN and state.calls == ()
    assert isinstance(effects[-1], fx.Undone) and "P1's call" in effects[-1].step


def test_a_player_appears_once_in_a_photo_finish():
    _, state, effects = play("config players=3\n0 press 1\n0.1 press 2\n0.2 press 2\n")
    assert [p for p, _ in state.calls[-1].presses] == [1, 2]
    assert "already pressed" in effects[-1].reason


def test_a_locked_press_in_open_is_recorded_nowhere():
    _, state, effects = play("config players=3\n0 press 1\n1 invalid\n2 press 1\n")
    assert state.locked == (1,) and state.phase is Phase.OPEN
    assert len(state.calls) == 1
    assert isinstance(effects[-1], Ignored) and "locked" in effects[-1].reason


def test_a_locked_players_press_during_a_call_joins_the_photo_finish_only():
    text = "config players=3 tie_ms=5\n0 press 1\n1 invalid\n2 press 2\n2.001 press 1\n"
    _, state, _ = play(text)
    call = state.calls[-1]
    assert call.callers == (2,)
    assert [p for p, _ in call.presses] == [2, 1]


def test_valid_gives_one_point_and_two_cards_to_the_bank():
    _, state, _ = play("config players=2\n0 press 1\n1 valid\n")
    assert points(state) == [1, 0] and state.bank == 2 and state.phase is Phase.OPEN


def test_invalid_with_points_pays_one_to_the_bank():
    _, state, _ = play("config players=2\n0 press 1\n1 valid\n2 press 1\n3 invalid\n")
    assert points(state) == [0, 0] and state.bank == 3 and state.locked == ()


def test_invalid_without_points_locks_until_another_players_valid():
    text = "config players=3\n0 press 1\n1 invalid\n2 press 2\n3 valid\n"
    _, state, effects = play(text)
    assert state.locked == ()
    assert any(isinstance(e, fx.Unlocked) and e.players == (1,) for e in effects)


def test_a_verdict_with_no_call_is_ignored_and_not_an_undo_step():
    _, state, effects = play("config players=2\n0 press 1\n1 valid\n2 valid\n3 undo\n")
    assert isinstance(effects[-2], Ignored) and "no call" in effects[-2].reason
    # The undo took back the valid verdict, not the ignored one.
    assert state.phase is Phase.CALL and points(state) == [0, 0]


# --- the point-out timer and the same instant -----------------------------------------------


def test_a_verdict_stamped_exactly_at_the_deadline_is_late():
    _, state, effects = play("config players=2 pointout_s=10\n0 press 1\n10 valid\n")
    assert state.calls[-1].verdicts == (Judgement.TIMEOUT,)
    assert state.locked == (1,)  # 0 points: the timeout locks like a mistake
    assert isinstance(effects[-1], Ignored)


def test_pointout_zero_means_no_timer():
    _, state, _ = play("config players=2 pointout_s=0\n0 press 1\n1000 tick\n")
    assert state.phase is Phase.CALL and state.deadline is None


def test_timeout_is_scored_as_invalid_and_recorded():
    text = "config players=2 pointout_s=10\n0 press 1\n1 valid\n2 press 1\n12.5 tick\n"
    _, state, _ = play(text)
    assert state.calls[-1].verdicts == (Judgement.TIMEOUT,)
    assert points(state) == [0, 0] and state.bank == 3


def test_tied_co_caller_turn_starts_at_the_predecessors_deadline():
    text = "config players=3 tie_ms=5 pointout_s=10\n0 press 1\n0.002 press 2\n15 tick\n"
    _, state, effects = play(text)
    call = state.calls[-1]
    assert call.verdicts == (Judgement.TIMEOUT,)
    assert state.pointout_deadline == 20 * S  # 10 s from the first deadline, not from the tick
    assert isinstance(effects[-1], fx.TurnStarted) and effects[-1].player == 2


# --- ties ----------------------------------------------------------------------------------


def test_equal_stamps_tie_with_tie_zero_and_go_by_seat():
    _, state, _ = play("config players=3\n0 press 3\n0 press 2\n")
    call = state.calls[-1]
    assert call.callers == (2, 3)
    assert [p for p, _ in call.presses] == [2, 3]


def test_tie_window_is_inclusive():
    _, state, _ = play("config players=3 tie_ms=5\n0 press 1\n0.005 press 2\n0.0051 press 3\n")
    assert state.calls[-1].callers == (1, 2)


def test_co_caller_only_before_any_verdict():
    text = "config players=3 tie_ms=5\n0 press 1\n0.001 press 2\n0.002 invalid\n0.003 press 3\n"
    _, state, _ = play(text)
    call = state.calls[-1]
    assert state.phase is Phase.CALL and call.callers == (1, 2) and call.turn == 2
    assert [p for p, _ in call.presses] == [1, 2, 3]


def test_co_caller_is_an_undo_step_of_its_own():
    _, state, _ = play("config players=3 tie_ms=5\n0 press 1\n0.002 press 2\n1 undo\n")
    assert state.phase is Phase.CALL and state.calls[-1].callers == (1,)
    assert [p for p, _ in state.calls[-1].presses] == [1]


def test_tied_callers_one_valid_one_invalid():
    text = "config players=3 tie_ms=5\n0 press 1\n0.001 press 2\n1 valid\n2 invalid\n"
    _, state, _ = play(text)
    assert points(state) == [1, 0, 0] and state.locked == (2,) and state.bank == 2


def test_at_most_three_valid_co_callers_score():
    text = "config players=4 tie_ms=5\n0 press 1\n0 press 2\n0 press 3\n0 press 4\n"
    text += "1 valid\n2 valid\n3 valid\n4 valid\n"
    _, state, _ = play(text)
    assert points(state) == [1, 1, 1, 0] and state.bank == 0


def test_all_tied_callers_invalid_gives_the_bank_nothing_from_the_cards():
    text = "config players=3 tie_ms=5\n0 press 1\n1 valid\n2 press 1\n2 press 3\n"
    text += "3 invalid\n4 invalid\n"
    _, state, _ = play(text)
    assert points(state) == [0, 0, 0] and state.bank == 3 and state.locked == (3,)


def test_a_valid_co_caller_unlocks_one_locked_earlier_in_the_same_call():
    text = "config players=3 tie_ms=5\n0 press 1\n0 press 2\n1 invalid\n2 valid\n"
    _, state, _ = play(text)
    assert state.locked == ()


# --- super rounds --------------------------------------------------------------------------


def test_super_join_leave_and_cancel_with_nobody():
    _, state, effects = play("config players=3\n0 super\n1 press 1\n2 press 1\n3 super\n")
    assert state.phase is Phase.OPEN and state.super_round is None
    assert isinstance(effects[-1], fx.SuperCancelled)


def test_undo_in_super_join_returns_to_before_the_super():
    _, state, _ = play("config players=3\n0 super\n1 press 1\n2 undo\n")
    assert state.phase is Phase.OPEN and state.super_round is None


def test_locked_player_cannot_join_a_super_round():
    _, state, effects = play("config players=3\n0 press 1\n1 invalid\n2 super\n3 press 1\n")
    assert state.super_round is not None and state.super_round.participants == ()
    assert "locked" in effects[-1].reason


def test_only_participants_call_in_the_countdown():
    text = "config players=3\n0 super\n1 press 1\n2 super\n3 press 2\n"
    _, state, effects = play(text)
    assert state.phase is Phase.SUPER_COUNTDOWN
    assert isinstance(effects[-1], Ignored) and "P1" in effects[-1].reason


def test_countdown_pauses_during_a_super_call_and_resumes_after_an_invalid():
    text = "config players=3\n0 press 2\n1 valid\n2 super\n3 press 1\n3.5 press 2\n4 super\n"
    text += "6 press 1\n9 invalid\n"
    _, state, _ = play(text)
    # P1 had 0 points: pays nothing, is locked, drops out. P2 is still in: the countdown resumes
    # with the 8 s it had left when P1 pressed, counted from the verdict.
    assert state.locked == (1,)
    assert state.phase is Phase.SUPER_COUNTDOWN
    assert state.super_round is not None
    assert state.super_round.participants == (2,) and state.super_round.dropped == (1,)
    assert state.super_round.countdown_deadline == 17 * S


def test_invalid_super_call_with_one_point_pays_one_and_is_not_locked():
    text = (
        "config players=3\n0 press 1\n1 valid\n2 super\n3 press 1\n4 super\n5 press 1\n6 invalid\n"
    )
    _, state, _ = play(text)
    assert points(state) == [0, 0, 0] and state.bank == 3 and state.locked == ()
    assert state.phase is Phase.OPEN  # nobody left in the round: it ends, no further penalty


def test_a_dropped_participant_does_not_pay_again_at_time_up():
    text = "config players=3\n0 press 1\n1 valid\n2 press 2\n3 valid\n4 press 2\n5 valid\n"
    text += "10 super\n11 press 1\n11 press 2\n12 super\n13 press 2\n14 invalid\n30 tick\n"
    _, state, effects = play(text)
    # P2 paid 2 for the invalid call; at time up only P1 pays 1.
    assert points(state) == [0, 0, 0] and state.bank == 9
    assert any(isinstance(e, fx.TimeUp) and e.paid == (1,) for e in effects)


def test_time_up_with_no_points_pays_nothing_and_locks_nobody():
    _, state, _ = play("config players=2\n0 super\n1 press 1\n2 super\n13 tick\n")
    assert state.phase is Phase.OPEN and state.locked == () and state.bank == 0


def test_an_input_at_the_countdowns_zero_is_too_late():
    _, state, effects = play("config players=2\n0 super\n1 press 1\n2 super\n12 press 1\n")
    assert [type(e) for e in effects[-2:]] == [fx.TimeUp, fx.CallOpened]
    assert state.phase is Phase.CALL  # the press at zero opens an ordinary call afterwards


def test_tied_super_call_first_valid_takes_three_later_valid_nothing():
    text = "config players=3 tie_ms=5\n0 super\n1 press 1\n1 press 2\n2 super\n3 press 1\n"
    text += "3.001 press 2\n4 valid\n5 valid\n"
    _, state, _ = play(text)
    assert points(state) == [3, 0, 0] and state.bank == 0 and state.phase is Phase.OPEN


def test_tied_super_call_both_invalid_resumes_the_countdown():
    text = "config players=3 tie_ms=5\n0 press 1\n1 valid\n2 press 2\n3 valid\n4 press 3\n5 valid\n"
    text += "10 super\n11 press 1\n11 press 2\n11 press 3\n12 super\n14 press 1\n14 press 2\n"
    text += "15 invalid\n16 invalid\n"
    _, state, _ = play(text)
    assert points(state) == [0, 0, 1] and state.bank == 8
    assert state.phase is Phase.SUPER_COUNTDOWN
    assert state.super_round is not None and state.super_round.participants == (3,)


def test_super_means_nothing_during_a_call_or_countdown():
    _, state, effects = play("config players=2\n0 press 1\n1 super\n")
    assert state.phase is Phase.CALL and "being judged" in effects[-1].reason
    _, state, effects = play("config players=2\n0 super\n1 press 1\n2 super\n3 super\n")
    assert state.phase is Phase.SUPER_COUNTDOWN and "countdown" in effects[-1].reason


# --- undo ----------------------------------------------------------------------------------


def test_undo_restarts_a_running_pointout_timer_in_full():
    text = "config players=2 pointout_s=10\n0 press 1\n5 valid\n8 undo\n"
    _, state, _ = play(text)
    assert state.phase is Phase.CALL and state.pointout_deadline == 18 * S


def test_undo_restarts_a_running_countdown_in_full():
    text = "config players=2\n0 super\n1 press 1\n2 super\n5 press 1\n6 undo\n"
    _, state, _ = play(text)
    assert state.phase is Phase.SUPER_COUNTDOWN
    assert state.super_round is not None and state.super_round.countdown_deadline == 16 * S


def test_undo_keeps_a_paused_countdowns_rest():
    text = "config players=2 tie_ms=5\n0 super\n1 press 1\n1 press 2\n2 super\n5 press 1\n"
    text += "5.001 press 2\n6 invalid\n7 undo\n"
    _, state, _ = play(text)
    assert state.phase is Phase.SUPER_CALL
    assert state.super_round is not None and state.super_round.countdown_left_ns == 7 * S
    assert state.pointout_deadline == 17 * S


def test_undo_of_a_timeout_brings_the_call_back():
    _, state, _ = play("config players=2 pointout_s=10\n0 press 1\n11 tick\n12 undo\n")
    assert state.phase is Phase.CALL and state.calls[-1].verdicts == ()
    assert state.locked == () and state.pointout_deadline == 22 * S


def test_undo_walks_back_and_stops_at_the_beginning():
    text = "config players=2\n0 press 1\n1 valid\n2 press 2\n3 invalid\n4 undo\n5 undo\n6 undo\n"
    text += "7 undo\n8 undo\n"
    _, state, effects = play(text)
    assert state.phase is Phase.OPEN and state.calls == () and points(state) == [0, 0]
    assert isinstance(effects[-1], Ignored) and "nothing to undo" in effects[-1].reason


def test_undo_in_the_lobby_is_meaningless():
    _, state, effects = play("0 press 1\n1 undo\n")
    assert [p.id for p in state.players] == [1]
    assert "lobby" in effects[-1].reason


def test_undo_of_the_end_resumes_the_game():
    _, state, _ = play("config players=2\n0 press 1\n1 valid\n2 end\n3 undo\n")
    assert state.phase is Phase.OPEN and state.ranking == ()


# --- deck, official, solo, end -------------------------------------------------------------


def test_the_deck_holds_only_81_cards():
    lines = ["config players=2"]
    t = 0
    for _ in range(27):
        lines += [f"{t} press 1", f"{t + 1} valid"]
        t += 2
    lines += [f"{t} press 2", f"{t + 1} valid"]
    _, state, effects = play("\n".join(lines))
    assert points(state) == [27, 0] and state.bank == 54
    assert state.phase is Phase.CALL  # the 28th SET is refused: the call still waits
    assert isinstance(effects[-1], Ignored) and "81" in effects[-1].reason


def test_official_mistake_moves_no_card_and_goes_below_zero():
    text = (
        "config players=2 rules=official pointout_s=5\n0 press 2\n1 invalid\n2 press 2\n10 tick\n"
    )
    _, state, _ = play(text)
    assert points(state) == [0, -2] and state.bank == 0 and state.locked == ()


def test_official_super_ends_the_deal_and_with_one_deal_the_match():
    _, state, effects = play("config players=2 rules=official\n0 press 1\n1 valid\n2 super\n")
    assert state.phase is Phase.OVER and state.deal_ends == ((1, 0),)
    assert [e.text for e in effects[-2:]] == ["deal 1 of 1 over", "game over: 1. P1 1, 2. P2 0"]


def test_official_tied_callers_both_valid_both_score():
    _, state, _ = play("config players=2 rules=official\n0 press 1\n0 press 2\n1 valid\n2 valid\n")
    assert points(state) == [1, 1]


def test_solo_increment_rounds_half_up():
    _, state, _ = play("config players=1 rules=solo\n45 press 1\n46 valid\n")
    assert points(state) == [13]  # 100 * 2**-3 = 12.5


def test_solo_increment_never_below_one():
    _, state, _ = play("config players=1 rules=solo\n1000 press 1\n1001 valid\n")
    assert points(state) == [1]


def test_solo_counts_from_the_last_valid_verdict_not_the_press():
    text = "config players=1 rules=solo pointout_s=0\n0 press 1\n15 valid\n30 press 1\n31 valid\n"
    _, state, _ = play(text)
    # First: pressed at 0 -> 100. Reference becomes 15 s; second pressed 15 s later -> 50.
    assert points(state) == [150]


def test_solo_invalid_takes_25_never_below_zero_and_timeout_too():
    text = "config players=1 rules=solo pointout_s=10\n0 press 1\n1 invalid\n2 press 1\n3 valid\n"
    text += "4 press 1\n20 tick\n"
    _, state, _ = play(text)
    # 0 stays 0; then pressed 2 s in: 100 * 2**(-2/15) = 91.2 -> 91; the timeout takes 25.
    assert points(state) == [66]


def test_solo_wrong_no_set_claim_zeroes_the_next_set():
    text = (
        "config players=1 rules=solo\n0 super\n1 invalid\n2 press 1\n3 valid\n4 press 1\n5 valid\n"
    )
    _, state, effects = play(text)
    assert state.calls and all(c.callers == (1,) for c in state.calls)
    assert len(state.calls) == 2  # the claim is not a call
    # The next SET scores 0 and restarts the increment: pressed 1 s later, 100 * 2**(-1/15) = 95.5.
    assert points(state) == [95]
    assert any(isinstance(e, fx.ClaimJudged) and not e.upheld for e in effects)


def test_solo_right_no_set_claim_changes_nothing():
    _, state, _ = play("config players=1 rules=solo\n0 super\n1 valid\n2 press 1\n3 valid\n")
    # Nothing changed: the press 2 s after the start scores 100 * 2**(-2/15) = 91.2.
    assert state.solo is not None and not state.solo.zeroed and points(state) == [91]


def test_solo_undo_restores_the_reference_time_exactly():
    text = "config players=1 rules=solo\n0 press 1\n10 valid\n20 undo\n25 valid\n"
    _, state, _ = play(text)
    assert state.solo is not None and state.solo.ref_ns == 25 * S and points(state) == [100]


def test_solo_end_bonus_rounds_half_up():
    text = "config players=1 rules=solo\n0 press 1\n1 valid\n45 press 1\n46 valid\n50 end left=3\n"
    _, state, _ = play(text)
    # 100 + 2**(-44/15)*100 = 100 + 13 = 113; bonus 3 * 113 / 6 = 56.5 -> 57.
    assert points(state) == [170] and state.phase is Phase.OVER


def test_solo_end_without_sets_has_no_bonus():
    _, state, _ = play("config players=1 rules=solo\n10 end left=12\n")
    assert points(state) == [0]


def test_ranking_is_standard_competition():
    text = "config players=4\n0 press 1\n1 valid\n2 press 2\n3 valid\n4 press 4\n5 valid\n"
    text += "6 press 4\n7 valid\n8 end\n"
    _, state, _ = play(text)
    assert [(r.place, r.player) for r in state.ranking] == [(1, 4), (2, 1), (2, 2), (4, 3)]


def test_inputs_after_the_end_are_ignored():
    _, state, effects = play("config players=2\n0 end\n1 press 1\n2 super\n3 valid\n4 end\n")
    assert state.phase is Phase.OVER
    assert all(isinstance(e, Ignored) and "over" in e.reason for e in effects[1:])


# --- every phase answers every input --------------------------------------------------------

REACH = {
    Phase.LOBBY: "",
    Phase.OPEN: "config players=3\n",
    Phase.CALL: "config players=3\n0 press 1\n",
    Phase.SUPER_JOIN: "config players=3\n0 super\n0 press 2\n",
    Phase.SUPER_COUNTDOWN: "config players=3\n0 super\n0 press 2\n0 super\n",
    Phase.SUPER_CALL: "config players=3\n0 super\n0 press 2\n0 super\n0.5 press 2\n",
    Phase.OVER: "config players=3\n0 end\n",
}
A_SET = (Card((0, 0, 0, 0)), Card((1, 1, 1, 1)), Card((2, 2, 2, 2)))
INPUTS = [Press(1, S), Press(2, S), Verdict(True, S), Verdict(False, S), CameraVerdict(True, S),
          CameraVerdict(False, S), CameraVerdict(True, S, A_SET), Seen(A_SET, S), Super(S),
          Undo(S), End(S), Tick(S)]  # fmt: skip


@pytest.mark.parametrize("phase", list(Phase))
@pytest.mark.parametrize("inp", INPUTS, ids=repr)
def test_every_input_in_every_phase_changes_the_state_or_says_why(phase, inp):
    settings, state, _ = play(REACH[phase])
    assert state.phase is phase
    after, effects = step(settings, state, inp)
    if after is state:
        assert isinstance(inp, Tick) or any(isinstance(e, Ignored) for e in effects)
    else:
        assert effects and not any(isinstance(e, Ignored) for e in effects)


def test_ignored_inputs_leave_the_very_same_state():
    settings, state, _ = play(REACH[Phase.CALL])
    after, effects = step(settings, state, Super(S))
    assert after is state and isinstance(effects[0], Ignored)


def test_the_transition_table_is_keyed_by_phase_and_input_type():
    assert all(isinstance(p, Phase) and isinstance(k, type) for p, k in _TRANSITIONS)


def test_the_engine_asks_the_rule_books_never_a_rule_sets_name():
    """Rule-set differences live in one table (rulesets.py), not in branches here."""
    source = (Path(engine.__file__)).read_text()
    assert "RuleSet" not in source
    assert not any(f"rules {op}" in source for op in ("is", "==", "!=", "in"))


TABLES = [(RuleSet.SUPER, 4), (RuleSet.OFFICIAL, 3), (RuleSet.SOLO, 1), (RuleSet.SOLITAIRE, 1)]


@settings(max_examples=60)
@given(
    rules=st.sampled_from(TABLES),
    seed=st.integers(0, 2**32),
    cut=st.integers(0, 200),
    valid=st.booleans(),
    cards=st.none() | cards_st.filter(lambda cards: makes_set(cards) is not None),
)
def test_a_judges_press_overruling_the_camera_is_as_if_the_camera_had_said_nothing(
    rules, seed, cut, valid, cards
):
    """docs/rules.md, "The camera": anywhere in a game, the other verdict replaces the
    camera's and the same one changes nothing; UNDO then brings the call back. Without a
    point-out limit, which the camera's verdict beat. What the camera saw stays with the
    call throughout."""
    game_settings = Settings(rules=rules[0], players=rules[1], pointout_ns=0)
    inputs = table_game(game_settings, seed, calls=15, end=False)[:cut]
    state = replay(game_settings, inputs, lobby=False)
    t = max((i.t_ns for i in inputs), default=0) + S
    free = [p.id for p in state.players if not p.locked]
    if state.phase is Phase.OPEN and free:  # a lone call, opened by the first who may call
        state, _ = step(game_settings, state, Press(free[0], t))
    call = state.pending
    if call is None or len(call.callers) > 1 or state.phase is not Phase.CALL:
        return  # a super round, a tie, the end: what other tests play
    if cards is not None:
        valid = bool(makes_set(cards))
    seen = state if cards is None else step(game_settings, state, Seen(cards, t + S))[0]
    judged, _ = step(game_settings, seen, Verdict(not valid, t + 2 * S))
    by_camera, _ = step(game_settings, state, CameraVerdict(valid, t + S, cards))
    if by_camera is state:
        return  # refused (no cards left for a VALID): nothing to overrule
    overruled, effects = step(game_settings, by_camera, Verdict(not valid, t + 2 * S))
    if judged is seen:  # the judges' VALID refused (no cards left): the camera's stands
        assert overruled is by_camera and isinstance(effects[-1], fx.Ignored)
        return
    assert overruled == judged
    agreed, effects = step(game_settings, by_camera, Verdict(valid, t + 2 * S))
    assert agreed is by_camera and isinstance(effects[-1], fx.Ignored)
    undone, _ = step(game_settings, overruled, Undo(t + 3 * S))
    assert undone.pending == seen.pending
    assert seen.pending is not None and seen.pending.seen == cards


@given(cards=cards_st)
def test_the_cards_seen_read_back_from_the_ledgers_words(cards):
    """Every three faces, sure or not, as seen and (three sure) as the camera's verdict."""
    for inp in (Seen(cards, S), camera_entry(cards)(S)):
        text = words(inp)
        assert parse_input(text.split(), S) == inp
        assert len(text) <= len("camera invalid 1rSo 2gTd 3pOs")  # a short line a call


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("camera valid 1rSo 2rSo 3rSd", "no SET: camera invalid"),
        ("camera invalid 1rSo 2rSo 3rSo", "a SET: camera valid"),
        ("camera valid 1rSo 2rSo 3rSo?", "only three cards read surely"),
        ("seen 1rSo 2rSo", "three cards"),
        ("seen 1rSo 2rSo 3rso", "'3rso': a card is its number"),
        ("seen 1rSo 2rSo 3rSo??", "'3rSo??'"),
        ("camera 1rSo 2rSo 3rSo", "camera takes valid or invalid"),
    ],
)
def test_cards_that_say_something_else_are_refused(text, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        parse_input(text.split(), S)


@given(
    rules=st.sampled_from(["solo", "solitaire"]),
    sudden_death=st.booleans(),
    sets=st.sampled_from([0, 1, 22, 23]),  # 23 valid SETs empty the deck
    camera=st.booleans(),
    judges=st.booleans(),
)
def test_a_no_set_claim_overruled_is_as_the_judges_verdict_alone(
    rules, sudden_death, sets, camera, judges
):
    """The camera's check of a no-SET claim, then a judge's press: the game the judges'
    verdict alone gives (in solitaire, where no press judges the claim, the camera's check
    saying what the judges said); UNDO then leaves the claim as it was with no camera."""
    lines = [f"config players=1 rules={rules} sudden_death={str(sudden_death).lower()}"]
    lines += [f"{t} press 1\n{t} valid" for t in range(sets)]
    said = {True: "valid", False: "invalid"}
    claim = f"{sets} super\n{sets} camera {said[camera]}\n{sets + 1} {said[judges]}"
    _, overruled, _ = play("\n".join([*lines, claim]))
    alone = f"{sets} super\n{sets + 1} {said[judges]}"
    if rules == "solitaire":
        alone = f"{sets} super\n{sets + 1} camera {said[judges]}"
    _, judged, _ = play("\n".join([*lines, alone]))
    assert overruled == judged
    if rules == "solo":  # the camera's check alone: as the judges' same verdict
        _, checked, _ = play("\n".join([*lines, f"{sets} super\n{sets} camera {said[camera]}"]))
        _, pressed, _ = play("\n".join([*lines, f"{sets} super\n{sets} {said[camera]}"]))
        assert checked == pressed
    _, undone, _ = play("\n".join([*lines, claim, f"{sets + 2} undo"]))
    if camera is not judges:  # overruled: the judges' verdict taken back
        _, claimed, _ = play("\n".join([*lines, f"{sets} super"]))
        assert undone == claimed
