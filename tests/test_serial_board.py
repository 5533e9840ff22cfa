import logging
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from referee.edges import BUTTONS, Edge, Inbox, InboxItem, SourceStatus
from referee.inputs.board_clock import MARGIN_NS
from referee.inputs.serial_board import BadLine, BoardEdge, SerialBoard, parse_line
from tests.fake_board import FakeBoard

MS = 1_000_000  # ns
CONNECTED = "button board connected"


class FakeClock:
    """The daemon's monotonic clock, set by the test before it writes a line."""

    def __init__(self, now: int = 1_000_000 * MS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def take(inbox: Inbox, count: int, timeout_s: float = 2.0) -> list[InboxItem]:
    """The next `count` items, waiting at most timeout_s in all."""
    items: list[InboxItem] = []
    deadline = time.monotonic() + timeout_s
    while len(items) < count:
        left = deadline - time.monotonic()
        got = inbox.get(timeout_s=left) if left > 0 else []
        if not got:
            raise AssertionError(f"waited for {count} inbox items, got {items}")
        items += got
    assert len(items) == count, f"expected {count} items, got {items}"
    return items


def edges(inbox: Inbox, count: int) -> list[Edge]:
    items = take(inbox, count)
    assert all(isinstance(item, Edge) for item in items), items
    return [item for item in items if isinstance(item, Edge)]


def status(inbox: Inbox) -> SourceStatus:
    (item,) = take(inbox, 1)
    assert isinstance(item, SourceStatus), item
    return item


def nothing_more(inbox: Inbox) -> None:
    assert inbox.get(timeout_s=0.1) == []


@pytest.fixture
def board(tmp_path: Path) -> Iterator[FakeBoard]:
    with FakeBoard(tmp_path) as board:
        yield board


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def reader(board: FakeBoard, clock: FakeClock, inbox: Inbox) -> Iterator[SerialBoard]:
    """A started reader, connected to the board (its "connected" status already taken)."""
    reader = SerialBoard(str(board.path), clock=clock, retry_s=0.01)
    reader.start(inbox)
    try:
        assert board.wait_connected() == dict.fromkeys(BUTTONS, "off")
        assert status(inbox) == SourceStatus(reader.name, CONNECTED, ok=True)
        yield reader
    finally:
        reader.close()


def test_is_an_input_source_with_the_boards_numbers(board):
    reader = SerialBoard(str(board.path))
    assert str(board.path) in reader.name
    # The board's clock ticks in 1 us, but its interrupts are served one at a time.
    assert reader.resolution_ns == 100_000
    assert 2 * MS <= reader.latency_ns <= 20 * MS


def test_a_press_is_an_edge_on_the_daemons_clock(board, clock, inbox, reader):
    board.hello()
    clock.now = 5_000 * MS
    board.down("P1", 1_000_000)
    # The first line is the only one seen: its arrival is the best estimate of when it
    # happened, less the margin that keeps later lines of the burst from the future.
    assert edges(inbox, 1) == [Edge("P1", 5_000 * MS - MARGIN_NS, down=True)]
    clock.now = 5_150 * MS
    board.up("P1", 1_150_000)
    assert edges(inbox, 1) == [Edge("P1", 5_150 * MS - MARGIN_NS, down=False)]
    assert reader.bad_lines == 0


def test_a_burst_keeps_the_boards_order_and_exact_gaps(board, clock, inbox, reader):
    board.hello()
    board.send("D P3 1000", "D P1 1300", "D P2 1300", "D INVALID 1301", "U P3 1900")
    burst = edges(inbox, 5)
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


def test_a_burst_spread_over_reads_keeps_exact_gaps(board, clock, inbox, reader):
    board.hello()
    board.down("P4", 10_000)
    (first,) = edges(inbox, 1)
    # The next line of the burst travels slower, then one travels faster than the first:
    # neither changes the board's spacing.
    clock.now += 7 * MS
    board.down("P6", 10_800)
    clock.now -= 5 * MS
    board.down("P2", 12_300)
    later = edges(inbox, 2)
    assert [e.t_ns - first.t_ns for e in later] == [800_000, 2_300_000]
    assert later[1].t_ns <= clock.now


def test_lines_that_do_not_parse_are_counted_logged_and_skipped(board, inbox, reader, caplog):
    board.hello()
    garbage = [
        b"hello",
        b"D P9 5",
        b"D P1",
        b"D P1 5 6",
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
        for line in garbage:
            board.garbage(line + b"\n")
        board.down("P1", 100)
        assert edges(inbox, 1)[0].button == "P1"
    assert reader.bad_lines == len(garbage)
    assert repr(b"D P9 5") in caplog.text
    assert "unknown button 'P9'" in caplog.text
    assert repr(b"D P1 \xff\xfe") in caplog.text


def test_a_t_us_that_goes_back_is_a_bad_line_until_the_board_says_hello(board, inbox, reader):
    board.hello()
    board.down("P1", 5_000_000)
    board.up("P1", 4_000_000)  # went back: skipped
    board.up("P1", 5_100_000)
    assert [e.down for e in edges(inbox, 2)] == [True, False]
    assert reader.bad_lines == 1
    # A HELLO is a restarted board: its clock starts again from small numbers.
    board.send("HELLO referee-board 1", "D P2 20")
    assert edges(inbox, 1)[0].button == "P2"
    assert reader.bad_lines == 1


def test_half_a_line_waits_for_the_rest(board, inbox, reader):
    board.hello()
    board.write(b"D P1 10")
    nothing_more(inbox)
    board.write(b"00\nU P1 15")
    (down,) = edges(inbox, 1)
    board.write(b"00\n")
    (up,) = edges(inbox, 1)
    assert (down.button, down.down, up.button, up.down) == ("P1", True, "P1", False)
    assert up.t_ns - down.t_ns == 500_000  # t_us 1000 and 1500, not 10 and 15
    assert reader.bad_lines == 0


def test_lines_cut_anywhere_are_framed_right(board, inbox, reader):
    rng = random.Random(7)
    buttons = [rng.choice(BUTTONS) for _ in range(300)]
    stream = b"".join(f"D {b} {1000 * i}\n".encode() for i, b in enumerate(buttons))
    while stream:
        cut = rng.randint(1, 40)
        board.write(stream[:cut])
        stream = stream[cut:]
    got = edges(inbox, len(buttons))
    assert [e.button for e in got] == buttons
    assert [e.t_ns - got[0].t_ns for e in got] == [1_000_000 * i for i in range(len(buttons))]
    assert reader.bad_lines == 0


def test_a_line_with_no_end_is_dropped_not_hoarded(board, inbox, reader):
    board.write(b"x" * 500)
    board.write(b"y" * 500 + b"\nD P5 7\n")
    assert edges(inbox, 1)[0].button == "P5"
    assert reader.bad_lines == 1


def test_carriage_returns_are_taken(board, inbox, reader):
    board.write(b"HELLO referee-board 1\r\nD VALID 3\r\n")
    assert edges(inbox, 1)[0].button == "VALID"
    assert reader.bad_lines == 0


def test_unplugged_board_is_reported_once_waited_for_and_reopened(board, clock, inbox, reader):
    board.hello()
    board.down("P1", 1_000)
    edges(inbox, 1)

    board.unplug()
    unplugged, released = take(inbox, 2)
    assert unplugged == SourceStatus(
        reader.name, f"button board unplugged: waiting for {board.path}", ok=False
    )
    # P1 was down: its up will never come, so the reader says it now.
    assert isinstance(released, Edge) and (released.button, released.down) == ("P1", False)
    nothing_more(inbox)  # many retries meanwhile, one report
    reader.set_led("P1", "on")
    reader.beep(440, 100)

    board.plug()
    # The new board is shown the LEDs as the referee last wanted them; the beep is gone.
    assert board.wait_connected() == {**dict.fromkeys(BUTTONS, "off"), "P1": "on"}
    assert status(inbox) == SourceStatus(reader.name, CONNECTED, ok=True)
    # The new board starts its clock afresh; so does the mapping.
    clock.now = 9_000 * MS
    board.send("HELLO referee-board 1", "D P2 50")
    assert edges(inbox, 1) == [Edge("P2", 9_000 * MS - MARGIN_NS, down=True)]
    reader.set_led("P2", "blink")
    assert board.read_line() == "L P2 blink"


def test_a_board_that_restarts_with_a_button_down_releases_it(board, clock, inbox, reader):
    board.hello()
    board.down("P4", 1_000)
    edges(inbox, 1)
    clock.now = 7_000 * MS
    board.send("HELLO referee-board 1")
    assert edges(inbox, 1) == [Edge("P4", 7_000 * MS, down=False)]


def test_what_the_board_kept_while_unheard_is_dropped(board):
    """MicroPython sends what it kept for a host as the port opens: old presses."""
    with serial.Serial(str(board.path), timeout=1) as port:
        board.send("D P1 1000", "U P1 1100")
        reader = SerialBoard(str(board.path))
        assert reader._drop_stale(port) == len(b"D P1 1000\nU P1 1100\n")
        assert port.in_waiting == 0


def test_a_board_missing_at_start_is_waited_for(board, clock, inbox):
    board.unplug()
    reader = SerialBoard(str(board.path), clock=clock, retry_s=0.01)
    reader.start(inbox)
    try:
        assert not status(inbox).ok
        board.plug()
        board.wait_connected()
        assert status(inbox).ok
        board.down("SUPER", 1)
        assert edges(inbox, 1)[0].button == "SUPER"
    finally:
        reader.close()


def test_a_board_another_program_holds_is_reported(board, clock, inbox, reader):
    other_inbox = Inbox()
    other = SerialBoard(str(board.path), clock=clock, retry_s=0.01)
    other.start(other_inbox)
    try:
        assert status(other_inbox) == SourceStatus(
            other.name, f"button board {board.path} is in use by another program", ok=False
        )
    finally:
        other.close()


def test_a_reader_that_fails_says_so(board, inbox, reader, monkeypatch):
    def broken(raw):
        raise RuntimeError("a bug")

    monkeypatch.setattr("referee.inputs.serial_board.parse_line", broken)
    board.down("P1", 1)
    assert status(inbox) == SourceStatus(
        reader.name, "button board reader failed: RuntimeError('a bug')", ok=False
    )


def test_commands_reach_the_board(board, reader):
    reader.set_led("P1", "blink")
    reader.set_led("UNDO", "off")
    reader.beep(880, 120)
    assert [board.read_line() for _ in range(3)] == ["L P1 blink", "L UNDO off", "B 880 120"]


@pytest.mark.parametrize(
    ("button", "mode", "message"),
    [("P9", "on", "no button 'P9'"), ("P1", "dim", "LED mode 'dim'")],
)
def test_a_wrong_led_command_says_what_is_wrong(board, button, mode, message):
    with pytest.raises(ValueError, match=message):
        SerialBoard(str(board.path)).set_led(button, mode)


@pytest.mark.parametrize(("hz", "ms"), [(0, 100), (440, -1), (440.5, 100)])
def test_a_wrong_beep_says_what_is_wrong(board, hz, ms):
    with pytest.raises(ValueError, match=f"not {hz!r} Hz, {ms!r} ms"):
        SerialBoard(str(board.path)).beep(hz, ms)


def test_close_returns_at_once_while_waiting_for_the_board(board, inbox):
    board.unplug()
    reader = SerialBoard(str(board.path), retry_s=60)
    reader.start(inbox)
    assert not status(inbox).ok
    started = time.monotonic()
    reader.close()
    assert time.monotonic() - started < 1


def test_close_returns_at_once_while_reading(reader):
    started = time.monotonic()
    reader.close()
    assert time.monotonic() - started < 1


def test_start_twice_is_an_error(reader, inbox):
    with pytest.raises(RuntimeError, match="already started"):
        reader.start(inbox)


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        (b"HELLO referee-board 1", None),
        (b"D P1 0", BoardEdge("P1", 0, down=True)),
        (b"U UNDO 18446744073709551616", BoardEdge("UNDO", 2**64, down=False)),
    ],
)
def test_parse_line(raw, parsed):
    assert parse_line(raw) == parsed


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"D P1 \xb5s", "not ASCII"),
        (b"HELLO referee-board 2", "expects 'HELLO referee-board 1'"),
        (b"B 440 100", "expected D, U or HELLO"),
        (b"D P1", "expected 3 fields"),
        (b"D VALID 1 2", "expected 3 fields"),
        (b"U P0 1", "unknown button 'P0'"),
        (b"D P1 1.5", "'1.5' is not a non-negative integer"),
        (b"D P1 -1", "'-1' is not a non-negative integer"),
    ],
)
def test_parse_line_says_what_is_wrong(raw, message):
    with pytest.raises(BadLine, match=message):
        parse_line(raw)
