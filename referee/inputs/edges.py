"""What an input source hands the main loop about its buttons: each edge in event time, and
the moment it lost track of one (docs/design.md, "Event time"). A source's conditions and a
quit go through the same read (inbox.SourceStatus, inbox.Quit): the loop takes them alike
from the inbox."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Edge:
    """A button went down or up at t_ns (its event time) on the daemon's CLOCK_MONOTONIC."""

    button: str  # one of BUTTONS
    t_ns: int
    down: bool


@dataclass(frozen=True, slots=True)
class LostTrack:
    """The source can no longer tell the button's level (its board went away or started
    again): the button counts as up from t_ns, and that made-up release is no input."""

    button: str
    t_ns: int
