"""Several screens shown as one: `--display window+terminal` draws every view on each.

The main loop holds one screen (daemon/app.py's `self.screen`); `Screens` is one too, so the
loop neither knows nor cares how many there are. daemon/devices.py opens them (`open_screen`);
the phones are not among them: the page's own process serves them from the store
(docs/design.md, "The page").
"""

import contextlib
from collections.abc import Sequence
from typing import Protocol

from referee.view import View


class Screen(Protocol):
    def show(self, view: View) -> bool:
        """Draw the view; False when the screen already showed exactly this."""
        ...

    @property
    def wake_ns(self) -> int | None:
        """When to be shown the view again though it has not changed (the console's
        screen, to ask for itself back); None: only when it changes."""
        ...

    def close(self) -> None: ...


class Screens:
    """Every one of several screens, as one screen (devices.Screen)."""

    def __init__(self, screens: Sequence[Screen]) -> None:
        self.screens = tuple(screens)

    def show(self, view: View) -> bool:
        """The view on every screen; whether any of them drew it (each draws only what it
        does not show already, so one may draw while another has nothing new)."""
        drawn = [screen.show(view) for screen in self.screens]  # each, none skipped
        return any(drawn)

    @property
    def wake_ns(self) -> int | None:
        """The earliest any of them wants to be shown the view again; None if none does."""
        return min((t for s in self.screens if (t := s.wake_ns) is not None), default=None)

    def close(self) -> None:
        """Close every one, the last opened first, even if one fails to close: the
        terminal is given back whatever the window does. The failure is raised after."""
        with contextlib.ExitStack() as closing:
            for screen in self.screens:
                closing.callback(screen.close)
