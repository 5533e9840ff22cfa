"""The arbiter: presses decided by their first edge's time, behind the sources' watermark."""

from dataclasses import dataclass

from hypothesis import assume, given
from hypothesis import strategies as st

from referee.buttons import PLAYER_BUTTONS
from referee.daemon.arbiter import Arbiter, Decision
from referee.inputs.edges import Edge

US = 1_000
MS = 1_000_000
S = 1_000 * MS
TIE = 100 * US  # the tie window: a GPIO input's resolution


@dataclass(frozen=True)
class Timing:
    debounce_ns: int = 30 * MS
    stuck_ns: int = 10 * S
    end_hold_ns: int = 3 * S
    replay_hold_ns: int = 0  # no REPLAY gesture, but where a test asks for it


def down(button: str, t: int) -> Edge:
    return Edge(button, t, True)


def up(button: str, t: int) -> Edge:
    return Edge(button, t, False)


def test_a_later_press_read_first_is_still_second():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P4", 1_000_300))
    assert arbiter.advance(1_000_350, TIE) == []  # P4's tie window is not behind us yet
    arbiter.take(down("P2", 1_000_000))
    assert arbiter.advance(1_000_300 + TIE, TIE) == [
        Decision(1_000_000, "P2"),
        Decision(1_000_300, "P4"),
    ]


def test_a_press_is_decided_once_the_watermark_passes_it_and_its_tie_window():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 100 * MS))
    assert arbiter.next_due_ns(TIE) == 100 * MS + TIE
    assert arbiter.advance(100 * MS + TIE - 1, TIE) == []
    # The game may run up to the press, not past it: no timer fires ahead of it.
    assert arbiter.horizon(100 * MS + TIE - 1) == 100 * MS
    assert arbiter.advance(100 * MS + TIE, TIE) == [Decision(100 * MS, "P1")]
    assert arbiter.horizon(100 * MS + TIE) == 100 * MS + TIE


def test_a_judge_button_waits_for_no_tie_window():
    arbiter = Arbiter(Timing())
    arbiter.take(down("VALID", 5 * MS))
    assert arbiter.next_due_ns(TIE) == 5 * MS
    assert arbiter.advance(5 * MS, TIE) == [Decision(5 * MS, "VALID")]


def test_a_verdict_inside_a_presss_tie_window_waits_behind_it():
    arbiter = Arbiter(Timing())
    arbiter.take(down("VALID", 10 * MS + 50 * US))
    arbiter.take(down("P3", 10 * MS))
    assert arbiter.advance(10 * MS + 60 * US, TIE) == []
    assert arbiter.horizon(10 * MS + 60 * US) == 10 * MS
    assert arbiter.advance(10 * MS + TIE, TIE) == [
        Decision(10 * MS, "P3"),
        Decision(10 * MS + 50 * US, "VALID"),
    ]


def test_nothing_comes_out_however_late_the_loop_looks_until_the_watermark_says():
    """A stall delays a decision, never changes one: the clock is not the arbiter's."""
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 100 * MS))
    assert arbiter.advance(99 * MS, TIE) == []  # the source is still behind the press
    arbiter.take(down("P6", 99 * MS + 900 * US))
    assert arbiter.advance(200 * MS, TIE) == [
        Decision(99 * MS + 900 * US, "P6"),
        Decision(100 * MS, "P1"),
    ]


def test_bounce_makes_one_press_stamped_at_the_first_edge():
    arbiter = Arbiter(Timing())
    for i, edge in enumerate([down, up, down, up, down]):
        arbiter.take(edge("P3", 10 * MS + i * 200_000))
    assert arbiter.advance(60 * MS, TIE) == [Decision(10 * MS, "P3")]
    assert arbiter.counts("P3") == (1, 4)


