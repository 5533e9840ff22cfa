"""The numbers every part of the box counts in, in a module that imports nothing: times
are whole nanoseconds of CLOCK_MONOTONIC (or of a game's clock), a table has at most
MAX_SEATS buzzers, and a screen is at least SMALLEST_SCREEN."""

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
MAX_SEATS = 8
# The smallest screen the pictures are laid out for, width by height (a 3.5" SPI panel
# on its side): any screen at least this wide and this high, landscape or portrait.
SMALLEST_SCREEN = (480, 320)
ID_MAX = 2**63 - 1  # SQLite's largest integer: a game's id is at most this
