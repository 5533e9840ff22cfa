import random
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.inputs.board_clock import (
    CLOCK_MARGIN_NS,
    LEARN_READS,
    MARGIN_NS,
    MAX_BURST_US,
    PLAUSIBLE_NS,
    QUIET_US,
    REANCHOR_GAP_US,
    WINDOW_READS,
    BoardClock,
)

MS = 1_000_000  # ns
S = 1000 * MS


def seen_and_mapped(clock: BoardClock, board_us: list[int], received_ns: int) -> list[int]:
    """Lines that all speak for the clock (a board without T lines): each observed, then
    mapped."""
    for t_us in board_us:
        clock.observe(t_us, received_ns)
    return clock.map(board_us)


# A read: the t_us steps from the line before (the first relative to the last read), and
# when the read came, relative to the read before.
reads = st.lists(
    st.tuples(
        st.lists(st.integers(0, 3 * QUIET_US), min_size=1, max_size=4),
        st.integers(-50 * MS, 50 * MS),
    ),
    min_size=1,
    max_size=30,
)


def play(
    reads_: list[tuple[list[int], int]], clock: BoardClock | None = None
) -> list[tuple[int, int]]:
    """(t_us, t_ns) of every edge, mapped read by read (by `clock`, a new one by default)."""
    clock = BoardClock() if clock is None else clock
    t_us, received = 0, 10**12
    out: list[tuple[int, int]] = []
    for steps, delay in reads_:
        batch = []
        for step in steps:
            t_us += step
            batch.append(t_us)
        received += delay
        out += zip(batch, seen_and_mapped(clock, batch, received), strict=True)
    return out


@given(reads)
def test_the_mapping_never_goes_back_and_keeps_distinct_stamps_apart(reads_):
    # Whatever the receive times do, even going back.
    mapped = play(reads_)
    for (us0, ns0), (us1, ns1) in pairwise(mapped):
        assert ns1 >= ns0
        assert (ns1 == ns0) == (us1 == us0)


def one_burst(steps: list[int], latencies: list[int]) -> tuple[list[int], list[int]]:
    """The stamps of a burst (steps apart, within MAX_BURST_US) and their mapped times,
    each line read on its own, each with its own latency."""
    clock = BoardClock()
    t_us = [5_000_000]
    for step in steps:
        t_us.append(min(t_us[-1] + step, t_us[0] + MAX_BURST_US - 1))
    mapped = [
        seen_and_mapped(clock, [us], 10**12 + 1000 * us + latency)[0]
        for us, latency in zip(t_us, latencies, strict=False)
    ]
    return t_us, mapped


@given(
    st.lists(st.integers(0, QUIET_US - 1), min_size=1, max_size=19),
    st.lists(st.integers(0, MARGIN_NS), min_size=20, max_size=20),
)
def test_a_burst_keeps_the_boards_differences_exactly(steps, latencies):
    """While the latencies stay within the margin: see the next test for the rest."""
    t_us, mapped = one_burst(steps, latencies)
    assert [ns - mapped[0] for ns in mapped] == [1000 * (us - t_us[0]) for us in t_us]


@given(
    st.lists(st.integers(0, QUIET_US - 1), min_size=1, max_size=19),
    st.lists(st.integers(0, 200 * MS), min_size=20, max_size=20),
)
def test_a_burst_mapped_after_the_arrivals_is_re_anchored_only_between_presses_far_apart(
    steps, latencies
):
    """A burst whose first line was slow maps the faster ones after their arrival: it is
    re-anchored at the next gap no photo finish spans (a board sending T lines never
    falls quiet), and never maps two edges closer than that with different offsets."""
    t_us, mapped = one_burst(steps, latencies)
    for (us0, ns0), (us1, ns1) in pairwise(zip(t_us, mapped, strict=False)):
        assert ns1 > ns0 or us1 == us0
        if us1 - us0 < REANCHOR_GAP_US:
            assert ns1 - ns0 == 1000 * (us1 - us0)


def test_a_slow_first_line_is_forgotten_at_the_next_wide_gap():
    clock = BoardClock()
    offset = 10**12
    (first,) = seen_and_mapped(
        clock, [1_000_000], offset + 1000 * 1_000_000 + 100 * MS
    )  # a slow line
    assert first == offset + 1000 * 1_000_000 + 95 * MS
    # T lines every 100 ms, each 1 ms on its way: mapped after their arrival until...
    (late,) = seen_and_mapped(clock, [1_050_000], offset + 1000 * 1_050_000 + MS)
    assert late == first + 50 * MS
    (anchored,) = seen_and_mapped(clock, [1_150_000], offset + 1000 * 1_150_000 + MS)
    assert anchored == offset + 1000 * 1_150_000 + MS - MARGIN_NS