def test_a_tap_shorter_than_the_debounce_window_still_ends_in_a_release():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 0))
    arbiter.take(up("P1", 10 * MS))
    assert arbiter.next_due_ns(TIE) == TIE
    assert arbiter.advance(30 * MS, TIE) == [Decision(0, "P1")]
    arbiter.take(down("P1", 100 * MS))  # a second tap counts: the button was seen released
    assert arbiter.advance(200 * MS, TIE) == [Decision(100 * MS, "P1")]


def test_taps_quicker_than_two_debounce_windows_all_count():
    """A tap's release is its own edge: the next window runs from it, not from the first."""
    arbiter = Arbiter(Timing())
    for t in (0, 50 * MS):
        arbiter.take(down("P1", t))
        arbiter.take(up("P1", t + 5 * MS))
        assert arbiter.advance(t + 40 * MS, TIE)[-1:] == [Decision(t, "P1")]
    assert arbiter.counts("P1") == (2, 0)  # the releases were no bounces
    assert arbiter.level("P1") == (False, 55 * MS)


def test_a_second_tap_before_the_first_is_settled_still_counts():
    """A board sends lines in bursts: the next press can come before the watermark moves."""
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 0))
    arbiter.take(up("P1", 1 * MS))
    arbiter.take(down("P1", 100 * MS))
    arbiter.take(up("P1", 101 * MS))
    assert arbiter.advance(200 * MS, TIE) == [Decision(0, "P1"), Decision(100 * MS, "P1")]


@given(gaps=st.lists(st.integers(61 * MS, 2 * S), min_size=1, max_size=10))
def test_every_tap_is_a_press_however_late_the_watermark_moves(gaps):
    arbiter = Arbiter(Timing())
    t, taps = 0, []
    for gap in gaps:
        t += gap
        taps.append(t)
        arbiter.take(down("P1", t))
        arbiter.take(up("P1", t + MS))  # shorter than the debounce window
    assert arbiter.advance(t + S, TIE) == [Decision(tap, "P1") for tap in taps]


def test_a_short_undo_is_an_undo_at_its_release():
    arbiter = Arbiter(Timing())
    arbiter.take(down("UNDO", 0))
    assert arbiter.advance(1 * S, TIE) == []
    arbiter.take(up("UNDO", 1 * S))
    assert arbiter.advance(1 * S, TIE) == [Decision(1 * S, "UNDO")]


def test_undo_held_ends_the_game_when_the_hold_completes():
    arbiter = Arbiter(Timing())
    arbiter.take(down("UNDO", 0))
    assert arbiter.next_due_ns(TIE) == 3 * S
    assert arbiter.advance(3 * S - 1, TIE) == []
    assert arbiter.advance(3 * S, TIE) == [Decision(3 * S, "END")]
    arbiter.take(up("UNDO", 4 * S))
    assert arbiter.advance(5 * S, TIE) == []


def test_a_release_the_source_made_up_decides_nothing():
    """A board unplugged or restarted while UNDO is held: no UNDO, and no END later."""
    arbiter = Arbiter(Timing())
    arbiter.take(down("UNDO", 0))
    arbiter.take(down("P2", 0))
    arbiter.lose_track("UNDO", 1 * S)
    arbiter.lose_track("P2", 1 * S)
    assert arbiter.advance(10 * S, TIE) == [Decision(0, "P2")]
    assert arbiter.level("UNDO") == (False, 1 * S) and arbiter.stuck == ()
    arbiter.take(down("P2", 11 * S))  # seen up, so the next edge is a press
    assert arbiter.advance(12 * S, TIE) == [Decision(11 * S, "P2")]


def test_the_keyboards_end_key_is_a_press():
    arbiter = Arbiter(Timing())
    arbiter.take(down("END", 0))
    assert arbiter.advance(10 * MS, TIE) == [Decision(0, "END")]


