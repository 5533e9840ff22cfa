"""The main loop's mailbox: what reaches it from outside its input sources, and the pipe
that wakes it when something does.

The main loop reads every source itself (docs/design.md, "Event time"). The few producers that
are not sources (signal handlers, the sound thread's troubles, the ledger's writer, the
control socket's requests, the microphone, the camera and the page's process) `put` into
the `Inbox`, whose pipe wakes the loop's wait like any source's file descriptor. Its words
are shared by every wing that talks to the loop, so it imports none of them.
"""

import contextlib
import json
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar, Protocol

from .linux import signals


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """One of an input source's lasting conditions changed: the board was unplugged, came
    back, stalled... Each condition is shown on its own until it is ok again."""

    source: str
    text: str
    ok: bool
    condition: str = "link"  # the source's connection; or "stall", "times", "kernel"...


@dataclass(frozen=True, slots=True)
class Quit:
    """Stop the main loop: SIGTERM, the window closed, `q` on the terminal."""

    reason: str


@dataclass(frozen=True, slots=True)
class Status:
    """SIGUSR1: say in the log what the box is doing (the field's way to ask a daemon)."""


@dataclass(frozen=True, slots=True)
class LedgerNews:
    """The ledger's writer found storage trouble, or saw it end: the notices change."""


Said = str | dict[str, object] | None  # an answer's words, or a JSON object


class Reply(Protocol):
    """Where a request's answer goes back to (daemon/control_socket.py's Answer)."""

    def take(self) -> bool:
        """The loop takes the request on: False when its asker gave up waiting."""
        ...

    def give(self, error: str | None, *, trouble: bool = False, said: Said = None) -> None:
        """None: done, and what the box said of it if the asker is to read it (a hint's
        words, what the camera sees as JSON);
        else why not, in one line, and whether it is the box's trouble rather than the
        request's fault (the first answer is the one sent)."""
        ...


# A phone's write, as the page asks it and the loop takes it: one type each, its name on
# the wire (`op`, control.py), its fields, and what it asks in a line for the log. A new
# write is one type here, one branch of control.parse_request, one handler
# (daemon/requests.py) and one route (web/server.py).


@dataclass(frozen=True, slots=True)
class NameSeat:
    """Give the seat a player's name (checked: names.py)."""

    op: ClassVar[str] = "name"
    seat: int
    name: str

    def asked(self) -> str:
        return f"seat {self.seat} named {self.name}"


@dataclass(frozen=True, slots=True)
class SetRules:
    """Set these rule keys for the next games: a JSON object, checked by the loop against
    the rules it has, as the settings file's [rules] would be (config/next_rules.py)."""

    op: ClassVar[str] = "rules"
    values: dict[str, object]

    def asked(self) -> str:
        said = json.dumps(self.values)  # escaped: one line, whatever it holds
        return f"the next games' rules {said if len(said) <= 200 else said[:200] + '...'}"


@dataclass(frozen=True, slots=True)
class FileRules:
    """The next games' rules as the settings file says: every key a phone set forgotten
    (`referee config --reset-page`)."""

    op: ClassVar[str] = "filerules"

    def asked(self) -> str:
        return "the settings file's rules again"


@dataclass(frozen=True, slots=True)
class NewGame:
    """A new game, as SUPER after the end."""

    op: ClassVar[str] = "newgame"

    def asked(self) -> str:
        return "a new game"


@dataclass(frozen=True, slots=True)
class DeleteClips:
    """Delete the clips of a game's calls."""

    op: ClassVar[str] = "clips"
    game: int

    def asked(self) -> str:
        return f"the clips of game {self.game} deleted"


@dataclass(frozen=True, slots=True)
class Hint:
    """Is there a SET on the table? Answered from the camera's reading, nothing kept."""

    op: ClassVar[str] = "hint"

    def asked(self) -> str:
        return "a hint"


