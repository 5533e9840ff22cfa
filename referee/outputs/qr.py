"""A QR code on the screen: the page's address in the lobby, for the phones to scan.

segno (pure Python, no dependencies) makes the code; it is drawn with a whole number of
pixels a module, dark on light, so that no module is blurred into its neighbour.
"""

from functools import lru_cache

import segno
from pygame import Rect

from referee.seats import Colour

from .canvas import Canvas

QUIET = 2  # light modules around the code: scanners want a margin, a 3.5" screen has little
LIGHT: Colour = (255, 255, 255)
DARK: Colour = (0, 0, 0)


@lru_cache(maxsize=4)
def modules(text: str) -> tuple[tuple[bool, ...], ...]:
    """The code's modules, row by row, True where dark (no quiet zone)."""
    code = segno.make(text, micro=False)  # the smallest version, its error level raised to fit
    return tuple(tuple(bool(module) for module in row) for row in code.matrix)


def module_px(box: Rect, text: str) -> int:
    """Pixels a module in the largest code of the text that fits the box (0: none does)."""
    return min(box.width, box.height) // (len(modules(text)) + 2 * QUIET)


def draw(canvas: Canvas, box: Rect, text: str) -> Rect:
    """The text's code as large as fits, centred in the box; where it was drawn, its
    quiet zone included."""
    code = modules(text)
    px = module_px(box, text)
    side = px * (len(code) + 2 * QUIET)
    where = Rect(0, 0, side, side)
    where.center = box.center
    canvas.fill(where, LIGHT)
    for y, row in enumerate(code):
        top = where.y + (y + QUIET) * px
        x = 0
        while x < len(row):  # each run of dark modules in a row as one rectangle
            if not row[x]:
                x += 1
                continue
            start = x
            while x < len(row) and row[x]:
                x += 1
            canvas.fill(Rect(where.x + (start + QUIET) * px, top, (x - start) * px, px), DARK)
    return where