@given(
    # At least 15 s of edges 50 to 200 ms apart: every example crosses MAX_BURST_US.
    st.lists(st.integers(REANCHOR_GAP_US // 2, 2 * REANCHOR_GAP_US), min_size=300, max_size=400),
    st.randoms(use_true_random=False),
)
# 15 s of edges is the point (a burst outlasting MAX_BURST_US): drawing 300 of them is slow
# by Hypothesis's measure on a busy machine, not a strategy gone wrong.
@settings(max_examples=30)
def test_presses_a_photo_finish_compares_keep_the_boards_spacing_in_any_burst(steps, rnd):
    """However long a busy spell, two edges closer than REANCHOR_GAP_US are never mapped
    with different offsets: a 0.3 ms margin stays 0.3 ms, and never becomes a tie."""
    clock = BoardClock()
    t_us, mapped = 5_000_000, []
    for step in steps:
        t_us += step
        arrival = 10**12 + 1000 * t_us + rnd.randint(0, 10 * MS)
        mapped.append((t_us, seen_and_mapped(clock, [t_us], arrival)[0]))
    for (us0, ns0), (us1, ns1) in pairwise(mapped):
        if us1 - us0 < REANCHOR_GAP_US:
            assert ns1 - ns0 == 1000 * (us1 - us0)


def test_a_long_busy_spell_does_not_cut_a_close_finish():
    """The case that found the rule: 10 s of lines at 4 ms latency, then two presses
    0.3 ms apart on either side of the burst's limit, the second line much faster."""
    clock = BoardClock()
    start = t_us = 1_000_000
    while t_us < start + MAX_BURST_US - 50_000:
        seen_and_mapped(clock, [t_us], 10**12 + 1000 * t_us + 4 * MS)
        t_us += 50_000
    t_us = start + MAX_BURST_US - 100
    first = seen_and_mapped(clock, [t_us], 10**12 + 1000 * t_us + 4 * MS)[0]
    second = seen_and_mapped(clock, [t_us + 300], 10**12 + 1000 * (t_us + 300) + MS // 2)[0]
    assert second - first == 300_000


def test_lines_read_together_all_map_before_their_arrival():
    clock = BoardClock()
    received = 7_000 * MS
    mapped = seen_and_mapped(clock, [1_000, 1_300, 2_900], received)
    # The last line gives the tightest bound; it is met with the margin to spare (less the
    # ageing over its 1.9 ms lead, under a microsecond).
    assert received - MARGIN_NS - 1000 <= mapped[-1] <= received - MARGIN_NS
    assert [ns - mapped[0] for ns in mapped] == [0, 300_000, 1_900_000]


def test_the_smallest_latency_wins():
    clock = BoardClock()
    offset = 3_000 * MS  # the daemon's clock minus the board's, unknown to the mapping
    for t_us, latency in [(1_000_000, 4 * MS), (3_000_000, 1 * MS), (5_000_000, 6 * MS)]:
        (mapped,) = seen_and_mapped(clock, [t_us], offset + 1000 * t_us + latency)
    # Two seconds of ageing at 500 ppm (1 ms) on top of the best sample's 1 ms latency.
    assert mapped == offset + 1000 * 5_000_000 + 1 * MS + 1 * MS - MARGIN_NS


def test_reset_forgets_the_old_board():
    clock = BoardClock()
    seen_and_mapped(clock, [50_000_000], 9_000 * MS)
    clock.reset()
    assert seen_and_mapped(clock, [20], 9_100 * MS) == [9_100 * MS - MARGIN_NS]


def test_nothing_to_map():
    assert seen_and_mapped(BoardClock(), [], 5) == []


def simulate(seed: int, drift_ppm: int, latency_ms: tuple[float, float]) -> list[tuple]:
    """Two hours of play on a board whose crystal runs drift_ppm off the daemon's clock:
    (true time, mapped time, receive time) of every edge."""
    rng = random.Random(seed)
    clock = BoardClock()
    true_ns = 10**12  # when an edge happened, on the daemon's clock
    out = []
    while true_ns < 10**12 + 2 * 3600 * 10**9:
        # Quiet spells of up to two minutes, bursts of presses a few ms apart.
        true_ns += int(rng.choice([rng.uniform(0.05, 120), rng.uniform(0.0001, 0.02)]) * 1e9)
        board_us = (true_ns - 10**12) * (10**6 + drift_ppm) // 10**9
        received = true_ns + int(rng.uniform(*latency_ms) * MS)
        (mapped,) = seen_and_mapped(clock, [board_us], received)
        out.append((true_ns, mapped, received))
    return out


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32), drift_ppm=st.integers(-300, 300))
def test_it_follows_the_drift_between_the_clocks(seed, drift_ppm):
    """Without following the drift, 300 ppm would be two seconds off after two hours."""
    for true_ns, mapped, received in simulate(seed, drift_ppm, latency_ms=(0.3, 10)):
        assert abs(mapped - true_ns) <= 10 * MS
        assert received - mapped <= 10 * MS + MARGIN_NS  # the source's latency_ns


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32), drift_ppm=st.integers(-50, 50))
def test_latency_jitter_within_the_margin_never_maps_an_edge_after_its_arrival(seed, drift_ppm):
    for _true_ns, mapped, received in simulate(seed, drift_ppm, latency_ms=(0.3, 5)):
        assert mapped <= received


