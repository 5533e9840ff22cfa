"""The numbers every part of the box counts in, in a module that imports nothing: times
are whole nanoseconds of CLOCK_MONOTONIC (or of a game's clock), and a table has at most
MAX_SEATS buzzers."""

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
MAX_SEATS = 8
