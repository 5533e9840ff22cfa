"""The keyboard as the box's buttons (referee/buttons.py): a terminal, or the window's keys.

Neither reports when a key went down, only when the box reads it, so a key is stamped
when it is read, and the watermark of a keyboard is the time it was last read empty
(docs/design.md, "Event time"): a key typed during a stall is stamped when the stall ends.
"""

import errno
import logging
import os
import stat
import termios
import time
import tty
from collections.abc import Callable, Iterator
from typing import Protocol

from referee.buttons import BUTTONS, KEYMAP, QUIT_KEY
from referee.inbox import Quit
from referee.inputs import SourceItem

from .edges import Edge

log = logging.getLogger(__name__)

ESC = "\x1b"

# A USB keyboard is polled every 8 ms (125 Hz): two keys closer than that cannot be ordered.
KEYBOARD_RESOLUTION_NS = 8_000_000
# How often the main loop takes the window's keys where SDL's events come through no
# descriptor it can wait on (KMSDRM).
KEY_POLL_NS = 10_000_000


class NotATerminal(Exception):
    """Keys cannot be read from this file; the message says what it is instead."""


def typed(text: str) -> Iterator[str]:
    """The keys typed, lower case, without the escape sequences of keys such as Delete
    or the arrows (ESC [ ... final, ESC O x): their digits are no buzzers. A terminal
    sends a key's sequence in one piece, so one read holds all of it."""
    chars = iter(text.lower())
    for char in chars:
        if char != ESC:
            yield char
            continue
        kind = next(chars, "")
        if kind == "[":  # CSI: parameters, then one final character from @ to ~
            for rest in chars:
                if "@" <= rest <= "~":
                    break
        elif kind == "o":  # SS3 (lower case now): one more character
            next(chars, "")


def readable_as_keys(fd: int) -> None:
    """A terminal, or a pipe or socket a test or a script types into; else NotATerminal."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError as err:
        raise NotATerminal(f"standard input cannot be read ({err.strerror})") from None
    if os.isatty(fd) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return
    raise NotATerminal("standard input is not a terminal")


class TerminalKeys:
    """Keys typed in a terminal, read by the main loop. A terminal reports no key-up, so
    each key is a tap."""

    name = "keyboard"
    resolution_ns = KEYBOARD_RESOLUTION_NS
    buttons = BUTTONS

    def __init__(self, fd: int, clock: Callable[[], int] = time.monotonic_ns) -> None:
        readable_as_keys(fd)
        self._fd: int | None = fd
        self._clock = clock
        self._saved: list[object] | None = None
        if os.isatty(fd):
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)  # keys arrive one by one, unechoed; Ctrl-C still interrupts
        self._blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        self._watermark = clock()

    def fileno(self) -> int | None:
        return self._fd

    @property
    def watermark_ns(self) -> int:
        return self._watermark

    def wake_ns(self, wanted_ns: int | None) -> int | None:
        return wanted_ns  # a read then finds every key typed before it

    def held_at_start(self) -> tuple[str, ...]:
        return ()  # a terminal reports no key as held

    def read(self) -> list[SourceItem]:
        items: list[SourceItem] = []
        while self._fd is not None:
            t_ns = self._clock()
            try:
                data = os.read(self._fd, 64)
            except BlockingIOError:
                self._watermark = t_ns
                break
            except OSError as err:  # EIO: the terminal hung up
                data = b""
                log.warning("the terminal cannot be read: %s", os.strerror(err.errno or errno.EIO))
            if not data:
                self._watermark = t_ns
                self._fd = None  # nothing more will come: stop waiting on it
                items.append(Quit("the terminal closed"))
                break
            for key in typed(data.decode(errors="replace")):
                if key == QUIT_KEY:
                    items.append(Quit("q pressed"))
                elif button := KEYMAP.get(key):
                    items += [Edge(button, t_ns, True), Edge(button, t_ns, False)]
        return items

    def close(self) -> None:
        fd = self._fd
        if fd is None:
            return
        self._fd = None
        os.set_blocking(fd, self._blocking)
        if self._saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, self._saved)  # type: ignore[arg-type]


class KeyWindow(Protocol):
    """What the keyboard input needs of a window (outputs/display.py's Window)."""

    def events_fd(self) -> int | None: ...
    def events_waiting(self) -> bool: ...
    def take_events(self) -> list[tuple[str, bool]]: ...


class WindowKeys:
    """The window's keyboard as the input: each key stamped as it is taken from the window.
    Under X11 the main loop waits on the X server's connection and takes the keys as they
    come, as a terminal's; elsewhere it takes them every KEY_POLL_NS, so two keys closer
    than that may be stamped in either order."""

    name = "keyboard (window)"
    buttons = BUTTONS

    def __init__(self, window: KeyWindow, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._window = window
        self._clock = clock
        self._fd = window.events_fd()
        self.resolution_ns = (
            KEYBOARD_RESOLUTION_NS
            if self._fd is not None
            else max(KEYBOARD_RESOLUTION_NS, KEY_POLL_NS)
        )
        self._watermark = clock()
        self._held: set[str] = set()  # buttons whose key is down

    def fileno(self) -> int | None:
        return self._fd

    @property
    def watermark_ns(self) -> int:
        return self._watermark

    def wake_ns(self, wanted_ns: int | None) -> int | None:
        if self._fd is None:
            return self._watermark + KEY_POLL_NS
        if self._window.events_waiting():
            return self._clock()  # read from the connection already: take them now
        return wanted_ns  # a read then finds every key that came before it

    def held_at_start(self) -> tuple[str, ...]:
        return ()

    def read(self) -> list[SourceItem]:
        t_ns = self._clock()
        edges: list[SourceItem] = []
        for name, down in self._window.take_events():
            button = KEYMAP.get(name)
            # A second key-down without a key-up is the keyboard repeating a held key.
            if button is None or down == (button in self._held):
                continue
            if down:
                self._held.add(button)
            else:
                self._held.discard(button)
            edges.append(Edge(button, self._clock(), down))
        self._watermark = t_ns
        return edges

    def close(self) -> None:
        pass
