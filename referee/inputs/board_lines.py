"""The serial button board's lines (docs/protocol.md): cut from the bytes, and parsed.

Framing is ours: pyserial's readline hands back half a line when its timeout ends, and
half a line must never count as one. A line that does not parse is the caller's to count
and log; `BadLine` says what is wrong with it.
"""

from dataclasses import dataclass

from referee.buttons import PIN_BUTTONS

HELLO = "HELLO referee-board 1"
LED_MODES = ("off", "on", "blink")
# The longest valid line is under 40 bytes; anything this long without a "\n" is noise.
MAX_LINE = 80


class BadLine(ValueError):
    """A line from the board that is not the protocol; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class BoardEdge:
    """`D` or `U`: a button went down or up at t_us on the board's clock."""

    button: str
    t_us: int
    down: bool


@dataclass(frozen=True, slots=True)
class BoardTime:
    """`T`: every edge the board stamped before t_us has been sent."""

    t_us: int


@dataclass(frozen=True, slots=True)
class Hello:
    """The board (re)started: its clock starts again."""


BoardLine = BoardEdge | BoardTime | Hello


def _stamp(field: str) -> int:
    if not (field.isascii() and field.isdigit()):
        raise BadLine(f"t_us {field!r} is not a non-negative integer")
    return int(field)


def parse_line(raw: bytes) -> BoardLine:
    """What a line says; BadLine for anything that is not the protocol."""
    if len(raw) > MAX_LINE:
        raise BadLine(f"longer than {MAX_LINE} bytes")
    try:
        line = raw.decode("ascii")
    except UnicodeDecodeError:
        raise BadLine("not ASCII") from None
    # MicroPython's text stdout ends lines with "\r\n": take a board that prints that too.
    line = line.removesuffix("\r")
    if line == HELLO:
        return Hello()
    fields = line.split(" ")
    match fields:
        case ["HELLO", *_]:
            raise BadLine(f"not a greeting this referee speaks (it expects {HELLO!r})")
        case ["T", t_us]:
            return BoardTime(_stamp(t_us))
        case ["T", *_]:
            raise BadLine(f"expected 2 fields separated by one space, got {len(fields)}")
        case ["D" | "U", button, t_us]:
            if button not in PIN_BUTTONS:
                raise BadLine(f"unknown button {button!r} (known: {' '.join(PIN_BUTTONS)})")
            return BoardEdge(button, _stamp(t_us), fields[0] == "D")
        case ["D" | "U", *_]:
            raise BadLine(f"expected 3 fields separated by one space, got {len(fields)}")
    raise BadLine("expected D, U, T or HELLO first")
