"""The arbiter: presses decided by their first edge's time, whatever order callbacks come in."""

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from referee.arbiter import Arbiter, Decision
from referee.edges import PLAYER_BUTTONS, Edge

MS = 1_000_000
S = 1_000 * MS


@dataclass(frozen=True)
class Timing:
    debounce_ns: int = 30 * MS
    settle_ns: int = 5 * MS
    stuck_ns: int = 10 * S
    end_hold_ns: int = 3 * S


def down(button: str, t: int) -> Edge:
    return Edge(button, t, True)


def up(button: str, t: int) -> Edge:
    return Edge(button, t, False)


def test_a_later_press_delivered_first_is_still_second():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P4", 1_000_300))
    arbiter.take(down("P2", 1_000_000))
    assert arbiter.decide(1_000_300 + 4 * MS) == []  # P2's settle window is not over yet
    assert arbiter.decide(1_000_300 + 5 * MS) == [
        Decision(1_000_000, "P2"),
        Decision(1_000_300, "P4"),
    ]


def test_nothing_is_decided_before_its_settle_window_ends():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 100 * MS))
    assert arbiter.next_wakeup_ns() == 105 * MS
    assert arbiter.decide(105 * MS - 1) == []
    assert arbiter.horizon == 100 * MS - 1
    assert arbiter.decide(105 * MS) == [Decision(100 * MS, "P1")]
    assert arbiter.horizon == 100 * MS


def test_bounce_makes_one_press_stamped_at_the_first_edge():
    arbiter = Arbiter(Timing())
    for i, edge in enumerate([down, up, down, up, down]):
        arbiter.take(edge("P3", 10 * MS + i * 200_000))
    assert arbiter.decide(60 * MS) == [Decision(10 * MS, "P3")]
    assert arbiter.counts("P3") == (1, 4)


def test_a_tap_shorter_than_the_debounce_window_still_ends_in_a_release():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 0))
    arbiter.take(up("P1", 10 * MS))
    assert arbiter.next_wakeup_ns() == 5 * MS
    assert arbiter.decide(30 * MS) == [Decision(0, "P1")]
    arbiter.take(down("P1", 100 * MS))  # a second tap counts: the button was seen released
    assert arbiter.decide(200 * MS) == [Decision(100 * MS, "P1")]


def test_taps_quicker_than_two_debounce_windows_all_count():
    """A tap's release is its own edge: the next window runs from it, not from the first."""
    arbiter = Arbiter(Timing())
    for t in (0, 50 * MS):
        arbiter.take(down("P1", t))
        arbiter.take(up("P1", t + 5 * MS))
        assert arbiter.decide(t + 40 * MS)[-1:] == [Decision(t, "P1")]
    assert arbiter.counts("P1") == (2, 0)  # the releases were no bounces
    assert arbiter.level("P1") == (False, 55 * MS)


def test_a_second_tap_before_the_first_is_settled_still_counts():
    """A board sends lines in bursts: the next press can come before `decide` has run."""
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 0))
    arbiter.take(up("P1", 1 * MS))
    arbiter.take(down("P1", 100 * MS))
    arbiter.take(up("P1", 101 * MS))
    assert arbiter.decide(200 * MS) == [Decision(0, "P1"), Decision(100 * MS, "P1")]


@given(gaps=st.lists(st.integers(61 * MS, 2 * S), min_size=1, max_size=10))
def test_every_tap_is_a_press_however_late_decide_runs(gaps):
    arbiter = Arbiter(Timing())
    t, taps = 0, []
    for gap in gaps:
        t += gap
        taps.append(t)
        arbiter.take(down("P1", t))
        arbiter.take(up("P1", t + MS))  # shorter than the debounce window
    assert arbiter.decide(t + S) == [Decision(tap, "P1") for tap in taps]


def test_a_short_undo_is_an_undo_at_its_release():
    arbiter = Arbiter(Timing())
    arbiter.take(down("UNDO", 0))
    assert arbiter.decide(1 * S) == []
    arbiter.take(up("UNDO", 1 * S))
    assert arbiter.decide(1 * S + 5 * MS) == [Decision(1 * S, "UNDO")]


