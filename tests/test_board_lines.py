import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.framing import LineFramer
from referee.inputs.board_lines import (
    MAX_LINE,
    BadLine,
    BoardEdge,
    BoardTime,
    Hello,
    parse_line,
)


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        (b"HELLO referee-board 1", Hello()),
        (b"HELLO referee-board 1\r", Hello()),
        (b"D P1 0", BoardEdge("P1", 0, down=True)),
        (b"U UNDO 18446744073709551616", BoardEdge("UNDO", 2**64, down=False)),
        (b"D REPLAY 42", BoardEdge("REPLAY", 42, down=True)),
        (b"T 1500", BoardTime(1500)),
        (b"T 7\r", BoardTime(7)),
    ],
)
def test_parse_line(raw, parsed):
    assert parse_line(raw) == parsed


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"D P1 \xb5s", "not ASCII"),
        (b"HELLO referee-board 2", "expects 'HELLO referee-board 1'"),
        (b"B 440 100", "expected D, U, T or HELLO"),
        (b"", "expected D, U, T or HELLO"),
        (b"D P1", "expected 3 fields"),
        (b"D VALID 1 2", "expected 3 fields"),
        (b"T", "expected 2 fields"),
        (b"T 1 2", "expected 2 fields"),
        (b"U P0 1", "unknown button 'P0'"),
        (b"D P1 1.5", "'1.5' is not a non-negative integer"),
        (b"D P1 -1", "'-1' is not a non-negative integer"),
        (b"T \xd9\xa3", "not ASCII"),  # an Arabic-Indic 3: a digit, but not ours
        (b"T 9" * 40, f"longer than {MAX_LINE} bytes"),
    ],
)
def test_parse_line_says_what_is_wrong(raw, message):
    with pytest.raises(BadLine, match=message):
        parse_line(raw)


def test_the_framer_keeps_half_a_line_for_the_rest():
    framer = LineFramer(MAX_LINE)
    assert framer.feed(b"D P1 10") == []
    assert framer.feed(b"00\nT 12") == [b"D P1 1000"]
    assert framer.feed(b"00\n\n") == [b"T 1200", b""]


def test_the_framer_hands_out_a_line_with_no_end_once_and_skips_the_rest():
    framer = LineFramer(MAX_LINE)
    assert framer.feed(b"x" * 50) == []
    assert framer.feed(b"x" * 50) == [b"x" * (MAX_LINE + 1)]
    assert framer.feed(b"x" * 500) == []
    assert framer.feed(b"x\nT 5\n") == [b"T 5"]


def test_a_line_whose_start_was_dropped_is_skipped():
    framer = LineFramer(MAX_LINE)
    framer.skip_line()
    assert framer.feed(b"0 1\nD P2 3\n") == [b"D P2 3"]


@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b), max_size=20), st.data())
def test_lines_cut_anywhere_come_out_whole(lines, data):
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    framer = LineFramer(MAX_LINE)
    got = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += framer.feed(stream[start:end])
    assert got == lines
