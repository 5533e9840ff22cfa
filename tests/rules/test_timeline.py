"""A game's history as it stands (rules/timeline.py): its calls and verdicts with their
times, its super rounds and its scores, with what UNDO took back taken out."""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.rules import NS_PER_MS, NS_PER_S, Judgement, RuleSet, Settings, parse_script, replay
from referee.rules.inputs import makes_set
from referee.rules.timeline import RoundEnd, timeline
from tests.tables import table_game
from tests.test_store import inputs_st, settings_st

S = NS_PER_S


def history(text: str):
    script = parse_script(text)
    inputs = [inp for _, inp in script.inputs]
    return timeline(script.settings, inputs, lobby=script.lobby)


SUPER_GAME = """config players=3 rules=super
1 press 2
1.004 press 3
2 valid          # P2's SET, 4 ms before P3
5 press 3
6 valid
7 press 1
8 valid          # a wrong verdict...
9 undo           # ...taken back
10 invalid       # and the right one: P1 had no point, so is locked
12 super
12.5 press 2
12.6 press 3
13 super         # the flip: P2 and P3 in the round
14 press 3
15 invalid       # P3 pays the one point it has and drops out
16 press 2
16.5 valid       # P2 takes the three cards: the round won
20 super
20.5 press 1
21 super         # P1 alone in the round: its time is up at 31 s
35 end
"""


def test_what_undo_took_back_is_not_in_the_history():
    line = history(SUPER_GAME)
    assert [c.call.callers for c in line.calls] == [(2,), (3,), (1,), (3,), (2,)]
    assert [c.at_ns for c in line.calls] == [1 * S, 5 * S, 7 * S, 14 * S, 16 * S]
    judged = [[(r.seat, r.judgement, r.at_ns, r.delta) for r in c.rulings] for c in line.calls]
    assert judged == [
        [(2, Judgement.VALID, 2 * S, 1)],
        [(3, Judgement.VALID, 6 * S, 1)],
        [(1, Judgement.INVALID, 10 * S, 0)],  # not the VALID at 8 s: UNDO took it back
        [(3, Judgement.INVALID, 15 * S, -1)],
        [(2, Judgement.VALID, 16_500_000_000, 3)],
    ]
    assert line.calls[0].margin_ns(2) == 4 * NS_PER_MS
    assert line.calls[1].margin_ns(3) is None  # nobody else pressed


def test_a_judges_press_that_overrules_the_camera_is_the_verdict_that_stands():
    line = history(
        "config players=2\n0 press 1\n1 valid\n2 press 2\n3 camera invalid\n4 valid\n"
        "5 press 1\n6 camera valid\n7 valid\n"
    )
    judged = [[(r.seat, r.judgement, r.at_ns) for r in c.rulings] for c in line.calls]
    assert judged == [
        [(1, Judgement.VALID, 1 * S)],
        [(2, Judgement.VALID, 4 * S)],  # the camera's INVALID at 3 s was overruled
        [(1, Judgement.VALID, 6 * S)],  # the judges agreed: the camera's stands
    ]
    assert line.scores[-1] == (6 * S, (2, 1))


def test_undo_and_overruling_of_the_cameras_verdict_keep_the_cards_it_saw():
    """The verdict with its cards is a step from the call with them (engine._camera_judge):
    UNDO and an overruling press go back to that call, which the history keeps."""
    line = history(
        "config players=2\n0 press 1\n1 camera valid 1rSo 2gTd 3pOs\n2 undo\n3 invalid\n"
        "4 press 2\n5 camera invalid 1rSo 2rSo 3gSo\n6 valid\n"
    )
    judged = [[(r.seat, r.judgement, r.at_ns) for r in c.rulings] for c in line.calls]
    assert judged == [[(1, Judgement.INVALID, 3 * S)], [(2, Judgement.VALID, 6 * S)]]
    assert [makes_set(c.call.seen) for c in line.calls if c.call.seen] == [True, False]


