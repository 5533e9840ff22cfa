"""The screen: pygame-ce draws each View; the Window also owns pygame's event loop.

    render(surface, view)      draw the screen for a view on any surface (tests, gallery)
    next_frame_ns(view)        when the picture next changes by itself
    Window(inbox)              the real display; its keys become Edges in the inbox

On Raspberry Pi OS Lite SDL draws with KMSDRM, full screen, with no desktop; on a
desktop the Window is a resizable window. Only the main thread may touch the Window
(SDL's rule for the video subsystem); other threads reach it through the Inbox, whose
wake function posts an event that ends `wait` (SDL_PushEvent is thread-safe).
"""

import contextlib
import math
import os
import threading
import time

import pygame

from referee.edges import Edge, Inbox, Quit
from referee.inputs.keyboard import KEYMAP
from referee.view import View

from . import captions
from .canvas import Canvas
from .screens import draw_screen

__all__ = ["ScreenUnavailable", "Window", "next_frame_ns", "render"]

DEFAULT_SIZE = (1280, 720)
HEADLESS_DRIVERS = ("offscreen", "dummy")
# The longest single wait in pygame: how long a signal (SIGTERM) may go unnoticed.
SIGNAL_CHECK_MS = 100
# The events wait() acts on; the rest (mouse, text input...) never wake it.
_WANTED = (
    pygame.QUIT,
    pygame.KEYDOWN,
    pygame.KEYUP,
    pygame.WINDOWEXPOSED,
    pygame.WINDOWSIZECHANGED,
)


class ScreenUnavailable(RuntimeError):
    """There is no screen to draw on: no desktop session and no KMS display."""


def render(surface: pygame.Surface, view: View) -> None:
    """Draw the whole screen for the view on the surface, whatever its size."""
    draw_screen(Canvas(surface), view)


def next_frame_ns(view: View) -> int | None:
    """The game-clock time at which the picture next changes by itself, or None.

    Timers tick every whole second and every tenth in their last 3 s; the solo
    increment when its shown number drops (captions.py, shared with the terminal).
    """
    return captions.next_change_ns(view)


def _frame_key(view: View, size: tuple[int, int]) -> tuple[object, ...]:
    """What the picture is drawn from: equal keys draw equal pictures."""
    return (
        size,
        view.settings,
        view.state,
        view.messages[-1:],
        view.notices,
        view.source,
        captions.shown_clocks(view),
    )


class Window:
    """The display, opened full screen under KMSDRM (or when asked), else a window."""

    def __init__(
        self,
        inbox: Inbox,
        *,
        fullscreen: bool = False,
        size: tuple[int, int] | None = None,
    ) -> None:
        try:
            pygame.display.init()
        except pygame.error as err:
            raise ScreenUnavailable(f"no screen to open (SDL: {err})") from None
        self.driver = pygame.display.get_driver()
        # SDL falls back to drawing nowhere when it reaches no screen; only a test asks
        # for that, by name.
        if self.driver in HEADLESS_DRIVERS and os.environ.get("SDL_VIDEODRIVER") != self.driver:
            pygame.display.quit()
            raise ScreenUnavailable(f"no screen to open (SDL found only its {self.driver} driver)")
        self.fullscreen = fullscreen or self.driver == "KMSDRM"
        try:
            if self.fullscreen:
                pygame.display.set_mode((0, 0), pygame.FULLSCREEN)
                pygame.mouse.set_visible(False)
            else:
                pygame.display.set_mode(size or DEFAULT_SIZE, pygame.RESIZABLE)
        except pygame.error as err:
            pygame.display.quit()
            raise ScreenUnavailable(f"cannot open the {self.driver} screen: {err}") from None
        pygame.display.set_caption("referee")
        pygame.key.set_repeat()  # no emulated key repeat: a held key is one press
        self._wake_type = pygame.event.custom_type()
        pygame.event.set_blocked(None)
        pygame.event.set_allowed([*_WANTED, self._wake_type])
        self._keys = {pygame.key.key_code(name): button for name, button in KEYMAP.items()}
        self._held: set[int] = set()
        self._inbox = inbox
        self._wake_posted = threading.Event()
        self._last_key: tuple[object, ...] | None = None
        self.quit_requested = False
        self.frames = 0  # drawn so far
        inbox.set_wake(self._wake)

    def _wake(self) -> None:
        """Called from any thread after an Inbox.put: end a `wait` in progress."""
        if self._wake_posted.is_set():
            return  # one pending wake-up is enough; more would only fill SDL's queue
        self._wake_posted.set()
        # pygame.error: the display was closed meanwhile, and nobody is waiting any more.
        with contextlib.suppress(pygame.error):
            pygame.event.post(pygame.event.Event(self._wake_type))

    def wait(self, timeout_s: float | None) -> None:
        """Sleep until there is something for the main loop (an edge or a quit in the
        inbox, an Inbox.put from any thread, a window to redraw) or the timeout."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            # Python runs a signal's handler (SIGTERM's Quit) only between calls, never
            # inside pygame's wait: so no single wait is longer than SIGNAL_CHECK_MS.
            if deadline is None:
                event = pygame.event.wait(SIGNAL_CHECK_MS)
            elif (left_ms := math.ceil((deadline - time.monotonic()) * 1000)) > 0:
                event = pygame.event.wait(min(left_ms, SIGNAL_CHECK_MS))
            else:  # no time left (pygame would read a timeout of 0 as "forever")
                self._handle(pygame.event.get())
                break
            if event.type != pygame.NOEVENT and self._handle([event, *pygame.event.get()]):
                break
        # The caller drains the inbox now, so every wake-up posted so far is spent,
        # the ones this thread's own keys just posted included.
        pygame.event.get(self._wake_type, pump=False)
        self._wake_posted.clear()

    def _handle(self, events: list[pygame.event.Event]) -> bool:
        """Act on SDL's events; True if any of them is news for the main loop."""
        news = False
        for event in events:
            if event.type == self._wake_type:
                news = True
            elif event.type == pygame.QUIT:
                self._quit("the window was closed")
                news = True
            elif event.type in (pygame.KEYDOWN, pygame.KEYUP):
                news = self._key(event.type == pygame.KEYDOWN, event.key) or news
            elif event.type in (pygame.WINDOWEXPOSED, pygame.WINDOWSIZECHANGED):
                self._last_key = None  # the window's pixels are gone or resized: redraw
                news = True
        return news

    def _key(self, down: bool, key: int) -> bool:
        if down and key == pygame.K_ESCAPE:
            self._quit("Escape pressed")
            return True
        button = self._keys.get(key)
        # A second key-down without a key-up is the keyboard repeating a held key.
        if button is None or down == (key in self._held):
            return False
        if down:
            self._held.add(key)
        else:
            self._held.discard(key)
        self._inbox.put(Edge(button, time.monotonic_ns(), down))
        return True

    def _quit(self, reason: str) -> None:
        self.quit_requested = True
        self._inbox.put(Quit(reason))

    def show(self, view: View) -> None:
        """Draw the view, unless the screen already shows exactly this picture."""
        surface = pygame.display.get_surface()
        assert surface is not None, "show() after close()"
        key = _frame_key(view, surface.get_size())
        if key == self._last_key:
            return
        render(surface, view)
        pygame.display.flip()
        self._last_key = key
        self.frames += 1

    def next_frame_ns(self, view: View) -> int | None:
        """As the terminal screen has it, so the main loop can drive either."""
        return next_frame_ns(view)

    def close(self) -> None:
        self._inbox.set_wake(None)
        pygame.display.quit()

    def __enter__(self) -> "Window":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
