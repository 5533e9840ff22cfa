"""Raw button edges and the one thread-safe queue that carries them to the main loop.

Input threads (gpiozero's callbacks, the serial reader, the terminal reader) only ever
`put` here; the main loop owns everything else (DESIGN.md, "One picture").
"""

import queue
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

from .rules.settings import MAX_SEATS

PLAYER_BUTTONS = tuple(f"P{n}" for n in range(1, MAX_SEATS + 1))
UNDO = "UNDO"
JUDGE_BUTTONS = ("VALID", "INVALID", "SUPER", UNDO)
BUTTONS = PLAYER_BUTTONS + JUDGE_BUTTONS
# No button of the box: UNDO held down (or the keyboard's `e`) ends the game.
END = "END"


def in_play(players: int) -> tuple[str, ...]:
    """The buttons a game with this many seats uses."""
    return (*PLAYER_BUTTONS[:players], *JUDGE_BUTTONS)


@dataclass(frozen=True, slots=True)
class Edge:
    """A button went down or up at t_ns on the daemon's monotonic clock (CLOCK_MONOTONIC)."""

    button: str  # one of BUTTONS
    t_ns: int
    down: bool


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """An input source's lasting condition changed: the board was unplugged, came back..."""

    source: str
    text: str
    ok: bool


@dataclass(frozen=True, slots=True)
class Quit:
    """Stop the main loop: SIGTERM, the window closed, `q` on the terminal."""

    reason: str


InboxItem = Edge | SourceStatus | Quit


class Inbox:
    """The queue the main loop sleeps on."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[InboxItem] = queue.SimpleQueue()

    def put(self, item: InboxItem) -> None:
        self._queue.put(item)

    def get(self, timeout_s: float | None) -> list[InboxItem]:
        """Wait up to timeout_s (None: forever) for an item; return it and all queued after it."""
        try:
            items = [self._queue.get(timeout=timeout_s)]
        except queue.Empty:
            return []
        return items + self.drain()

    def drain(self) -> list[InboxItem]:
        items: list[InboxItem] = []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                return items


@contextmanager
def signals_to(inbox: Inbox) -> Iterator[None]:
    """SIGTERM and SIGINT (Ctrl-C) become a Quit in the inbox, for the main loop to act on."""

    def to_inbox(signum: int, frame: FrameType | None) -> None:
        inbox.put(Quit(signal.Signals(signum).name))

    previous = {sig: signal.signal(sig, to_inbox) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