@dataclass(frozen=True, slots=True)
class Photo:
    """A phone's photo of the table is in the phones' folder, or about to be: the phones
    are the camera where the box has none (docs/web.md, "Photo")."""

    op: ClassVar[str] = "photo"

    def asked(self) -> str:
        return "a phone's photo"


@dataclass(frozen=True, slots=True)
class Table:
    """What the camera reads on the table now, for the page: answered at once, nothing
    kept."""

    op: ClassVar[str] = "table"

    def asked(self) -> str:
        return "what the camera sees"


PageRequest = NameSeat | SetRules | FileRules | NewGame | DeleteClips | Hint | Photo | Table


@dataclass(frozen=True, slots=True)
class Asked:
    """A page's request for the loop, and where its answer goes (the control socket's)."""

    request: PageRequest
    reply: Reply


@dataclass(frozen=True, slots=True)
class Finished:
    """Work done off the main loop (a call's clip read for REPLAY), for the loop to take
    up: `take(now_ns)` runs on the loop and says what to tell the table, if anything."""

    take: Callable[[int], str | None]


@dataclass(frozen=True, slots=True)
class SeenCard:
    """A card as the camera's process read it: its face, each attribute 0, 1 or 2 in
    number, colour, shading, shape order (vision/card.py's), whether it was read surely,
    and where it lies in the frame (x, y, width, height)."""

    face: tuple[int, int, int, int]
    sure: bool
    box: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Seen:
    """A frame's reading from the camera's process (camera/wire.py): the cards, the SETs
    among the sure ones by index, and when the frame was taken (CLOCK_MONOTONIC)."""

    t_ns: int
    cards: tuple[SeenCard, ...]
    sets: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True, slots=True)
class Unread:
    """A frame the camera's process could not read (a phone's photo damaged past what its
    header shows): when it was taken (CLOCK_MONOTONIC, as a reading's), and why."""

    t_ns: int
    why: str


InboxItem = SourceStatus | Quit | Status | LedgerNews | Asked | Finished | Seen | Unread


class Inbox:
    """Items from outside the main loop, and a pipe that wakes the loop when one comes."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[InboxItem] = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        # A thread may put while the loop closes: once closed, the pipe's numbers may be
        # another file's, which a late wake-up byte would write into. Reentrant: a signal's
        # handler puts from the main thread, which may be putting already.
        self._closing = threading.RLock()
        self._closed = False

    def fileno(self) -> int:
        """Readable while items wait: for the main loop's selector."""
        return self._wake_r

    def put(self, item: InboxItem) -> None:
        """Hand the loop an item, from any thread; after close() it goes nowhere."""
        with self._closing:
            if self._closed:
                return
            self._queue.put(item)
            # A full pipe holds wake-ups enough: the loop is surely woken.
            with contextlib.suppress(BlockingIOError):
                os.write(self._wake_w, b"!")

    def drain(self) -> list[InboxItem]:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wake_r, 4096):
                pass
        items: list[InboxItem] = []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                return items

    def close(self) -> None:
        with self._closing:
            self._closed = True
            os.close(self._wake_r)
            os.close(self._wake_w)


@contextmanager
def signals_to(inbox: Inbox) -> Iterator[None]:
    """Signals become items in the inbox, for the main loop to act on between decisions;
    those that came while the box started first (referee/linux/signals.py)."""

    def to_inbox(signum: int) -> None:
        if signum == signal.SIGUSR1:
            inbox.put(Status())
        else:
            inbox.put(Quit(signal.Signals(signum).name))

    # The kernel may hand a signal to any thread (the ledger's writer, a speaker's), and
    # Python runs its handler only once the main thread runs again: the byte Python writes
    # here for every signal wakes the loop's wait, which may have no timeout.
    previous_fd = signal.set_wakeup_fd(inbox._wake_w, warn_on_full_buffer=False)
    try:
        with signals.handed_to(to_inbox):
            yield
    finally:
        signal.set_wakeup_fd(previous_fd)
