"""Where button edges come from: GPIO, the serial button board, or a keyboard.

Every source turns its buttons into `Edge`s on the daemon's monotonic clock and puts
them in the `Inbox`; it never decides anything (the arbiter does).
"""

import sys
from typing import Protocol

from referee.edges import Inbox


def gil_wait_ns() -> int:
    """How long an input's thread may wait for the GIL while the main loop runs Python:
    one switch interval (`referee run` shortens it from Python's 5 ms)."""
    return round(sys.getswitchinterval() * 1_000_000_000)


class InputSource(Protocol):
    name: str  # shown on the screen and in the log, e.g. "GPIO (lgpio: kernel edge times)"
    resolution_ns: int  # presses closer than this cannot be ordered honestly
    latency_ns: int  # how late an edge can reach the inbox; the arbiter settles at least this

    def start(self, inbox: Inbox) -> None: ...

    def held_at_start(self) -> tuple[str, ...]:
        """Buttons already down when the box starts: stuck, not pressed (a short, an NC lug)."""
        ...

    def close(self) -> None: ...