def test_undo_held_ends_the_game_when_the_hold_completes():
    arbiter = Arbiter(Timing())
    arbiter.take(down("UNDO", 0))
    assert arbiter.next_wakeup_ns() == 3 * S
    assert arbiter.decide(3 * S) == []  # decided now, released after its settle window
    assert arbiter.decide(3 * S + 5 * MS) == [Decision(3 * S, "END")]
    arbiter.take(up("UNDO", 4 * S))
    assert arbiter.decide(5 * S) == []


def test_the_keyboards_end_key_is_a_press():
    arbiter = Arbiter(Timing())
    arbiter.take(down("END", 0))
    assert arbiter.decide(10 * MS) == [Decision(0, "END")]


def test_a_stuck_button_is_reported_and_taken_back_on_release():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P5", 0))
    assert arbiter.decide(1 * S) == [Decision(0, "P5")]
    assert arbiter.next_wakeup_ns() == 10 * S
    arbiter.decide(10 * S)
    assert arbiter.stuck == ("P5",)
    assert arbiter.next_wakeup_ns() is None  # a stuck button wakes nobody up
    arbiter.take(up("P5", 12 * S))
    assert arbiter.stuck == ()
    arbiter.take(down("P5", 13 * S))
    assert arbiter.decide(14 * S) == [Decision(13 * S, "P5")]


def test_a_stuck_undo_never_undoes():
    arbiter = Arbiter(Timing())
    arbiter.held_at_start("UNDO", 0)
    assert arbiter.stuck == ("UNDO",)
    assert arbiter.decide(20 * S) == []
    arbiter.take(up("UNDO", 21 * S))
    assert arbiter.decide(22 * S) == [] and arbiter.stuck == ()


def test_a_button_down_at_start_is_stuck_and_makes_no_press():
    arbiter = Arbiter(Timing())
    arbiter.held_at_start("P2", 0)
    assert arbiter.decide(1 * S) == [] and arbiter.stuck == ("P2",)
    arbiter.take(up("P2", 2 * S))
    arbiter.take(down("P2", 3 * S))
    assert arbiter.decide(4 * S) == [Decision(3 * S, "P2")]


def test_an_edge_later_than_the_settle_window_is_moved_up_to_the_horizon_and_counted():
    arbiter = Arbiter(Timing())
    arbiter.take(down("P1", 100 * MS))
    assert arbiter.decide(110 * MS) == [Decision(100 * MS, "P1")]
    assert arbiter.horizon == 105 * MS  # the engine has been told the time up to here
    arbiter.take(down("P2", 99 * MS))  # really first, but 11 ms late: too late to be first
    arbiter.take(down("P3", 103 * MS))
    assert arbiter.decide(120 * MS) == [Decision(105 * MS, "P2"), Decision(105 * MS, "P3")]
    assert arbiter.late == 2


@given(
    presses=st.lists(
        st.tuples(st.integers(0, 2_000_000), st.integers(0, 5 * MS)),  # (edge time, callback delay)
        min_size=2,
        max_size=11,
        unique_by=lambda p: p[0],
    )
)
def test_decisions_come_out_in_edge_order_whatever_order_callbacks_arrive(presses):
    """Up to the settle window's worth of callback delay, the earlier edge always wins."""
    arbiter = Arbiter(Timing())
    buttons = [*PLAYER_BUTTONS, "VALID", "INVALID", "SUPER"][: len(presses)]
    arrivals = sorted(
        (t + delay, t, button) for (t, delay), button in zip(presses, buttons, strict=True)
    )
    decided: list[Decision] = []
    for arrival, t, button in arrivals:
        decided += arbiter.decide(arrival)
        arbiter.take(down(button, t))
    decided += arbiter.decide(1 * S)
    want = sorted((t, b) for (t, _), b in zip(presses, buttons, strict=True))
    assert [(d.t_ns, d.button) for d in decided] == want
    assert arbiter.late == 0