def test_super_rounds_say_who_was_in_them_who_won_and_how_they_ended():
    first, second = history(SUPER_GAME).rounds
    assert (first.opened_ns, first.flip_ns, first.participants) == (12 * S, 13 * S, (2, 3))
    assert (first.winner, first.end, first.ended_ns) == (2, RoundEnd.WON, 16_500_000_000)
    # The countdown ran out at its own deadline, before the end that revealed it.
    assert (second.participants, second.winner) == ((1,), None)
    assert (second.end, second.ended_ns, second.paid) == (RoundEnd.TIME_UP, 31 * S, ())


def test_the_scores_are_the_points_after_each_change_from_the_start():
    line = history(SUPER_GAME)
    assert line.started_ns == 0
    assert line.scores == (
        (0, (0, 0, 0)),
        (2 * S, (0, 1, 0)),
        (6 * S, (0, 1, 1)),
        (15 * S, (0, 1, 0)),
        (16_500_000_000, (0, 4, 0)),
    )


OFFICIAL_GAME = """config players=2 rules=official tie_ms=5
1 press 1
1.003 press 2
2 super          # tied callers' SETs share cards
5 press 2
5.010 press 1
6 valid
8 press 1
20 tick          # P1's point-out time ran out at 18 s
25 super         # the deal, and the match, over
"""


def test_shared_cards_a_timeout_and_the_end_of_an_official_game():
    line = history(OFFICIAL_GAME)
    judged = [[(r.seat, r.judgement, r.at_ns) for r in c.rulings] for c in line.calls]
    assert judged == [
        [(1, Judgement.SHARED, 2 * S), (2, Judgement.SHARED, 2 * S)],
        [(2, Judgement.VALID, 6 * S)],
        [(1, Judgement.TIMEOUT, 18 * S)],
    ]
    assert line.calls[1].margin_ns(2) == 10 * NS_PER_MS
    assert line.scores[-1] == (18 * S, (-1, 1))
    assert [r.player for r in line.final.ranking] == [2, 1]


def test_a_game_in_its_lobby_has_no_start_and_no_scores():
    line = history("0 press 1\n1 press 2\n")
    assert (line.started_ns, line.scores, line.calls) == (None, (), ())
    started = history("0 press 1\n1 press 2\n3 super\n4 press 2\n")
    assert started.started_ns == 3 * S and started.scores == ((3 * S, (0, 0)),)


def check(game_settings: Settings, inputs, lobby: bool) -> None:
    line = timeline(game_settings, inputs, lobby=lobby)
    final = replay(game_settings, inputs, lobby=lobby)
    assert line.final == final.alone()
    assert [c.call for c in line.calls] == list(final.calls)
    for c in line.calls:
        assert tuple(r.judgement for r in c.rulings) == c.call.verdicts
        assert tuple(r.seat for r in c.rulings) == c.call.callers[: len(c.rulings)]
        assert all(c.at_ns <= r.at_ns for r in c.rulings)
    times = [t for t, _ in line.scores]
    assert times == sorted(times)
    if line.scores:
        assert line.scores[-1][1] == tuple(p.points for p in final.players)
    for r in line.rounds:
        assert r.winner is None or r.winner in r.participants
        assert (r.end is RoundEnd.WON) == (r.winner is not None)


@settings(max_examples=60)
@given(game_settings=settings_st, lobby=st.booleans(), inputs=inputs_st)
def test_the_history_ends_in_the_state_replay_makes(game_settings, lobby, inputs):
    check(game_settings, inputs, lobby)


RULES = st.sampled_from([(RuleSet.SUPER, 4), (RuleSet.OFFICIAL, 3), (RuleSet.SOLO, 1)])


@settings(max_examples=25)
@given(rules=RULES, seed=st.integers(0, 2**32), tie=st.sampled_from([0, 5 * NS_PER_MS]))
@example(rules=(RuleSet.SUPER, 4), seed=12540, tie=5 * NS_PER_MS)  # the game ends as a round is won
def test_a_tables_game_with_undos_and_super_rounds_too(rules, seed, tie):
    game_settings = Settings(rules=rules[0], players=rules[1], tie_ns=tie)
    check(game_settings, table_game(game_settings, seed, calls=12), False)
