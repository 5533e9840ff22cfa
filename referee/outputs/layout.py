"""Boxes cut from a screen by proportion, so every layout scales from 480x320 to 1920x1080,
and turns on a portrait screen (720x1280, 480x800): what stands side by side on a wide
box is stacked on a tall one.

Each helper splits a box into boxes that tile it exactly: edges are rounded once, shared
by neighbours, so two boxes never overlap and no pixel is lost between them.
"""

from collections.abc import Sequence
from itertools import accumulate
from math import floor

from pygame import Rect


def inset(box: Rect, px: int) -> Rect:
    """The box shrunk by px on every side (never below nothing)."""
    px = min(px, box.width // 2, box.height // 2)
    return Rect(box.x + px, box.y + px, box.width - 2 * px, box.height - 2 * px)


def _cuts(start: int, length: int, weights: Sequence[float], gap: int) -> list[tuple[int, int]]:
    """(start, length) of each part of a span split by weights, gap pixels between parts.
    Each part gets its share rounded down, and the pixels left go to the largest
    remainders: a share of at least n pixels is never cut to n - 1 (rounding each edge
    to the nearest could, and a text's least room then cut the text at 660x673)."""
    total = sum(weights)
    room = max(0, length - gap * (len(weights) - 1))
    shares = [w / total * room if total > 0 else 0.0 for w in weights]
    sizes = [floor(share + 1e-6) for share in shares]  # 48.0 computed as 47.99999...: 48
    by_remainder = sorted(range(len(shares)), key=lambda i: sizes[i] - shares[i])
    for i in by_remainder[: room - sum(sizes)]:
        sizes[i] += 1
    ends = list(accumulate(sizes))
    return [
        (start + end - size + i * gap, size)
        for i, (end, size) in enumerate(zip(ends, sizes, strict=True))
    ]


def _at_least(room: int, weights: Sequence[float], least: Sequence[int]) -> list[float]:
    """Shares of room by weight, where none is below its least: those that would be get
    their least, and the others share what is left by weight."""
    held: dict[int, float] = {}
    while True:
        free = room - sum(held.values())
        total = sum(w for i, w in enumerate(weights) if i not in held)
        short = {
            i: float(least[i])
            for i, w in enumerate(weights)
            if i not in held and (total <= 0 or w / total * free < least[i])
        }
        if not short:
            return [held.get(i, w / total * free if total else 0.0) for i, w in enumerate(weights)]
        held.update(short)


def rows(
    box: Rect, weights: Sequence[float], gap: int = 0, least: Sequence[int] | None = None
) -> list[Rect]:
    """The box cut into horizontal bands, top to bottom, as tall as their weights, and
    each at least as tall as its `least` in pixels (what its text needs, on a small
    screen), when given."""
    if least is not None:
        room = max(0, box.height - gap * (len(weights) - 1))
        weights = _at_least(room, weights, least)
    return [Rect(box.x, y, box.width, h) for y, h in _cuts(box.y, box.height, weights, gap)]


def columns(box: Rect, weights: Sequence[float], gap: int = 0) -> list[Rect]:
    """The box cut into vertical bands, left to right, as wide as their weights."""
    return [Rect(x, box.y, w, box.height) for x, w in _cuts(box.x, box.width, weights, gap)]


def along(box: Rect, weights: Sequence[float], gap: int = 0) -> list[Rect]:
    """The box cut along its longer side: columns on a wide box, rows on a tall one."""
    return columns(box, weights, gap) if box.width >= box.height else rows(box, weights, gap)


def fits_rows(box: Rect, least: Sequence[int], gap: int = 0) -> bool:
    """Bands this tall, gap apart, fit in the box."""
    return sum(least) + gap * (len(least) - 1) <= box.height


def grid_columns(box: Rect, count: int, ratio: float, gap: int = 0) -> int:
    """How many columns a grid of count cells should have for its cells to hold the
    largest thing ratio times as wide as tall: four abreast on a wide screen, two on a
    tall one."""

    def side(cols: int) -> float:
        n_rows = -(-count // cols)
        width = (box.width - gap * (cols - 1)) / cols
        height = (box.height - gap * (n_rows - 1)) / n_rows
        return min(width / ratio, height)

    return max(range(1, max(1, count) + 1), key=side)


def grid(box: Rect, count: int, cols: int, gap: int = 0) -> list[Rect]:
    """count equal cells, row by row; a short last row is centred."""
    n_rows = -(-count // cols)
    cells: list[Rect] = []
    for r, band in enumerate(rows(box, [1] * n_rows, gap)):
        in_row = min(cols, count - r * cols)
        cut = columns(band, [1] * cols, gap)
        shift = (cols - in_row) * (cut[0].width + gap) // 2
        cells.extend(c.move(shift, 0) for c in cut[:in_row])
    return cells


def square(box: Rect) -> Rect:
    """The largest square centred in the box."""
    side = min(box.width, box.height)
    return Rect(0, 0, side, side).move(
        box.x + (box.width - side) // 2, box.y + (box.height - side) // 2
    )
