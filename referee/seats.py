"""How every output tells the seats apart: number, symbol and colour, never colour alone.

The colours are Okabe and Ito's palette, chosen to stay distinct for colour-blind
players; the symbols all exist in the shipped font.
"""

from .rules.effects import seat

Colour = tuple[int, int, int]

SYMBOLS = ("●", "▲", "■", "◆", "★", "✚", "♥", "♣")

# (r, g, b) for seats 1-8.
COLOURS: tuple[Colour, ...] = (
    (230, 159, 0),  # orange
    (86, 180, 233),  # sky blue
    (0, 158, 115),  # bluish green
    (240, 228, 66),  # yellow
    (0, 114, 178),  # blue
    (213, 94, 0),  # vermillion
    (204, 121, 167),  # reddish purple
    (200, 200, 200),  # light grey
)


def symbol(player: int) -> str:
    return SYMBOLS[(player - 1) % len(SYMBOLS)]


def colour(player: int) -> Colour:
    return COLOURS[(player - 1) % len(COLOURS)]


def label(player: int, name: str | None = None) -> str:
    """ "P3 ■": the number first, so it reads aloud the same as the screen; or the
    player's name in its place, "Ann ■" (the symbol and the colour stay the seat's)."""
    return f"{seat(player) if name is None else name} {symbol(player)}"
