"""Drawing on a surface with the shipped font: every text is shrunk to fit its box.

A `Canvas` keeps a record of every text it drew, so tests can check that no text leaves
the screen, overlaps another, or had to be cut.
"""

import io
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from itertools import combinations, pairwise
from math import ceil
from typing import Literal

import pygame
from pygame import Rect

from referee.seats import Colour

Align = Literal["left", "center", "right"]

FONT_FILE = "fonts/DejaVuSans-Bold.ttf"
# Sizes are the font's size in pixels (its em; a line is about 1.17 of it). On a 3.5"
# screen (480x320, 0.154 mm a pixel) 20 px is 3 mm: read 1.5 m away. No text is drawn
# smaller; text that does not fit even so is clipped, and the record says it was cut.
MIN_SIZE = 20
# What the table watches from its seats (the caller, the timers, the scores) is drawn
# at least this large, 7.4 mm on the 3.5" screen.
WATCHED_SIZE = 48
MEASURE_SIZE = 40  # size at which line breaks are chosen: widths scale with size


@cache
def _font_bytes() -> bytes:
    return resources.files("referee").joinpath(FONT_FILE).read_bytes()


@lru_cache(maxsize=64)
def font(size: int) -> pygame.font.Font:
    if not pygame.font.get_init():
        pygame.font.init()
    return pygame.font.Font(io.BytesIO(_font_bytes()), size)


def _width(text: str, size: int) -> int:
    return font(size).size(text)[0]


def _lines(words: Sequence[str], breaks: Sequence[int]) -> list[str]:
    edges = [0, *breaks, len(words)]
    return [" ".join(words[a:b]) for a, b in pairwise(edges)]


@lru_cache(maxsize=256)
def _wrap(text: str, n: int) -> tuple[str, ...] | None:
    """The text in n lines, broken between words so that the widest line is narrowest."""
    # Only a plain space breaks a line: a no-break space keeps "s super" whole.
    words = [word for word in text.split(" ") if word]
    if n == 1:
        return (text,)
    if len(words) < n:
        return None
    best = min(
        combinations(range(1, len(words)), n - 1),
        key=lambda cut: max(_width(line, MEASURE_SIZE) for line in _lines(words, cut)),
    )
    return tuple(_lines(words, best))


def _largest(lines: Sequence[str], width: int, height: int) -> int:
    """The largest font size at which the lines fit width x height, or 0."""
    # A line is about 1.17 times the size: start just above, then walk down.
    size = max(MIN_SIZE, int(height / len(lines) / 1.1))
    while size >= MIN_SIZE:
        f = font(size)
        wide = max(f.size(line)[0] for line in lines)
        tall = f.get_linesize() * (len(lines) - 1) + f.get_height()
        if wide <= width and tall <= height:
            return size
        # Widths grow about linearly with size: jump close (not past), then walk down.
        shrink = min(width / max(wide, 1), height / max(tall, 1))
        size = min(size - 1, ceil(size * shrink))
    return 0


@lru_cache(maxsize=512)
def fit(
    text: str, width: int, height: int, max_lines: int = 1, max_size: int | None = None
) -> tuple[int, tuple[str, ...]]:
    """The font size and lines that show the text largest in width x height, up to
    max_size; in as few lines as reach that size (a line break costs reading)."""
    best: tuple[int, tuple[str, ...]] = (0, (text,))
    if max_size is not None:
        max_size = max(max_size, MIN_SIZE)
    for n in range(1, max_lines + 1):
        lines = _wrap(text, n)
        if lines is None:
            break
        size = _largest(lines, width, height)
        if max_size is not None and size >= max_size:
            return max_size, lines
        if size > best[0]:
            best = (size, lines)
    return best


@dataclass(frozen=True)
class Drawn:
    text: str
    box: Rect  # where its pixels went
    size: int  # the font's size in pixels
    cut: bool  # it did not fit even at MIN_SIZE, and was clipped to its box
    watched: bool = False  # what the table watches: to be at least WATCHED_SIZE


class Canvas:
    """A surface to draw a screen on, and the texts drawn on it so far."""

    def __init__(self, surface: pygame.Surface) -> None:
        self.surface = surface
        self.drawn: list[Drawn] = []

    @property
    def rect(self) -> Rect:
        return self.surface.get_rect()

    def common_size(self, boxes: Sequence[Rect], texts: Sequence[str], max_lines: int = 1) -> int:
        """The largest size at which every text fits its box: a row of texts looks even."""
        return min(
            (fit(t, b.width, b.height, max_lines)[0] for b, t in zip(boxes, texts, strict=True)),
            default=0,
        )

    def fits(self, box: Rect, text: str, max_lines: int = 1) -> bool:
        """The text fits the box at MIN_SIZE or larger."""
        return fit(text, box.width, box.height, max_lines)[0] >= MIN_SIZE

    def fill(self, box: Rect, colour: Colour, radius: int = 0) -> None:
        pygame.draw.rect(self.surface, colour, box, border_radius=radius)

    def frame(self, box: Rect, colour: Colour, width: int, radius: int = 0) -> None:
        pygame.draw.rect(self.surface, colour, box, max(1, width), border_radius=radius)

    def disc(self, box: Rect, colour: Colour, width: int = 0) -> None:
        pygame.draw.ellipse(self.surface, colour, box, width)

    def text(
        self,
        box: Rect,
        text: str,
        colour: Colour,
        *,
        align: Align = "center",
        max_lines: int = 1,
        max_size: int | None = None,
        watched: bool = False,
    ) -> int:
        """Draw the text as large as fits the box (and max_size); return its size (0: none).
        A watched text is one the table watches (see WATCHED_SIZE), for the record."""
        if not text or box.width <= 0 or box.height <= 0:
            return 0
        fitted, lines = fit(text, box.width, box.height, max_lines, max_size)
        size = max(MIN_SIZE, fitted)
        f = font(size)
        images = [f.render(line, True, colour) for line in lines]
        step = f.get_linesize()
        tall = step * (len(images) - 1) + images[-1].get_height()
        y = box.y + (box.height - tall) // 2
        placed: list[Rect] = []
        for image in images:
            x = {
                "left": box.x,
                "center": box.x + (box.width - image.get_width()) // 2,
                "right": box.right - image.get_width(),
            }[align]
            placed.append(image.get_rect(topleft=(x, y)))
            y += step
        clip = self.surface.get_clip()
        self.surface.set_clip(box)  # only bites when even MIN_SIZE did not fit
        for image, where in zip(images, placed, strict=True):
            self.surface.blit(image, where)
        self.surface.set_clip(clip)
        drawn = placed[0].unionall(placed[1:]).clip(box)
        self.drawn.append(Drawn(text, drawn, size, cut=fitted == 0, watched=watched))
        return size
