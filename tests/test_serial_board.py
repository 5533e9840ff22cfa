"""The serial button board as the main loop reads it: a pty for the board, a fake clock.

The fake board is synchronous (its writes are readable when they return) and the test
calls `read()` itself, as the main loop does when the board's descriptor wakes it: no
thread, no sleep.
"""

import logging
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.buttons import BUTTONS, PIN_BUTTONS, REPLAY, UNDO
from referee.daemon.arbiter import Arbiter
from referee.inbox import SourceStatus
from referee.inputs import SourceItem
from referee.inputs.board_clock import MARGIN_NS
from referee.inputs.board_stream import JUMPED
from referee.inputs.burst_log import QUIET_NS
from referee.inputs.edges import Edge, LostTrack
from referee.inputs.serial_board import (
    CONNECTED,
    HEARD_AGAIN,
    RETRY_NS,
    STALE_WAIT_NS,
    STALL_NS,
    STALLED,
    SerialBoard,
)
from tests.fake_board import FakeBoard

MS = 1_000_000  # ns
S = 1000 * MS
SETTLE = 5 * MS
LAG = SETTLE + MARGIN_NS  # the fallback watermark's lag behind the last empty read
START = 1_000 * S


class FakeClock:
    """The daemon's monotonic clock, set by the test."""

    def __init__(self, now: int = START) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def board(tmp_path: Path) -> Iterator[FakeBoard]:
    with FakeBoard(tmp_path, synchronous=True) as board:
        yield board


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def open_board(board: FakeBoard, clock: FakeClock) -> SerialBoard:
    reader = SerialBoard(str(board.path), settle_ns=SETTLE, clock=clock)
    assert reader.read() == []  # what comes now is what the board kept: not yet listened to
    clock.now += STALE_WAIT_NS
    assert reader.read() == [SourceStatus(reader.name, CONNECTED, ok=True)]
    assert board.wait_connected() == dict.fromkeys(BUTTONS, "off")
    return reader


@pytest.fixture
def reader(board: FakeBoard, clock: FakeClock) -> Iterator[SerialBoard]:
    """A source connected to the board, its "connected" status taken."""
    reader = open_board(board, clock)
    try:
        yield reader
    finally:
        reader.close()


def edges(items: list[SourceItem]) -> list[Edge]:
    assert all(isinstance(item, Edge) for item in items), items
    return [item for item in items if isinstance(item, Edge)]


def status(items: list[SourceItem]) -> SourceStatus:
    (item,) = items
    assert isinstance(item, SourceStatus), items
    return item


def t_now(clock: FakeClock) -> str:
    """A T line of a board whose clock reads 0 when the daemon's reads START, sent the
    moment it is stamped."""
    return f"T {(clock.now - START) // 1000}"


def learned(board: FakeBoard, clock: FakeClock, reader: SerialBoard) -> None:
    """The board's T lines every 100 ms, until its clock is learned."""
    for _ in range(12):
        board.send(t_now(clock))
        assert reader.read() == []
        clock.now += 100 * MS
    assert not reader.impossible_times


@dataclass(frozen=True)
class Timing:
    debounce_ns: int = 30 * MS
    settle_ns: int = SETTLE
    stuck_ns: int = 10 * S
    end_hold_ns: int = 3 * S


def test_is_an_input_source_with_the_boards_numbers(board, reader):
    assert str(board.path) in reader.name
    # The board's clock ticks in 1 us, but its interrupts are served one at a time.
    assert reader.resolution_ns == 100_000
    assert reader.buttons == PIN_BUTTONS
    assert isinstance(reader.fileno(), int)
    assert reader.held_at_start() == ()


# --- a board without T lines (older firmware): the keyboard's rules ------------------------


