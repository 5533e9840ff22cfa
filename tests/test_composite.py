"""Several screens as one (outputs/composite.py): each is shown every view, the loop wakes
for the earliest, and every one is closed, whatever one of them does."""

import io

import pytest

from referee.outputs.composite import Screens
from referee.outputs.terminal import ALT_SCREEN_OFF, TerminalScreen
from referee.view import View
from tools import gallery

VIEWS = gallery.views()


class Shown:
    """A screen that notes what it is shown and closed; it draws what it is told to."""

    def __init__(self, name: str, closed: list[str], *, draws: bool = True, wake_ns=None):
        self.name, self.closed, self.draws, self.wake_ns = name, closed, draws, wake_ns
        self.views: list[View] = []

    def show(self, view: View) -> bool:
        self.views.append(view)
        return self.draws

    def close(self) -> None:
        self.closed.append(self.name)


class Stuck(Shown):
    def close(self) -> None:
        super().close()
        raise OSError("the card went away")


def test_every_screen_is_shown_the_view_and_any_drawing_counts():
    closed: list[str] = []
    first, second = Shown("a", closed, draws=True), Shown("b", closed, draws=False)
    screens = Screens([first, second])
    view = VIEWS["call"]
    assert screens.show(view)  # the first drew: the second is shown it all the same
    assert first.views == second.views == [view]
    first.draws = False
    assert not screens.show(view)  # neither drew: no frame, none held back
    second.draws = True
    assert screens.show(view)
    assert len(first.views) == len(second.views) == 3


def test_two_terminals_show_the_same_picture_and_redraw_only_what_changed():
    a, b = io.StringIO(), io.StringIO()
    screens = Screens([TerminalScreen(a, colour_on=False), TerminalScreen(b, colour_on=False)])
    assert screens.show(VIEWS["call"])
    assert a.getvalue() == b.getvalue() and "CALLING" in a.getvalue()
    assert not screens.show(VIEWS["call"])  # the same picture: neither draws
    assert screens.show(VIEWS["lobby"])
    assert a.getvalue() == b.getvalue()


def test_the_earliest_wake_of_any_screen_or_none():
    closed: list[str] = []
    assert Screens([Shown("a", closed), Shown("b", closed)]).wake_ns is None
    later, sooner = Shown("a", closed, wake_ns=2_000), Shown("b", closed, wake_ns=1_000)
    screens = Screens([later, Shown("c", closed), sooner])
    assert screens.wake_ns == 1_000
    sooner.wake_ns = None  # its screen is back: it wakes nobody
    assert screens.wake_ns == 2_000


def test_every_screen_is_closed_the_last_opened_first():
    closed: list[str] = []
    Screens([Shown("window", closed), Shown("terminal", closed)]).close()
    assert closed == ["terminal", "window"]


def test_a_screen_that_fails_to_close_leaves_none_open_and_says_so():
    closed: list[str] = []
    terminal = io.StringIO()
    screens = Screens([Shown("window", closed), TerminalScreen(terminal), Stuck("kms", closed)])
    with pytest.raises(OSError, match="the card went away"):
        screens.close()
    # The terminal given back, the window closed, though the card failed first.
    assert terminal.getvalue().endswith(ALT_SCREEN_OFF)
    assert closed == ["kms", "window"]
