"""What the camera's process tells the daemon: one JSON object a line, on its output.

A frame's reading:
    {"t": T, "cards": [[N, C, S, P, SURE, X, Y, W, H], ...], "sets": [[I, J, K], ...]}
T the frame's CLOCK_MONOTONIC stamp (ns); each card its number, colour, shading and shape
as 0, 1 or 2 (vision/card.py's order), 1 if read surely, and its box in the frame's
pixels; each SET three indices into cards, of sure cards. A change of the camera itself:
    {"status": TEXT, "ok": true|false}
the camera lost (why), or watching again. A frame it could not read (a folder's file, a
phone's photo, damaged where its header could not tell):
    {"unread": TEXT, "t": T}

The daemon trusts none of it (`parse`): a line longer than MAX_LINE, or one that is not
exactly this, is refused (BadLine) and dropped with one line in the log. This module
imports neither OpenCV nor numpy: the daemon reads the wire without either.
"""

import json
from collections.abc import Sequence

from referee.inbox import Seen, SeenCard, SourceStatus, Unread

CAMERA = "camera"  # the source its SourceStatus names
PHONE = "--phone"  # on its command line: SOURCE is the phones' photos' folder (watch.py)
MAX_LINE = 16_384  # 81 cards, the whole deck, take some 3 kB
MAX_CARDS = 81
MAX_STATUS = 300  # characters of a status's text
MAX_PIXELS = 100_000  # a box's coordinate: past any frame's side


class BadLine(ValueError):
    """A line from the camera's process that is not one of the wire's: why, in a few words."""


def reading_line(
    t_ns: int,
    cards: Sequence[tuple[tuple[int, int, int, int], bool, tuple[int, int, int, int]]],
    sets: Sequence[tuple[int, int, int]],
) -> bytes:
    """A frame's reading as its line: cards as (face, sure, box)."""
    said = {
        "t": t_ns,
        "cards": [[*face, int(sure), *box] for face, sure, box in cards],
        "sets": [list(s) for s in sets],
    }
    return json.dumps(said, separators=(",", ":")).encode() + b"\n"


def status_line(text: str, *, ok: bool) -> bytes:
    return json.dumps({"status": text[:MAX_STATUS], "ok": ok}).encode() + b"\n"


def unread_line(t_ns: int, why: str) -> bytes:
    """A frame that could not be read: why, each character the daemon would refuse (a
    library's message is not the process's own) made a `?`."""
    said = "".join(c if c.isprintable() else "?" for c in why[:MAX_STATUS])
    return json.dumps({"unread": said, "t": t_ns}).encode() + b"\n"


def parse(line: bytes) -> Seen | SourceStatus | Unread:
    """A line (its newline included or not) as the daemon takes it; BadLine if it is not
    one the wire allows."""
    if len(line) > MAX_LINE:
        raise BadLine(f"a line over {MAX_LINE} bytes")
    try:
        said = json.loads(line)
    except (ValueError, RecursionError):
        raise BadLine("not JSON") from None
    if not isinstance(said, dict):
        raise BadLine("not a JSON object")
    if said.keys() == {"status", "ok"}:
        text, ok = said["status"], said["ok"]
        if not (isinstance(text, str) and isinstance(ok, bool) and len(text) <= MAX_STATUS):
            raise BadLine("a status that is not a short text and a true or false")
        if not text.isprintable():
            raise BadLine("a status with a control character")
        return SourceStatus(CAMERA, text, ok)
    if said.keys() == {"unread", "t"}:
        why, t_ns = said["unread"], said["t"]
        if not (isinstance(why, str) and len(why) <= MAX_STATUS and why.isprintable()):
            raise BadLine("an unread frame's why that is not a short printable text")
        if not (_integer(t_ns) and t_ns >= 0):
            raise BadLine("a stamp that is not a whole number of ns")
        return Unread(t_ns, why)
    if said.keys() != {"t", "cards", "sets"}:
        raise BadLine(f"unknown keys {sorted(said)[:5]}")
    t_ns, cards, sets = said["t"], said["cards"], said["sets"]
    if not (_integer(t_ns) and t_ns >= 0):
        raise BadLine("a stamp that is not a whole number of ns")
    if not (isinstance(cards, list) and len(cards) <= MAX_CARDS):
        raise BadLine(f"cards that are not a list of at most {MAX_CARDS}")
    seen = tuple(_card(card) for card in cards)
    if not isinstance(sets, list):
        raise BadLine("sets that are not a list")
    return Seen(t_ns, seen, tuple(_set(s, seen) for s in sets))


def _integer(value: object) -> bool:
    return type(value) is int


def _card(card: object) -> SeenCard:
    if not (isinstance(card, list) and len(card) == 9 and all(map(_integer, card))):
        raise BadLine("a card that is not nine whole numbers")
    n, c, s, p, sure, x, y, w, h = card
    if not all(0 <= v <= 2 for v in (n, c, s, p)) or sure not in (0, 1):
        raise BadLine("a card's attribute out of range")
    if not all(0 <= v <= MAX_PIXELS for v in (x, y, w, h)):
        raise BadLine("a card's box out of range")
    return SeenCard((n, c, s, p), bool(sure), (x, y, w, h))


def _set(indices: object, cards: tuple[SeenCard, ...]) -> tuple[int, int, int]:
    if not (isinstance(indices, list) and len(indices) == 3 and all(map(_integer, indices))):
        raise BadLine("a SET that is not three indices")
    i, j, k = indices
    if len({i, j, k}) != 3 or not all(0 <= v < len(cards) and cards[v].sure for v in (i, j, k)):
        raise BadLine("a SET that is not three distinct sure cards")
    # A SET: each attribute all the same or all different, so its three values sum to 0,
    # 3 or 6.
    if any(sum(values) % 3 for values in zip(*(cards[v].face for v in (i, j, k)), strict=True)):
        raise BadLine("three cards that are not a SET")
    return i, j, k