def test_a_press_is_an_edge_on_the_daemons_clock(board, clock, reader):
    board.hello()
    clock.now = 5_000 * MS
    board.down("P1", 1_000_000)
    # The first line is the only one seen: its arrival is the best estimate of when it
    # happened, less the margin that keeps later lines of the burst from the future.
    assert reader.read() == [Edge("P1", 5_000 * MS - MARGIN_NS, down=True)]
    clock.now = 5_150 * MS
    board.up("P1", 1_150_000)
    assert reader.read() == [Edge("P1", 5_150 * MS - MARGIN_NS, down=False)]
    assert reader.bad_lines == reader.impossible_times == 0


def test_without_t_lines_the_watermark_is_the_last_empty_read_less_the_settle_window(
    board, clock, reader
):
    clock.now = START + 7 * S
    board.down("P2", 10_000)
    reader.read()
    # Less the mapping's margin too: lines are mapped that far before their arrival.
    assert reader.watermark_ns == START + 7 * S - LAG
    # To pass a time, the loop reads again that much later; its descriptor wakes it
    # for lines.
    assert reader.wake_ns(START + 8 * S) == START + 8 * S + LAG
    assert reader.wake_ns(None) is None


def test_without_t_lines_a_line_up_to_the_settle_window_slower_is_not_late(board, clock, reader):
    """A line that travelled the settle window longer than the fastest of its read, read
    right after an empty read, maps after the watermark that read gave."""
    board.hello()
    clock.now = START + 7 * S
    assert reader.read() == []
    watermark = reader.watermark_ns
    # P1's edge is older than P2's, but both lines came now: P1's trip was longer, by
    # the settle window less the mapping's allowance for the clocks' drift over the gap.
    slower_us = SETTLE // 1000 - 10
    board.send(f"D P1 {1_000_000}", f"D P2 {1_000_000 + slower_us}")
    p1, p2 = edges(reader.read())
    assert p2.t_ns - p1.t_ns == slower_us * 1000
    assert p1.t_ns >= watermark


def test_without_t_lines_a_read_goes_on_sorted_and_a_line_out_of_order_is_not_dropped(
    board, clock, reader
):
    board.send("D P3 1300", "D P1 1000", "D P2 1300")
    p1, p3, p2 = edges(reader.read())
    assert [(e.button, e.t_ns - p1.t_ns) for e in (p1, p3, p2)] == [
        ("P1", 0),
        ("P3", 300_000),
        ("P2", 300_000),
    ]
    board.send("D P4 1200")  # before the last line passed on: late, but it happened
    (p4,) = edges(reader.read())
    assert (p4.button, p4.t_ns - p1.t_ns) == ("P4", 200_000)
    assert reader.impossible_times == 0


def test_a_burst_keeps_the_boards_order_and_exact_gaps(board, clock, reader):
    board.hello()
    board.send("D P3 1000", "D P1 1300", "D P2 1300", "D INVALID 1301", "U P3 1900")
    burst = edges(reader.read())
    assert [(e.button, e.down) for e in burst] == [
        ("P3", True),
        ("P1", True),
        ("P2", True),
        ("INVALID", True),
        ("P3", False),
    ]
    t0 = burst[0].t_ns
    assert [e.t_ns - t0 for e in burst] == [0, 300_000, 300_000, 301_000, 900_000]
    assert all(e.t_ns <= clock.now for e in burst), "no edge maps after its arrival"


# --- watermark mode: T lines -------------------------------------------------------------


def test_lines_up_to_a_t_go_on_sorted_so_the_earlier_press_wins(board, clock, reader):
    board.send("HELLO referee-board 1", "T 500")
    assert reader.read() == []
    # P2's line comes first, in a read of its own; P1's, stamped 0.3 ms earlier, later.
    board.down("P2", 1_300)
    assert reader.read() == []
    clock.now += 2 * MS
    board.down("P1", 1_000)
    assert reader.read() == []
    board.t_line(1_400)
    p1, p2 = edges(reader.read())
    assert (p1.button, p2.button, p2.t_ns - p1.t_ns) == ("P1", "P2", 300_000)
    # The watermark is the T, mapped with the edges it covers.
    assert reader.watermark_ns == p1.t_ns + 400_000


