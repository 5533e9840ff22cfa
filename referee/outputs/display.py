"""The screen: pygame-ce draws each View; the Window also owns pygame's event loop.

    render(surface, view)      draw the screen for a view on any surface (tests, gallery)
    Window(inbox)              the real display; take_events() hands over its keys

The Window is a desktop's resizable window. A console without a desktop is shown the same
pictures through KMS (kms.py, kms_screen.py), not through SDL's KMSDRM driver, whose
frames Mesa's software GL never draws. Only the main thread may touch the Window (SDL's
rule for the video subsystem). The main loop never sleeps in SDL: pygame's
event.wait naps 1 ms at a time in C, which costs about 1 % of a core at idle and keeps
Python's signal handlers from running. The loop sleeps on its Inbox and its sources
instead, under X11 on the X server's connection too (`events_fd`, x11.py), and calls
`take_events` when it wakes.
"""

import os

import pygame

from referee.buttons import QUIT_KEY
from referee.errors import ScreenUnavailable
from referee.inbox import Inbox, Quit
from referee.units import SMALLEST_SCREEN
from referee.view import View

from . import captions
from .canvas import Canvas
from .screens import draw_screen
from .style import BACKGROUND
from .x11 import x_connection

__all__ = ["ScreenUnavailable", "Window", "render"]

DEFAULT_SIZE = (1280, 720)
# Of the desktop's width and height, what a window may take: the rest for its title bar
# and the desktop's own panels.
DESKTOP_SHARE = 0.9
HEADLESS_DRIVERS = ("offscreen", "dummy")
# The events take_events() acts on; the rest (mouse, text input...) are dropped by SDL.
_WANTED = (
    pygame.QUIT,
    pygame.KEYDOWN,
    pygame.KEYUP,
    pygame.WINDOWEXPOSED,
    pygame.WINDOWSIZECHANGED,
)


def render(surface: pygame.Surface, view: View) -> None:
    """Draw the whole screen for the view on the surface, whatever its size. Smaller than
    the smallest laid out (a window shrunk by hand; the console refuses such a screen),
    the picture is laid out at that size and shrunk to the surface, its shape kept:
    smaller text, but none of it cut off."""
    width, height = surface.get_size()
    smallest_width, smallest_height = SMALLEST_SCREEN
    if width >= smallest_width and height >= smallest_height:
        draw_screen(Canvas(surface), view)
        return
    scale = min(width / smallest_width, height / smallest_height)
    laid_out = pygame.Surface(SMALLEST_SCREEN, 0, surface)
    draw_screen(Canvas(laid_out), view)
    shrunk = pygame.transform.smoothscale(
        laid_out, (round(smallest_width * scale), round(smallest_height * scale))
    )
    surface.fill(BACKGROUND)
    surface.blit(shrunk, shrunk.get_rect(center=surface.get_rect().center))


def frame_key(view: View, size: tuple[int, int]) -> tuple[object, ...]:
    """What the picture is drawn from: equal keys draw equal pictures."""
    return (
        size,
        view.settings,
        view.state,
        view.messages[-1:],
        view.notices,
        view.source,
        view.listening,
        view.watching,
        view.table,
        view.replay,
        view.names,
        view.join,  # the lobby's address and PIN: a new PIN, or the Wi-Fi come up
        captions.shown_clocks(view),
    )


def _within_desktop(size: tuple[int, int]) -> tuple[int, int]:
    """The size, made smaller where the desktop is, keeping its shape: the window with its
    title bar and the desktop's panels fits on the screen (the window manager centres it;
    a 1280x720 one on an 800x480 screen showed its middle only)."""
    width, height = size
    desk_width, desk_height = pygame.display.get_desktop_sizes()[0]
    scale = min(1.0, DESKTOP_SHARE * desk_width / width, DESKTOP_SHARE * desk_height / height)
    return round(width * scale), round(height * scale)


class Window:
    """A window on the desktop."""

    wake_ns = None  # shown again only when the picture changes (devices.Screen)

    def __init__(self, inbox: Inbox, *, size: tuple[int, int] | None = None) -> None:
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
        if self.driver == "x11":
            # Else SDL backs the window's surface with an OpenGL texture and loads Mesa for
            # it, LLVM included: 143 MB resident instead of 46 MB, for screens drawn in
            # software either way and shown as fast through shared memory.
            os.environ.setdefault("SDL_FRAMEBUFFER_ACCELERATION", "0")
        try:
            # A headless driver's desktop is made up: a test's window keeps its size.
            headless = self.driver in HEADLESS_DRIVERS
            size = size or DEFAULT_SIZE
            pygame.display.set_mode(size if headless else _within_desktop(size), pygame.RESIZABLE)
        except pygame.error as err:
            pygame.display.quit()
            raise ScreenUnavailable(f"cannot open the {self.driver} screen: {err}") from None
        self._x = x_connection(pygame.display.get_wm_info()) if self.driver == "x11" else None
        pygame.display.set_caption("referee")
        pygame.key.set_repeat()  # no emulated key repeat: a held key is one press
        pygame.event.set_blocked(None)
        pygame.event.set_allowed(_WANTED)
        self._quit_keys = {pygame.key.key_code(QUIT_KEY), pygame.K_ESCAPE}
        self._inbox = inbox
        self._last_key: tuple[object, ...] | None = None
        self.quit_requested = False
        self.frames = 0  # drawn so far

    def events_fd(self) -> int | None:
        """A descriptor that is readable when events come (the X server's connection), or
        None (SDL's Wayland driver; the tests' dummy one): then look now and then."""
        return None if self._x is None else self._x.fd

    def events_waiting(self) -> bool:
        """Events already read from that descriptor, not taken yet: no sleeping on them."""
        return (self._x is not None and self._x.queued()) or pygame.event.peek(pump=False)

    def take_events(self) -> list[tuple[str, bool]]:
        """Act on what SDL has queued: a closed window, `q` or Escape a Quit, an uncovered
        or resized window a redraw; the other keys are handed over as (name, down), in the
        order they came, for the keyboard input (inputs/keyboard.py, WindowKeys)."""
        keys = []
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                self._quit("the window was closed")
            elif event.type in (pygame.KEYDOWN, pygame.KEYUP):
                down = event.type == pygame.KEYDOWN
                if down and event.key in self._quit_keys:
                    self._quit(f"{pygame.key.name(event.key)} pressed")
                else:
                    keys.append((pygame.key.name(event.key), down))
            elif event.type in (pygame.WINDOWEXPOSED, pygame.WINDOWSIZECHANGED):
                self._last_key = None  # the window's pixels are gone or resized: redraw
        return keys

    def _quit(self, reason: str) -> None:
        self.quit_requested = True
        self._inbox.put(Quit(reason))

    def show(self, view: View) -> bool:
        """Draw the view, unless the screen already shows exactly this picture."""
        surface = pygame.display.get_surface()
        assert surface is not None, "show() after close()"
        key = frame_key(view, surface.get_size())
        if key == self._last_key:
            return False
        render(surface, view)
        pygame.display.flip()
        self._last_key = key
        self.frames += 1
        return True

    def close(self) -> None:
        self._x = None  # its connection closes with the display
        pygame.display.quit()

    def __enter__(self) -> "Window":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
