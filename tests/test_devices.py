"""daemon/devices.py, the one place that opens the box's outputs: several displays joined by `+`
(`--display window+terminal`), each opened as alone, or the box does not start."""

import io
import os
from pathlib import Path

import pygame
import pytest

from referee.config import default_config
from referee.daemon.devices import (
    check_openable,
    joined_displays,
    keyboard_display,
    open_screen,
    pick_display,
)
from referee.errors import ScreenUnavailable, StartError
from referee.inbox import Inbox
from referee.outputs.composite import Screens
from referee.outputs.display import Window
from referee.outputs.terminal import ALT_SCREEN_OFF, ALT_SCREEN_ON, TerminalScreen
from tools import gallery

SIZE = default_config().display  # 0 by 0: the window's own size


def test_several_displays_open_in_an_order_of_their_own():
    """Those that may fail first: the terminal is never taken over for nothing."""
    assert joined_displays("terminal+window") == ["window", "terminal"]
    assert joined_displays("terminal+kms:/dev/dri/card1") == ["kms:/dev/dri/card1", "terminal"]
    assert joined_displays("terminal+kms+window") == ["window", "kms", "terminal"]
    assert pick_display("terminal+window", {}, []) == ["window+terminal"]


def test_a_single_display_is_picked_as_ever(monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert pick_display("kms:/dev/dri/card1", {}, []) == ["kms:/dev/dri/card1"]
    assert pick_display("none", {}, []) == ["none"]
    assert pick_display("auto", {"DISPLAY": ":0"}, []) == ["window", "terminal", "none"]
    assert pick_display("auto", {}, ["/dev/dri/card0"]) == ["kms", "terminal", "none"]


@pytest.mark.parametrize(
    ("requested", "said"),
    [
        ("none+terminal", "--display none+terminal: none shows nothing: it joins no other"),
        ("terminal+none", "--display terminal+none: none shows nothing: it joins no other"),
        ("auto+window", "--display auto+window: auto picks one display: it joins no other"),
        ("window+window", "--display window+window: one window at most: its keys and events"),
        (
            "window+terminal+window",
            "--display window+terminal+window: one window at most: its keys and events",
        ),
        ("terminal+terminal", "--display terminal+terminal: terminal twice: each display once"),
        (
            "kms:/dev/dri/card0+kms:/dev/dri/card1",
            "--display kms:/dev/dri/card0+kms:/dev/dri/card1: kms twice: each display once",
        ),
        ("kms+", "--display kms+: '' is no display: join window, kms[:CARD] and terminal"),
        ("kms+tv", "--display kms+tv: 'tv' is no display: join window, kms[:CARD] and terminal"),
    ],
)
def test_a_combination_that_cannot_be_is_one_line(requested, said):
    with pytest.raises(StartError) as raised:
        pick_display(requested, {}, [])
    assert str(raised.value).startswith(said)
    assert "\n" not in str(raised.value)


def test_the_keyboard_is_the_windows_else_the_consoles_else_the_terminals():
    assert keyboard_display("window+terminal") == "window"
    assert keyboard_display("kms+terminal") == "kms"
    assert keyboard_display("kms:/dev/dri/card1") == "kms"
    assert keyboard_display("terminal") == "terminal"
    assert keyboard_display("none") is None


def test_each_display_joined_is_checked_as_alone(monkeypatch):
    with pytest.raises(StartError) as raised:
        check_openable("serial", ["kms:/dev/dri/card99+terminal"])
    assert str(raised.value) == (
        "--display kms:/dev/dri/card99: no such card /dev/dri/card99: use --display terminal"
        " or none"
    )
    with pytest.raises(StartError, match=r"^--display kms: no DRM card"):
        check_openable("serial", ["window+kms+terminal"], cards=[])
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(StartError, match=r"^--display window: no desktop here"):
        check_openable("serial", ["window+terminal"])


def test_the_keyboard_beside_a_terminal_need_not_be_the_terminals():
    """Keys from the window or the console: standard input may be anything."""
    with Path(os.devnull).open() as null:
        check_openable("keyboard", ["window+terminal"], null.fileno())
        check_openable("keyboard", ["kms+terminal"], null.fileno(), cards=["/dev/dri/card0"])
        with pytest.raises(StartError, match="reads keys from a terminal: standard input is"):
            check_openable("keyboard", ["terminal"], null.fileno())


def test_a_window_and_the_terminal_open_together_and_each_shows_every_view():
    stdout = io.StringIO()
    shown = open_screen(pick_display("terminal+window"), Inbox(), SIZE, stdout)
    try:
        assert shown.kind == "window+terminal" and shown.name == "window (dummy) + terminal"
        assert isinstance(shown.window, Window) and pygame.display.get_init()
        assert isinstance(shown.screen, Screens)
        window, terminal = shown.screen.screens
        assert window is shown.window and isinstance(terminal, TerminalScreen)
        assert stdout.getvalue() == ALT_SCREEN_ON  # the terminal is the stdout's
        assert shown.screen.wake_ns is None
        assert shown.screen.show(gallery.views()["call"])
        assert shown.window.frames == 1 and "CALLING" in stdout.getvalue()
        assert not shown.screen.show(gallery.views()["call"])
    finally:
        assert shown.screen is not None
        shown.screen.close()
    assert not pygame.display.get_init()  # the window closed
    assert stdout.getvalue().endswith(ALT_SCREEN_OFF)  # and the terminal given back


def test_a_window_that_cannot_open_is_one_line_and_the_terminal_untouched(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "no-such-driver")
    stdout = io.StringIO()
    with pytest.raises(ScreenUnavailable) as raised:
        open_screen(pick_display("terminal+window"), Inbox(), SIZE, stdout)
    said = str(raised.value)
    assert said.startswith("--display window: no screen to open (SDL: ") and "\n" not in said
    assert stdout.getvalue() == ""
