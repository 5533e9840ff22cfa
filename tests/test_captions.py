"""The words and numbers every screen shows, shared by the window and the terminal."""

import pytest

from referee.outputs.captions import seconds, shown_ns
from referee.rules import NS_PER_MS, NS_PER_S


@pytest.mark.parametrize(
    ("left_ns", "text"),
    [
        (10 * NS_PER_S, "10"),
        (7_250 * NS_PER_MS, "8"),  # whole seconds, rounded up...
        (3_001 * NS_PER_MS, "4"),
        (3 * NS_PER_S, "3.0"),  # ...then tenths for the last 3 s
        (2_410 * NS_PER_MS, "2.5"),
        (1, "0.1"),  # a timer never reads 0 with time left
        (0, "0.0"),
        (-5, "0.0"),
    ],
)
def test_timers_show_whole_seconds_then_tenths_rounded_up(left_ns, text):
    assert seconds(left_ns) == text


def test_the_shown_time_is_never_less_than_the_time_left():
    for left in range(0, 12 * NS_PER_S, 37 * NS_PER_MS + 1):
        assert left <= shown_ns(left) <= left + NS_PER_S
