"""`referee run` on a console without a desktop: the screen through KMS dumb buffers and the
keys from evdev, played in-process. The card is tests/fake_drm.py's (the ioctl boundary),
the keyboard a pipe carrying the kernel's input_event records."""

import logging
import os
from dataclasses import replace

import pygame
import pytest

from referee.app import App, RunOptions
from referee.cli import main
from referee.config import default_config
from referee.inputs.console_keys import EV_KEY, EVENT, Keyboard
from referee.outputs import kms
from referee.outputs.display import render

from .fake_drm import FakeCard

CODES = {"1": 2, "2": 3, "s": 31, "q": 16}


@pytest.fixture
def console(monkeypatch):
    """A Pi's console: one card with HDMI connected, one keyboard (where to write its keys)."""
    card = FakeCard()
    read, write = os.pipe()
    os.set_blocking(read, False)
    monkeypatch.setattr("referee.devices.drm_cards", lambda: [card.path])
    find = kms.find_output

    def on_this_card(wanted, paths=None):
        return find(wanted, paths or [card.path], {card.path: card}.__getitem__)

    monkeypatch.setattr(kms, "find_output", on_this_card)
    monkeypatch.setattr(
        "referee.devices.open_keyboards",
        lambda: [Keyboard(read, "USB Keyboard", "/dev/input/event0")],
    )
    yield card, write
    os.close(write)


def typed(write: int, keys: str, t_ns: int) -> None:
    for n, key in enumerate(keys):
        t = t_ns + n * 200_000_000
        for value in (1, 0):
            os.write(write, EVENT.pack(t // 10**9, t % 10**9 // 1000, EV_KEY, CODES[key], value))


class Clock:
    def __init__(self) -> None:
        self.now = 1_000 * 10**9

    def __call__(self) -> int:
        return self.now


def test_a_game_on_the_console_is_shown_through_kms_and_played_with_its_keys(
    console, tmp_path, caplog
):
    card, write = console
    config = default_config()
    config = replace(config, buttons=replace(config.buttons, debounce_ns=1))
    clock = Clock()
    app = App(RunOptions(config, tmp_path / "referee.db", "keyboard", "auto"), clock=clock)
    assert app.display == "kms" and app.inputs.name == "keyboard (console)"
    assert not app._window_polled  # the keys wake the loop: nothing is polled
    # Two join, SUPER starts the game, P2 calls: at the kernel's stamps, read 2 s later.
    typed(write, "12s2", clock.now + 1_000_000)
    clock.now += 2 * 10**9
    for item in app.inputs.wait(0):
        app._take(item)
    app.step(clock.now)
    state = app.session.state
    assert state.pending is not None and state.pending.callers == (2,)
    view = app.view()
    app.present(view)
    expected = pygame.Surface((1280, 720))
    render(expected, view)
    assert card.scanout() == bytes(expected.get_buffer())

    typed(write, "q", clock.now)
    with caplog.at_level(logging.INFO, logger="referee"):
        assert app.run() == 0
    assert "input keyboard (console), display kms (card0 1280x720)" in caplog.text
    assert "stopping: q pressed" in caplog.text
    # Back to the console's text when the referee stops, and the card left to others.
    assert card.shown_fb() == 1 and card.closed and not card.master and card.dumbs == {}


def test_auto_falls_back_to_the_next_display_when_the_card_is_busy(console, tmp_path, caplog):
    card, _ = console
    card.other_master = True  # a desktop holds the screen
    options = RunOptions(default_config(), tmp_path / "referee.db", "serial:/dev/ttyACM9", "auto")
    with caplog.at_level(logging.WARNING):
        app = App(options)
    app.close()
    assert app.display == "none" and card.closed
    assert "/dev/dri/card0: busy: another program" in caplog.text
    assert "trying the none instead" in caplog.text


def test_a_display_named_wrong_is_refused_by_the_command_line(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--display", "window:/dev/dri/card0"])
    assert "'window:/dev/dri/card0': use auto, window, kms, kms:/dev/dri/cardN" in (
        capsys.readouterr().err
    )
