"""Where button edges come from: GPIO, the serial button board, or a keyboard.

Every source turns its buttons into `Edge`s in event time (the daemon's CLOCK_MONOTONIC)
and says how far its stream is complete, its watermark (docs/design.md, "Event time"). The
main loop reads every source itself, without blocking, whenever it wakes; a source never
decides anything (the arbiter does) and runs no thread of its own for its buttons.
"""

from typing import Protocol

from referee.inbox import Quit, SourceStatus

from .edges import Edge, LostTrack

SourceItem = Edge | LostTrack | SourceStatus | Quit


class InputSource(Protocol):
    name: str  # shown on the screen and in the log, e.g. "GPIO (kernel edge times)"
    resolution_ns: int  # presses closer than this cannot be ordered honestly
    buttons: tuple[str, ...]  # the buttons it reads

    def fileno(self) -> int | None:
        """What the main loop waits on for this source's news, if anything (now)."""
        ...

    def read(self) -> list[SourceItem]:
        """Everything the source has now, without blocking, in the order it came."""
        ...

    @property
    def watermark_ns(self) -> int:
        """Every edge stamped before this time has been returned by `read`."""
        ...

    def wake_ns(self, wanted_ns: int | None) -> int | None:
        """When to read the source again: for its watermark to pass wanted_ns (None: no
        such wish), or for its own upkeep. None: its file descriptor will wake the loop."""
        ...

    def held_at_start(self) -> tuple[str, ...]:
        """Buttons already down when the box starts: stuck, not pressed (a short, an NC lug)."""
        ...

    def close(self) -> None: ...
