"""referee: a Raspberry Pi box that referees the card game SET."""

__version__ = "0.1.0"