def test_a_line_stamped_at_or_after_a_t_waits_for_the_next(board, clock, reader):
    board.send("T 1000", "D P5 2000", "U P5 2100", "T 2000")
    assert reader.read() == []
    first = reader.watermark_ns
    board.t_line(2_101)
    down, up = edges(reader.read())
    assert (down.down, up.down, up.t_ns - down.t_ns) == (True, False, 100_000)
    assert down.t_ns == first  # stamped at the T that did not cover it
    assert reader.watermark_ns == down.t_ns + 101_000


def test_in_watermark_mode_the_watermark_is_the_last_t_not_the_clock(board, clock, reader):
    clock.now = START + 3 * S
    board.t_line(2_000_000)
    assert reader.read() == []
    wm = reader.watermark_ns
    assert START + 3 * S - 10 * MS <= wm <= START + 3 * S
    clock.now += 80 * MS
    assert reader.read() == []  # no T since: the watermark waits, whatever the time
    assert reader.watermark_ns == wm
    # T lines wake the loop; it wakes by itself only to judge a silence.
    assert reader.wake_ns(wm + 1) == START + 3 * S + STALL_NS
    board.t_line(2_080_000)
    reader.read()
    assert reader.watermark_ns == wm + 80 * MS


def test_a_line_stamped_before_the_last_t_is_passed_on_late_not_dropped(
    board, clock, reader, caplog
):
    board.down_then_t("P1", 5_000_000)
    (p1,) = edges(reader.read())
    with caplog.at_level(logging.WARNING):
        board.down("P4", 4_900_000)  # the board promised it had sent all before 5_000_001
        (p4,) = edges(reader.read())
    # Mapped with the current offset: the board's spacing is kept.
    assert (p4.button, p1.t_ns - p4.t_ns) == ("P4", 100 * MS)
    assert "passed on late" in caplog.text and repr(b"D P4 4900000") in caplog.text
    assert reader.impossible_times == 0


def test_a_press_and_its_t_through_the_fake_boards_helper(board, clock, reader):
    board.down_then_t("VALID", 40_000)
    (valid,) = edges(reader.read())
    assert reader.watermark_ns == valid.t_ns + 1_000
    clock.now += 60 * MS
    board.up_then_t("VALID", 90_000, t_after=100_000)
    (up,) = edges(reader.read())
    assert (up.down, up.t_ns - valid.t_ns, reader.watermark_ns) == (
        False,
        50 * MS,
        valid.t_ns + 60 * MS,
    )


def test_the_boards_replay_button_is_a_replay_and_no_input_of_the_rules(board, clock, reader):
    """The Pico's optional REPLAY button (GP26), as the Pi's on GPIO0: a press is REPLAY."""
    arbiter = Arbiter(Timing())
    board.down_then_t(REPLAY, 40_000)
    clock.now += 60 * MS
    board.up_then_t(REPLAY, 100_000, t_after=110_000)
    for edge in edges(reader.read()):
        arbiter.take(edge)
    decisions = arbiter.advance(reader.watermark_ns, 0)
    assert [d.button for d in decisions] == [REPLAY]
    assert reader.bad_lines == reader.impossible_times == 0


# --- impossible stamps -------------------------------------------------------------------


def test_a_line_stamped_far_in_the_future_is_counted_shown_and_never_deafens(
    board, clock, reader, caplog
):
    board.down_then_t("P7", 1_000_000)
    (down,) = edges(reader.read())
    line = b"U P7 100000000000000000000"
    with caplog.at_level(logging.WARNING):
        board.garbage(line)
        assert status(reader.read()) == SourceStatus(
            reader.name, "button board: 1 line with impossible times", ok=False, condition="times"
        )
    assert repr(line) in caplog.text
    # The board goes on as before, its times mapped as before.
    clock.now += 100 * MS
    board.up_then_t("P7", 1_100_000)
    (up,) = edges(reader.read())
    assert (up.down, up.t_ns - down.t_ns) == (False, 100 * MS)
    assert reader.impossible_times == 1


