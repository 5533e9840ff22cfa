"""One board's lines in event time, without a port: a simulated honest board, shuffled and
salted with garbage, must come out the same."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.edges import BUTTONS, Edge, LostTrack
from referee.inputs import SourceItem
from referee.inputs.board_lines import parse_line
from referee.inputs.board_stream import JUMP_LINES, BoardStream

MS = 1_000_000
T0 = 10**12  # the daemon's clock when the board's reads 0

Read = tuple[int, list[bytes]]  # received at, the lines


def board_drift(seed: int) -> float:
    return random.Random(seed).uniform(-100e-6, 100e-6)


def board_us(seed: int, received_ns: int) -> int:
    """Where the board's clock stands when the daemon's reads received_ns."""
    return round((received_ns - T0) * (1 + board_drift(seed)) / 1000)


def honest_board(seed: int, shuffle: bool) -> list[Read]:
    """A board that keeps its promise: the edges stamped before each T line come before
    it (in any order, when shuffled), one read a T line; its crystal drifts, its lines
    take 0.3 to 10 ms, and now and then the daemon stalls for up to 3 s."""
    rng, shuffler = random.Random(seed), random.Random(~seed)
    drift = board_drift(seed)
    t_us, received, reads = 0, T0, []
    for _ in range(60):
        # The next T: within 2 ms of an edge, or 100 ms after the last (a 1 ms loop).
        step = rng.choice([rng.randint(2, 2_000), rng.randint(100_000, 101_000)])
        stamps = sorted(rng.sample(range(t_us, t_us + step), k=rng.randint(0, min(step, 4))))
        lines = [f"{rng.choice('DU')} {rng.choice(BUTTONS)} {stamp}".encode() for stamp in stamps]
        if shuffle:
            shuffler.shuffle(lines)
        t_us += step
        true_ns = T0 + round(1000 * t_us / (1 + drift))
        stall = rng.choice([0] * 20 + [rng.randint(0, 3_000) * MS])
        received = max(received, true_ns + rng.randint(300_000, 10 * MS) + stall)
        reads.append((received, [*lines, f"T {t_us}".encode()]))
    return reads


def play(reads: list[Read]) -> tuple[BoardStream, list[SourceItem], list[int]]:
    """What the stream gives, read by read as the source would; and its watermarks."""
    stream = BoardStream("board")
    items: list[SourceItem] = []
    watermarks = []
    for received, lines in reads:
        for raw in lines:
            items += stream.take(raw, parse_line(raw), received)
        if not stream.timed:
            items += stream.release(received)
        assert stream.watermark_ns is not None
        watermarks.append(stream.watermark_ns)
    return stream, items, watermarks


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32))
def test_lines_between_two_t_lines_in_any_order_come_out_the_same(seed):
    stream, items, watermarks = play(honest_board(seed, shuffle=True))
    assert (items, watermarks) == play(honest_board(seed, shuffle=False))[1:]
    assert stream.impossible == 0
    edges = [item for item in items if isinstance(item, Edge)]
    assert len(edges) == len(items)
    assert [e.t_ns for e in edges] == sorted(e.t_ns for e in edges)
    # Each read's edges are all behind the watermark it brings: none comes late.
    sent = 0
    for (_, lines), watermark in zip(honest_board(seed, shuffle=False), watermarks, strict=True):
        count = len(lines) - 1
        assert all(e.t_ns < watermark for e in edges[sent : sent + count])
        sent += count


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.data())
def test_lines_with_impossible_times_change_nothing_of_the_rest(seed, data):
    reads = honest_board(seed, shuffle=True)
    salted, added = [], 0
    for i, (received, lines) in enumerate(reads):
        garbage = data.draw(
            st.sampled_from(
                [
                    None,
                    b"U P7 100000000000000000000",
                    f"D P1 {board_us(seed, received) + 2_000_000}".encode(),
                    b"T 0",
                ]
            )
        )
        if i == 0 or garbage is None:  # the first line anchors the mapping
            salted.append((received, lines))
            continue
        at = data.draw(st.integers(0, len(lines) - 1))  # before the read's own T line
        salted.append((received, [*lines[:at], garbage, *lines[at:]]))
        added += 1
    stream, items, watermarks = play(salted)
    assert (items, watermarks) == play(reads)[1:]
    assert stream.impossible == added
    assert stream.jumps == 0


def test_a_hello_loses_track_of_held_buttons_and_maps_afresh():
    stream = BoardStream("board")
    items = []
    for raw, received in [
        (b"D UNDO 1000", T0),
        (b"D P2 2000", T0),
        (b"T 1500", T0),
        (b"HELLO referee-board 1", T0 + 7 * MS),
        (b"D P3 40", T0 + 8 * MS),
    ]:
        items += stream.take(raw, parse_line(raw), received)
    undo, p2, *lost = items[:4]
    assert (undo.button, p2.button) == ("UNDO", "P2")  # P2, stamped after the T, goes on too
    assert lost == [LostTrack("P2", T0 + 2 * MS), LostTrack("UNDO", T0 + 2 * MS)]
    assert not stream.timed and stream.watermark_ns is None
    assert stream.release(T0 + 8 * MS) == [Edge("P3", T0 + 3 * MS, down=True)]


def test_so_many_lines_agreeing_on_another_clock_are_a_jump():
    stream = BoardStream("board")
    for raw in (b"T 90000000", b"D P1 90000100", b"T 90000200"):
        stream.take(raw, parse_line(raw), T0)
    items = []
    for i in range(JUMP_LINES):
        raw = f"T {1000 * (i + 1)}".encode()
        items += stream.take(raw, parse_line(raw), T0 + i * MS)
    assert items == [LostTrack("P1", T0 + (JUMP_LINES - 1) * MS - 5 * MS)]
    assert (stream.impossible, stream.jumps, stream.timed) == (JUMP_LINES, 1, True)


def test_lines_that_disagree_with_each_other_are_no_jump():
    stream = BoardStream("board")
    stream.take(b"T 90000000", parse_line(b"T 90000000"), T0)
    for raw in (b"T 1000", b"T 5000000", b"T 1000", b"T 5000000"):
        assert stream.take(raw, parse_line(raw), T0) == []
    assert (stream.impossible, stream.jumps) == (4, 0)