def test_a_stamp_before_the_last_one_maps_with_its_bursts_offset_and_moves_nothing():
    clock = BoardClock()
    first, last = seen_and_mapped(clock, [1_000, 2_000], 7_000 * MS)
    (back,) = seen_and_mapped(clock, [1_500], 7_100 * MS)
    assert back - first == 500_000
    (after,) = seen_and_mapped(clock, [2_500], 7_100 * MS)
    assert after - last == 500_000


@given(reads, st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=5))
def test_a_stamp_before_the_last_one_lands_among_the_edges_stamped_around_it(reads_, shares):
    """A line that broke the board's promise of order (a D kept in doubt while the clock
    was learned again, then passed on late) lands between the edges stamped before and
    after it, however the bursts were re-anchored meanwhile: at most tied with one before
    it, never after one stamped later (board_stream.py's seed 2861772104, the late D
    mapped by the offset of its moment)."""
    clock = BoardClock()
    mapped = play(reads_, clock)
    t_us = mapped[-1][0]
    first = max(mapped[0][0], t_us - PLAUSIBLE_NS // 1000)  # older is refused as impossible
    for share in shares:
        late = first + share * (t_us - first) // (2**32 - 1)
        (t_ns,) = clock.map([late])
        before = [ns for us, ns in mapped if us <= late]
        after = [ns for us, ns in mapped if us > late]
        assert not before or t_ns >= max(before)
        assert not after or t_ns < min(after)
    (next_ns,) = seen_and_mapped(clock, [t_us + 1], 10**12 + sum(d for _, d in reads_))
    assert next_ns > mapped[-1][1]  # and the mapping goes on as if it had not come


def test_how_far_ahead_of_the_boards_clock_a_stamp_lies():
    clock = BoardClock()
    assert clock.ahead_ns(10**20, 5_000 * MS) == 0  # nothing known yet
    clock.observe(1_000_000, 5_000 * MS + MS)  # 1 ms on its way
    assert clock.ahead_ns(1_000_000, 5_000 * MS + MS) == 0
    # Half a second later on both clocks: a stamp 2 s ahead is about 2 s ahead (within the
    # latency and the drift the clocks may have had since); one on time is not.
    later = 5_500 * MS + MS
    assert abs(clock.ahead_ns(1_500_000 + 2_000_000, later) - 2 * S) < 5 * MS
    assert clock.ahead_ns(1_500_000, later) == 0


def test_a_floor_the_last_reads_no_longer_bear_out_is_forgotten():
    """A clock the board claimed for a moment (a line 50 ms faster than its lines can be)
    maps the lines after it early; once the last reads no longer bear it out, the mapping
    follows them again, at the next gap no photo finish spans."""
    clock = BoardClock()
    offset = 10**12
    seen_and_mapped(clock, [1_000_000], offset + 1000 * 1_000_000 - 50 * MS)
    mapped = []
    for k in range(1, WINDOW_READS + 2):
        t_us = 1_000_000 + k * 100_000
        mapped += seen_and_mapped(clock, [t_us], offset + 1000 * t_us + MS)
        expected = offset + 1000 * t_us + MS - MARGIN_NS
    assert mapped[0] < expected - 50 * MS
    assert mapped[-1] == expected


def test_once_learned_the_floor_falls_by_the_margin_in_all_beyond_the_drift():
    clock = BoardClock()
    clock.learn(0)
    for k in range(LEARN_READS):
        clock.observe(k * 100_000, 1000 * k * 100_000 + 5 * MS)
    now = S + 100 * MS
    assert not clock.learning(now)
    assert clock.leeway_ns(now) == CLOCK_MARGIN_NS
    t_us = now // 1000
    ahead = clock.ahead_ns(t_us, now)  # 5 ms of latency less what the drift allows
    assert 4 * MS < ahead < 5 * MS
    clock.observe(t_us, now)  # a line faster than any before: believed, its lead spent
    assert clock.leeway_ns(now) == CLOCK_MARGIN_NS - ahead
    assert clock.ahead_ns(t_us + 100_000, now + 100 * MS) == 0


def test_a_line_judged_again_after_a_later_one_set_the_floor_is_not_ahead():
    clock = BoardClock()
    clock.observe(2_000_000, 2 * S + MS)
    # Received a second before the floor's line, on time: nothing says it was ahead.
    assert clock.ahead_ns(1_000_000, S + MS) == 0