def test_a_stuck_button_is_reported_and_taken_back_on_release():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P5", 0))
    assert arbiter.advance(1 * S, TIE) == [Decision(0, "P5")]
    assert arbiter.next_due_ns(TIE) == 10 * S
    arbiter.advance(10 * S, TIE)
    assert arbiter.stuck == ("P5",)
    assert arbiter.next_due_ns(TIE) is None  # a stuck button wakes nobody up
    arbiter.take(up("P5", 12 * S))
    assert arbiter.stuck == ()
    arbiter.take(down("P5", 13 * S))
    assert arbiter.advance(14 * S, TIE) == [Decision(13 * S, "P5")]


def test_a_stuck_undo_never_undoes():
    arbiter = Arbiter(Timing())
    arbiter.held_at_start("UNDO", 0)
    assert arbiter.stuck == ("UNDO",)
    assert arbiter.advance(20 * S, TIE) == []
    arbiter.take(up("UNDO", 21 * S))
    assert arbiter.advance(22 * S, TIE) == [] and arbiter.stuck == ()


def test_a_button_down_at_start_is_stuck_and_makes_no_press():
    arbiter = Arbiter(Timing())
    arbiter.held_at_start("P2", 0)
    assert arbiter.advance(1 * S, TIE) == [] and arbiter.stuck == ("P2",)
    arbiter.take(up("P2", 2 * S))
    arbiter.take(down("P2", 3 * S))
    assert arbiter.advance(4 * S, TIE) == [Decision(3 * S, "P2")]


@given(
    presses=st.lists(
        st.tuples(st.integers(0, 2_000_000), st.integers(0, 5 * S)),  # (edge time, read delay)
        min_size=2,
        max_size=11,
        unique_by=lambda p: p[0],
    ),
    lag=st.integers(0, 2 * MS),
)
def test_decisions_come_out_in_edge_order_whatever_order_edges_are_read_in(presses, lag):
    """A source whose watermark keeps its promise: however late an edge is read (a stall
    of any length), the earlier edge is decided first."""
    arbiter = Arbiter(Timing())
    buttons = [*PLAYER_BUTTONS, "VALID", "INVALID", "SUPER"][: len(presses)]
    reads = sorted(
        (t + delay, t, button) for (t, delay), button in zip(presses, buttons, strict=True)
    )
    decided: list[Decision] = []
    for read_at, t, button in reads:
        arbiter.take(down(button, t))
        # The watermark: every edge not read yet is stamped after it.
        unread = [t2 for r2, t2, _ in reads if r2 > read_at]
        decided += arbiter.advance(min([read_at - lag, *(u - 1 for u in unread)]), TIE)
    decided += arbiter.advance(10 * S, TIE)
    want = sorted((t, b) for (t, _), b in zip(presses, buttons, strict=True))
    assert [(d.t_ns, d.button) for d in decided] == want


def test_undo_held_a_while_and_let_go_is_replay_no_undo_and_no_end():
    """The gesture for boxes without a REPLAY button: UNDO let go after replay_hold and
    before end_hold (docs/rules.md, "Replay")."""
    arbiter = Arbiter(Timing(replay_hold_ns=S))
    for edge in (down("UNDO", 0), up("UNDO", 300 * MS), down("UNDO", S), up("UNDO", S + 1500 * MS)):
        arbiter.take(edge)
    assert arbiter.advance(5 * S, 0) == [
        Decision(300 * MS, "UNDO"),
        Decision(S + 1500 * MS, "REPLAY"),
    ]
    arbiter.take(down("UNDO", 6 * S))
    arbiter.take(up("UNDO", 9 * S + 500 * MS))
    assert arbiter.advance(12 * S, 0) == [Decision(9 * S, "END")]  # held to the end: no REPLAY


def test_undo_held_to_the_end_through_a_stall_is_end_not_undo():
    """Event time: UNDO held 3.5 s whose release was read before the watermark passed its
    hold's end (the daemon stalled) is END when the hold completed, not an undo."""
    arbiter = Arbiter(Timing())
    arbiter.take(down("UNDO", 6 * S))
    arbiter.take(up("UNDO", 9 * S + 500 * MS))
    assert arbiter.advance(12 * S, 0) == [Decision(9 * S, "END")]


