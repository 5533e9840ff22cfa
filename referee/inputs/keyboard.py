"""The keyboard as the box's buttons: keys 1-8 are the buzzers, v x s u the judge buttons.

`TerminalKeys` reads a terminal in cbreak mode; the pygame window reads its own keys
(outputs/display.py) through the same KEYMAP.
"""

import logging
import os
import selectors
import termios
import threading
import time
import tty
from collections.abc import Callable, Iterator

from referee.edges import END, Edge, Inbox, Quit

log = logging.getLogger(__name__)

KEYMAP: dict[str, str] = {
    **{str(n): f"P{n}" for n in range(1, 9)},
    "v": "VALID",
    "x": "INVALID",
    "s": "SUPER",
    "u": "UNDO",
    "e": END,
}
QUIT_KEY = "q"
ESC = "\x1b"

# A USB keyboard is polled every 8 ms (125 Hz): two keys closer than that cannot be ordered.
KEYBOARD_RESOLUTION_NS = 8_000_000


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


class TerminalKeys:
    """Keys typed in a terminal. A terminal reports no key-up, so each key is a tap."""

    name = "keyboard"
    resolution_ns = KEYBOARD_RESOLUTION_NS
    latency_ns = 1_000_000

    def __init__(self, fd: int, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._fd = fd
        self._clock = clock
        self._saved: list[object] | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None

    def held_at_start(self) -> tuple[str, ...]:
        return ()  # a terminal reports no key as held

    def start(self, inbox: Inbox) -> None:
        if os.isatty(self._fd):
            self._saved = termios.tcgetattr(self._fd)
            tty.setcbreak(self._fd)  # keys arrive one by one, unechoed; Ctrl-C still interrupts
        self._thread = threading.Thread(target=self._read, args=(inbox,), daemon=True)
        self._thread.start()

    def _read(self, inbox: Inbox) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(self._fd, selectors.EVENT_READ)
            sel.register(self._wake_r, selectors.EVENT_READ)
            while True:
                ready = {key.fd for key, _ in sel.select()}
                if self._wake_r in ready:
                    return
                data = os.read(self._fd, 64)
                t_ns = self._clock()
                if not data:
                    inbox.put(Quit("the terminal closed"))
                    return
                for key in typed(data.decode(errors="replace")):
                    if key == QUIT_KEY:
                        inbox.put(Quit("q pressed"))
                    elif button := KEYMAP.get(key):
                        inbox.put(Edge(button, t_ns, True))
                        inbox.put(Edge(button, t_ns, False))

    def close(self) -> None:
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)  # type: ignore[arg-type]
        os.close(self._wake_r)
        os.close(self._wake_w)
