"""The pygame screens' colours (the seats' own are in referee/seats.py): light on dark, so the
screen reads across a room and does not light up the table."""

from referee.seats import Colour

BACKGROUND: Colour = (16, 20, 24)
PANEL: Colour = (32, 39, 47)
TEXT: Colour = (240, 240, 240)
DIM: Colour = (140, 150, 160)
FAINT: Colour = (70, 80, 90)
GOOD: Colour = (90, 200, 120)
BAD: Colour = (255, 110, 90)
URGENT: Colour = (255, 80, 50)  # the last seconds of a timer
ATTENTION: Colour = (245, 190, 40)  # ignored inputs, warnings, ties, the winners
INFO: Colour = (30, 90, 168)
ERROR: Colour = (200, 40, 40)
INK: Colour = (12, 12, 12)  # text on a light fill


def _luminance(colour: Colour) -> float:
    """WCAG relative luminance."""

    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ink_on(fill: Colour) -> Colour:
    """Black or white, whichever contrasts more with the fill."""
    lum = _luminance(fill)
    light = (_luminance(TEXT) + 0.05) / (lum + 0.05)
    dark = (lum + 0.05) / (_luminance(INK) + 0.05)
    return TEXT if light > dark else INK