def test_valid_pressed_while_undo_is_held_is_a_hint_and_the_hold_decides_nothing_more():
    """The hint's gesture (docs/rules.md, "Is there a SET?"): hold UNDO, press VALID;
    VALID again while UNDO is still held asks again. No verdict, no undo, no END."""
    arbiter = Arbiter(Timing())
    for edge in (
        down("UNDO", 0),
        down("VALID", 500 * MS),
        up("VALID", 600 * MS),
        down("VALID", 2 * S),
        up("VALID", 2100 * MS),
    ):
        arbiter.take(edge)
    assert arbiter.advance(2 * S + 500 * MS, TIE) == [
        Decision(500 * MS, "HINT"),
        Decision(2 * S, "HINT"),
    ]
    assert arbiter.advance(4 * S, TIE) == []  # no END: that hold asked for a hint
    arbiter.take(up("UNDO", 4 * S))
    assert arbiter.advance(5 * S, TIE) == []
    # The next hold of UNDO is an UNDO again.
    arbiter.take(down("UNDO", 6 * S))
    arbiter.take(up("UNDO", 6 * S + 200 * MS))
    assert arbiter.advance(7 * S, TIE) == [Decision(6 * S + 200 * MS, "UNDO")]


def test_invalid_or_super_while_undo_is_held_is_no_hint():
    arbiter = Arbiter(Timing())
    for edge in (down("UNDO", 0), down("INVALID", 100 * MS), down("SUPER", 200 * MS)):
        arbiter.take(edge)
    arbiter.take(up("UNDO", 500 * MS))
    assert arbiter.advance(S, TIE) == [
        Decision(100 * MS, "INVALID"),
        Decision(200 * MS, "SUPER"),
        Decision(500 * MS, "UNDO"),
    ]


def test_the_keyboards_hint_key_is_a_press():
    arbiter = Arbiter(Timing())
    arbiter.take(down("HINT", 0))
    arbiter.take(up("HINT", 0))
    assert arbiter.advance(10 * MS, TIE) == [Decision(0, "HINT")]


@given(
    undo_up=st.integers(31 * MS, 5 * S),
    valid_down=st.integers(S, 9 * S),
    valid_held=st.integers(31 * MS, 2 * S),
    looks=st.lists(st.integers(0, 11 * S), max_size=5),
)
def test_valid_is_a_hint_exactly_while_a_hold_of_undo_has_decided_nothing(
    undo_up, valid_down, valid_held, looks
):
    """UNDO pressed at 3 s and let go undo_up later; VALID pressed at valid_down: a hint when
    that falls within UNDO's hold, after its press and before its END; else VALID as
    ever, and UNDO's hold decides as ever. Whenever the watermark is looked at."""
    pressed, released = 3 * S, 3 * S + undo_up
    assume(valid_down not in (pressed, released))
    timing = Timing()
    arbiter = Arbiter(timing)
    edges = [
        down("UNDO", pressed),
        up("UNDO", released),
        down("VALID", valid_down),
        up("VALID", valid_down + valid_held),
    ]
    decided = []
    for t in sorted([*looks, 13 * S]):  # the watermark moves on, edges read behind it
        for edge in sorted((e for e in edges if e.t_ns <= t), key=lambda e: e.t_ns):
            arbiter.take(edge)
            edges.remove(edge)
        decided += arbiter.advance(t, TIE)
    if pressed < valid_down < pressed + min(undo_up, timing.end_hold_ns):
        want = [Decision(valid_down, "HINT")]
    else:
        end = Decision(pressed + timing.end_hold_ns, "END")
        undo = end if undo_up >= timing.end_hold_ns else Decision(released, "UNDO")
        want = sorted([Decision(valid_down, "VALID"), undo])
    assert decided == want