def test_more_than_a_second_ahead_of_the_boards_clock_is_impossible(board, clock, reader):
    board.t_line(1_000_000)
    reader.read()
    clock.now += 10 * MS
    board.down("P1", 1_010_000 + 1_500_000)  # 1.5 s ahead of 10 ms later
    assert not status(reader.read()).ok
    board.down("P2", 1_010_000 + 500_000)  # half a second: while its clock is learned, maybe
    assert reader.read() == []
    assert reader.impossible_times == 1


def test_once_its_clock_is_learned_a_line_ahead_by_more_than_the_margin_is_impossible(
    board, clock, reader
):
    learned(board, clock, reader)
    now_us = (clock.now - START) // 1000
    board.down("P2", now_us + 30_000)
    assert not status(reader.read()).ok
    board.down_then_t("P1", now_us + 10_000)  # a line faster than any before: believed
    (p1,) = edges(reader.read())
    assert p1.t_ns == clock.now - MARGIN_NS - 1000  # by the faster line: just before its T
    assert reader.impossible_times == 1


# The three: while T lines flow, lines that disagree with them must neither
# become inputs nor move the board's clock.


def test_three_lines_far_ahead_in_one_write_poison_nothing(board, clock, reader):
    learned(board, clock, reader)
    board.send(*(f"D P1 {10**12 + k}" for k in range(3)), t_now(clock))
    assert status(reader.read()).text == "button board: 3 lines with impossible times"
    # A race right after: P4 first by 0.3 ms, its line second; on time, not late.
    clock.now += 100 * MS
    now_us = (clock.now - START) // 1000
    board.send(f"D P2 {now_us - 700}", f"D P4 {now_us - 1000}", f"T {now_us}")
    p4, p2 = edges(reader.read())
    assert (p4.button, p2.button, p2.t_ns - p4.t_ns) == ("P4", "P2", 300_000)
    assert p4.t_ns == clock.now - MS - MARGIN_NS
    assert reader.watermark_ns == clock.now - MARGIN_NS
    assert reader.impossible_times == 3


def test_lines_far_behind_are_never_a_press(board, clock, reader):
    learned(board, clock, reader)
    board.send("D P1 5", "D P1 6", "D P1 7", t_now(clock))
    assert status(reader.read()).text == "button board: 3 lines with impossible times"
    clock.now += 300 * MS
    board.send(t_now(clock))
    assert reader.read() == []
    assert reader.watermark_ns == clock.now - MARGIN_NS


def test_a_ratchet_of_believable_stamps_holds_nothing_back(board, clock, reader):
    """Ten lines, each under a second ahead and each further than the last, between the
    firmware's idle T lines: the watermark keeps pace with the T lines, and two presses
    300 ms apart stay 300 ms apart."""
    learned(board, clock, reader)
    for k in range(1, 11):
        now_us = (clock.now - START) // 1000
        board.send(f"U P7 {now_us + k * 900_000}")
        assert not status(reader.read()).ok
        clock.now += 100 * MS
        board.send(t_now(clock))
        assert reader.read() == []
        assert reader.watermark_ns == clock.now - MARGIN_NS
    assert reader.impossible_times == 10
    board.down_then_t("P1", (clock.now - START) // 1000)
    (p1,) = edges(reader.read())
    clock.now += 300 * MS
    board.down_then_t("P2", (clock.now - START) // 1000)
    (p2,) = edges(reader.read())
    assert p2.t_ns - p1.t_ns == 300 * MS


def test_a_line_more_than_a_second_before_the_watermark_is_impossible(board, clock, reader):
    board.t_line(5_000_000)
    reader.read()
    board.down("P3", 3_900_000)
    assert not status(reader.read()).ok
    board.down("P3", 4_100_000)  # 0.9 s before: late, passed on
    assert len(edges(reader.read())) == 1
    assert reader.impossible_times == 1


def test_a_t_that_goes_back_is_impossible_and_moves_nothing(board, clock, reader):
    board.t_line(5_000_000)
    reader.read()
    wm = reader.watermark_ns
    clock.now += 100 * MS
    board.send("D P6 5100000", "T 4000000")
    assert not status(reader.read()).ok
    assert reader.watermark_ns == wm
    clock.now += 100 * MS
    board.t_line(5_200_000)
    (p6,) = edges(reader.read())
    assert p6.t_ns == wm + 100 * MS


def test_a_clock_that_really_jumped_is_mapped_afresh_and_said(board, clock, reader):
    board.down_then_t("UNDO", 50_000_000)
    reader.read()
    # A board on a UART restarts unheard: its clock starts again from small numbers, its
    # T lines every 100 ms, and P1 is pressed in between.
    clock.now += 200 * MS
    board.send("T 1000", "D P1 1500")
    assert not status(reader.read()).ok
    clock.now += 100 * MS
    board.t_line(101_000)
    assert not status(reader.read()).ok
    clock.now += 100 * MS
    board.t_line(201_000)
    items = reader.read()
    assert items == [
        LostTrack(UNDO, clock.now - MARGIN_NS),
        Edge("P1", items[1].t_ns, down=True),
        SourceStatus(reader.name, "button board: 4 lines with impossible times", False, "times"),
        SourceStatus(reader.name, JUMPED, ok=True, condition="clock"),
    ]
    # Mapped afresh from the new clock: P1 half a millisecond after its T, which came
    # 200 ms ago; the watermark the last T.
    assert items[1].t_ns == clock.now - 200 * MS + 500_000 - MARGIN_NS
    assert reader.watermark_ns == items[1].t_ns + 199_500_000
    assert reader.impossible_times == 4


def test_t_lines_in_one_write_are_no_restart_however_many_agree(board, clock, reader):
    board.t_line(50_000_000)
    reader.read()
    clock.now += 100 * MS
    board.send(*(f"T {1000 + k}" for k in range(10)))
    assert not status(reader.read()).ok
    assert reader.impossible_times == 10
    clock.now += 100 * MS
    board.down_then_t("P1", 50_200_000)
    (p1,) = edges(reader.read())
    assert p1.t_ns == clock.now - MARGIN_NS  # on the clock the board kept all along


def test_a_first_line_far_off_does_not_deafen_the_board(board, clock, reader):
    board.send("HELLO referee-board 1", "U P7 100000000000000000000")
    assert edges(reader.read())  # nothing to judge it by yet: it anchors the clock
    for t_us in (1_000, 101_000, 201_000):
        clock.now += 100 * MS
        board.t_line(t_us)
        reader.read()
    clock.now += 100 * MS
    board.down_then_t("P2", 301_000)
    (p2,) = [item for item in reader.read() if isinstance(item, Edge)]
    assert p2.button == "P2"
    assert abs(p2.t_ns - clock.now) < 20 * MS


# --- a stalled board ---------------------------------------------------------------------


def test_a_board_silent_for_a_second_is_stalled_and_its_watermark_falls_back(board, clock, reader):
    board.t_line(1_000_000)
    reader.read()
    wm = reader.watermark_ns
    clock.now += STALL_NS - 1
    assert reader.read() == []
    clock.now += 1
    assert status(reader.read()) == SourceStatus(reader.name, STALLED, ok=False, condition="stall")
    # The game's timers go on, by the keyboard's rule.
    assert reader.watermark_ns == clock.now - LAG > wm
    assert reader.wake_ns(clock.now + 1) == clock.now + 1 + LAG
    clock.now += 10 * MS
    board.down_then_t("P1", 2_010_000)
    *pressed, heard = reader.read()
    assert heard == SourceStatus(reader.name, HEARD_AGAIN, ok=True, condition="stall")
    assert [e.button for e in edges(pressed)] == ["P1"]
    assert reader.watermark_ns >= clock.now - 10 * MS - LAG  # never back


def test_a_stall_of_the_daemon_is_not_the_boards(board, clock, reader):
    board.t_line(1_000_000)
    reader.read()
    # The daemon stops for 3 s; the board's T lines wait in the port meanwhile.
    for t_us in range(1_100_000, 4_000_000, 100_000):
        board.t_line(t_us)
    clock.now += 3 * S
    assert reader.read() == []


def test_a_stalled_board_sending_lines_without_t_is_heard_as_an_old_one(board, clock, reader):
    board.t_line(1_000_000)
    reader.read()
    clock.now += 2 * S
    board.down("P8", 3_000_000)  # no T comes with it
    items = reader.read()
    assert items[0] == SourceStatus(reader.name, STALLED, ok=False, condition="stall")
    assert [e.button for e in edges(items[1:])] == ["P8"]


# --- made-up releases --------------------------------------------------------------------


def test_a_board_that_restarts_with_undo_held_does_no_undo(board, clock, reader):
    arbiter = Arbiter(Timing())
    board.down_then_t("UNDO", 1_000)
    clock.now += 500 * MS
    board.send("HELLO referee-board 1")
    items = reader.read()
    assert items[0].button == UNDO and items[0].down
    assert items[1:] == [LostTrack(UNDO, clock.now - MARGIN_NS)]
    for item in items:
        if isinstance(item, Edge):
            arbiter.take(item)
        else:
            arbiter.lose_track(item.button, item.t_ns)
    assert arbiter.advance(clock.now + 10 * S, 0) == []
    assert arbiter.level(UNDO)[0] is False


def test_a_device_missing_from_the_start_is_said_not_to_exist_and_waited_for(tmp_path, clock):
    """A typo in `--input serial:...` must not look like a board merely unplugged."""
    typo = tmp_path / "ttyACMO"
    reader = SerialBoard(str(typo), settle_ns=SETTLE, clock=clock)
    try:
        [status] = reader.read()
        assert not status.ok
        assert status.text.startswith(f"button board {typo} does not exist (serial ports here: ")
        assert status.text.endswith("): waiting for it")
        with FakeBoard(tmp_path, "ttyACMO", synchronous=True) as board:  # plugged in at last
            clock.now += RETRY_NS
            assert reader.read() == []
            clock.now += STALE_WAIT_NS
            assert reader.read() == [SourceStatus(reader.name, CONNECTED, ok=True)]
            board.unplug()  # now it is known to have been there
            statuses = [item for item in reader.read() if isinstance(item, SourceStatus)]
            assert statuses == [
                SourceStatus(reader.name, f"button board unplugged: waiting for {typo}", ok=False)
            ]
    finally:
        reader.close()


def test_an_unplugged_board_is_reported_once_waited_for_and_reopened(board, clock, reader):
    board.hello()
    board.down_then_t("UNDO", 1_000)
    edges(reader.read())
    board.unplug()
    unplugged, released = reader.read()
    assert unplugged == SourceStatus(
        reader.name, f"button board unplugged: waiting for {board.path}", ok=False
    )
    # UNDO was down: its up will never come, and its made-up release is no UNDO.
    assert released == LostTrack(UNDO, clock.now - MARGIN_NS)
    assert reader.fileno() is None
    assert reader.wake_ns(None) == clock.now + RETRY_NS
    reader.set_led("P1", "on")
    reader.beep(440, 100)
    for _ in range(3):  # retried every half second, reported once
        clock.now += RETRY_NS
        assert reader.read() == []
        assert reader.watermark_ns == clock.now - LAG  # the game's timers go on

    board.plug()
    clock.now += RETRY_NS
    assert reader.read() == []
    assert reader.wake_ns(None) == clock.now + STALE_WAIT_NS
    clock.now += STALE_WAIT_NS
    assert reader.read() == [SourceStatus(reader.name, CONNECTED, ok=True)]
    # The new board is shown the LEDs as the referee last wanted them; the beep is gone.
    assert board.wait_connected() == {**dict.fromkeys(BUTTONS, "off"), "P1": "on"}
    # The new board starts its clock afresh; so does the mapping.
    clock.now = 9_000 * S
    board.send("HELLO referee-board 1", "D P2 50")
    assert reader.read() == [Edge("P2", 9_000 * S - MARGIN_NS, down=True)]
    reader.set_led("P2", "blink")
    assert board.read_line() == "L P2 blink"


def test_a_board_missing_at_start_is_waited_for(board, clock):
    board.unplug()
    reader = SerialBoard(str(board.path), settle_ns=SETTLE, clock=clock)
    try:
        assert not status(reader.read()).ok
        board.plug()
        clock.now += RETRY_NS
        reader.read()
        clock.now += STALE_WAIT_NS
        assert status(reader.read()).ok
        board.wait_connected()
        board.down("SUPER", 1)
        assert edges(reader.read())[0].button == "SUPER"
    finally:
        reader.close()


def test_what_the_board_kept_while_unheard_is_dropped(board, clock):
    """MicroPython sends what it kept for a host as the port opens: old presses."""
    reader = SerialBoard(str(board.path), settle_ns=SETTLE, clock=clock)
    try:
        board.write(b"D P1 1000\nU P1 1100\nD P2 12")  # cut in the middle of a line
        clock.now += STALE_WAIT_NS
        assert status(reader.read()).text == CONNECTED
        board.write(b"00\nD P3 1300\n")
        assert [e.button for e in edges(reader.read())] == ["P3"]
        assert reader.bad_lines == 0
    finally:
        reader.close()


def test_a_board_another_program_holds_is_reported(board, clock, reader):
    other = SerialBoard(str(board.path), settle_ns=SETTLE, clock=clock)
    assert other.read() == [
        SourceStatus(other.name, f"button board {board.path} is in use by another program", False)
    ]
    other.close()


def test_beeps_from_another_thread_while_the_board_comes_and_goes(board, clock, reader):
    stop = threading.Event()
    failures: list[BaseException] = []

    def beeper() -> None:
        while not stop.is_set():
            try:
                reader.beep(440, 5)
            except BaseException as exc:
                failures.append(exc)
                return

    thread = threading.Thread(target=beeper)
    thread.start()
    try:
        for _ in range(3):
            board.unplug()
            reader.read()
            board.plug()
            clock.now += RETRY_NS
            reader.read()
            clock.now += STALE_WAIT_NS
            assert status(reader.read()).text == CONNECTED
    finally:
        stop.set()
        thread.join(timeout=5)
    assert failures == []


# --- lines and commands ------------------------------------------------------------------


def test_lines_that_do_not_parse_are_counted_logged_and_skipped(board, clock, reader, caplog):
    garbage = [
        b"hello",
        b"D P9 5",
        b"D P1",
        b"D P1 5 6",
        b"T 5 6",
        b"D  P1 5",
        b"X P1 5",
        b"D P1 -5",
        b"D P1 5us",
        b"D p1 5",
        b"HELLO referee-board 2",
        b"D P1 \xff\xfe",
        b"",
    ]
    with caplog.at_level(logging.WARNING, logger="referee.inputs.serial_board"):
        for line in garbage:  # a second apart: each is a burst of its own, logged
            clock.now += QUIET_NS
            board.garbage(line + b"\n")
            assert reader.read() == []
        board.down("P1", 100)
        assert edges(reader.read())[0].button == "P1"
    assert reader.bad_lines == len(garbage)
    assert repr(b"D P9 5") in caplog.text
    assert "unknown button 'P9'" in caplog.text
    assert repr(b"D P1 \xff\xfe") in caplog.text


def test_a_flood_of_bad_lines_is_logged_once_a_burst_and_counted_whole(
    board, clock, reader, caplog
):
    learned(board, clock, reader)
    with caplog.at_level(logging.WARNING):
        for n in range(50):
            clock.now += 20 * MS
            board.send(*(f"NOISE {n} {k}" for k in range(40)), f"D P1 {10**12 + n}", t_now(clock))
            times = status(reader.read())
            lines = "line" if n == 0 else "lines"
            assert times.text == f"button board: {n + 1} {lines} with impossible times"
        # The board keeps time, and the flood is over: one line sums each burst up.
        for _ in range(11):
            clock.now += 100 * MS
            board.send(t_now(clock))
            assert reader.read() == []
    assert (reader.bad_lines, reader.impossible_times) == (2000, 50)
    said = [r.getMessage().removeprefix(f"{reader.name}: ") for r in caplog.records]
    assert said[:2] == [
        "ignored line b'NOISE 0 0': expected D, U, T or HELLO first",
        "ignored line b'D P1 1000000000000': impossible time: 1e+06 s ahead of the board's clock",
    ]
    assert sorted(said[2:]) == [
        "1999 more lines that do not parse in 0.98 s;"
        " the last: ignored line b'NOISE 49 39': expected D, U, T or HELLO first",
        "49 more lines with impossible times in 0.98 s;"
        " the last: ignored line b'D P1 1000000000049': impossible time:"
        " 1e+06 s ahead of the board's clock",
    ]


def test_half_a_line_waits_for_the_rest(board, clock, reader):
    board.write(b"D P1 10")
    assert reader.read() == []
    board.write(b"00\nU P1 15")
    (down,) = edges(reader.read())
    board.write(b"00\n")
    (up,) = edges(reader.read())
    assert (down.button, down.down, up.button, up.down) == ("P1", True, "P1", False)
    assert up.t_ns - down.t_ns == 500_000  # t_us 1000 and 1500, not 10 and 15
    assert reader.bad_lines == 0


def test_lines_cut_anywhere_are_framed_right(board, clock, reader):
    rng = random.Random(7)
    buttons = [rng.choice(BUTTONS) for _ in range(300)]
    lines = (f"D {button} {1000 * i}\nT {1000 * i + 1}\n" for i, button in enumerate(buttons))
    stream = "".join(lines).encode()
    got: list[Edge] = []
    while stream:
        cut = rng.randint(1, 40)
        board.write(stream[:cut])
        stream = stream[cut:]
        got += edges(reader.read())
    assert [e.button for e in got] == buttons
    assert [e.t_ns - got[0].t_ns for e in got] == [1_000_000 * i for i in range(len(buttons))]
    assert reader.bad_lines == 0


def test_a_line_with_no_end_is_dropped_not_hoarded(board, reader):
    board.write(b"x" * 500)
    board.write(b"y" * 500 + b"\nD P5 7\n")
    assert edges(reader.read())[0].button == "P5"
    assert reader.bad_lines == 1


def test_carriage_returns_are_taken(board, reader):
    board.write(b"HELLO referee-board 1\r\nD VALID 3\r\nT 4\r\n")
    assert edges(reader.read())[0].button == "VALID"
    assert reader.bad_lines == 0


def test_commands_reach_the_board(board, reader):
    reader.set_led("P1", "blink")
    reader.set_led("UNDO", "off")
    reader.beep(880, 120)
    assert [board.read_line() for _ in range(3)] == ["L P1 blink", "L UNDO off", "B 880 120"]


@pytest.mark.parametrize(
    ("button", "mode", "message"),
    [("P9", "on", "no button 'P9'"), ("P1", "dim", "LED mode 'dim'")],
)
def test_a_wrong_led_command_says_what_is_wrong(board, reader, button, mode, message):
    with pytest.raises(ValueError, match=message):
        reader.set_led(button, mode)


@pytest.mark.parametrize(("hz", "ms"), [(0, 100), (440, -1), (440.5, 100)])
def test_a_wrong_beep_says_what_is_wrong(board, reader, hz, ms):
    with pytest.raises(ValueError, match=f"not {hz!r} Hz, {ms!r} ms"):
        reader.beep(hz, ms)
