"""`referee run` on a console without a desktop: the screen through KMS dumb buffers and the
keys from evdev, played in-process. The card is tests/fake_drm.py's (the ioctl boundary),
the keyboard a pipe carrying the kernel's input_event records."""

import io
import logging
import os
import re
from dataclasses import replace

import pygame
import pytest

from referee.cli import main
from referee.config import default_config
from referee.daemon.app import App, RunOptions
from referee.errors import ScreenUnavailable
from referee.inputs.console_keys import ConsoleKeys, Keyboard, open_console_keys
from referee.outputs import kms
from referee.outputs.display import render
from referee.outputs.kms_screen import MASTER_RETRY_NS
from referee.outputs.sound import call_out
from referee.outputs.terminal import ALT_SCREEN_OFF
from referee.store.store import Store

from .fake_drm import FakeCard
from .fake_evdev import Devices, key, plug


@pytest.fixture
def console(monkeypatch):
    """A Pi's console: one card with HDMI connected, one keyboard (where to write its keys)."""
    card = FakeCard()
    read, write = os.pipe()
    os.set_blocking(read, False)
    monkeypatch.setattr("referee.daemon.devices.drm_cards", lambda: [card.path])
    find = kms.find_output

    def on_this_card(wanted, paths=None):
        return find(wanted, paths or [card.path], {card.path: card}.__getitem__)

    monkeypatch.setattr(kms, "find_output", on_this_card)
    monkeypatch.setattr(
        "referee.daemon.devices.open_console_keys",
        lambda clock: ConsoleKeys([Keyboard(read, "USB Keyboard", "/dev/input/event0")], clock),
    )
    yield card, write
    os.close(write)


def typed(write: int, keys: str, t_ns: int) -> None:
    for n, name in enumerate(keys):
        t = t_ns + n * 200_000_000
        os.write(write, key(name, 1, t) + key(name, 0, t))


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


def shows(card: FakeCard, view) -> bool:
    expected = pygame.Surface((1280, 720))
    render(expected, view)
    return card.scanout() == bytes(expected.get_buffer())


def test_the_game_goes_on_while_another_program_has_the_screen(console, tmp_path, caplog):
    """Decisions, beeps and the ledger as ever; the screen asked for once a second (the
    loop's wait wakes for it), and the game of the moment drawn when it is given back."""
    card, write = console
    config = default_config()
    config = replace(config, buttons=replace(config.buttons, debounce_ns=1))
    clock = Clock()
    app = App(RunOptions(config, tmp_path / "referee.db", "keyboard", "auto"), clock=clock)
    played: list = []
    app.speaker.play = played.append  # type: ignore[method-assign]
    app.present(app.view())
    card.taken()  # a VT switch, a desktop started by hand
    typed(write, "12s2", clock.now + 1_000_000)
    clock.now += 2 * 10**9
    with caplog.at_level(logging.WARNING):
        for item in app.inputs.wait(0):
            app._take(item)
        app.step(clock.now)
        app.present(app.view())  # refused by the card: nothing raised
    state = app.session.state
    assert state.pending is not None and state.pending.callers == (2,)
    assert played[-1] == call_out(2) and card.shown_fb() == 1
    assert "another program has the screen" in caplog.text
    # Nothing else due but the point-out timer's seconds and the screen's next ask.
    assert app.screen is not None and app.screen.wake_ns == clock.now + MASTER_RETRY_NS
    timeout = app._timeout(clock.now, app.view())
    assert timeout is not None and 0 < timeout <= MASTER_RETRY_NS / 10**9
    card.given_back()
    clock.now += MASTER_RETRY_NS
    view = app.view()
    app.present(view)
    assert card.master and shows(card, view)
    assert app.session.ledger.flush()
    app.close()
    with Store.open_readonly(tmp_path / "referee.db") as store:
        game = store.latest_game()
    assert game is not None and len(game.inputs) == 4  # two joined, SUPER, P2's call


def test_a_keyboard_pulled_out_is_a_notice_until_one_is_plugged_in(console, tmp_path, monkeypatch):
    folder = tmp_path / "input"
    folder.mkdir()
    devices = Devices({f"{folder}/event0": "Old", f"{folder}/event1": "New"})
    old = plug(folder, "event0")
    monkeypatch.setattr(
        "referee.daemon.devices.open_console_keys",
        lambda clock: open_console_keys(folder, clock, devices),
    )
    clock = Clock()
    app = App(
        RunOptions(default_config(), tmp_path / "referee.db", "keyboard", "auto"), clock=clock
    )
    try:
        os.close(old)
        for item in app.inputs.wait(0):
            app._take(item)
        assert [n.text for n in app.notices()] == ["the keyboard Old went away (0 left)"]
        new = plug(folder, "event1")
        for item in app.inputs.wait(5):  # woken by the keyboard plugged in
            app._take(item)
        assert app.notices() == ()
        assert app.messages[-1] == "the keyboard New is plugged in (1 in all)"
        typed(new, "1", clock.now - 50_000_000)
        for item in app.inputs.wait(5):
            app._take(item)
        app.step(clock.now + 100_000_000)
        assert [p.id for p in app.session.state.players] == [1]
        os.close(new)
    finally:
        app.close()


def test_the_consoles_screen_and_the_terminal_show_the_same_game(console, tmp_path):
    """`--display kms+terminal`: the keys are the console's, the terminal is the stdout's,
    and it shows every view too, the game going on there while another program has the
    console's screen."""
    card, write = console
    config = default_config()
    config = replace(config, buttons=replace(config.buttons, debounce_ns=1))
    clock = Clock()
    terminal = io.StringIO()
    options = RunOptions(config, tmp_path / "referee.db", "keyboard", "terminal+kms")
    app = App(options, clock=clock, stdout=terminal)
    try:
        assert app.display == "kms+terminal" and app.inputs.name == "keyboard (console)"
        assert app.shown_as == "kms (card0 1280x720) + terminal"
        typed(write, "12s2", clock.now + 1_000_000)
        clock.now += 2 * 10**9
        for item in app.inputs.wait(0):
            app._take(item)
        app.step(clock.now)
        view = app.view()
        app.present(view)
        assert shows(card, view) and "[CALLING]" in plain(terminal.getvalue())
        card.taken()  # a VT switch: the console's screen is another program's
        typed(write, "v", clock.now + 1_000_000)
        clock.now += 10**9
        for item in app.inputs.wait(0):
            app._take(item)
        app.step(clock.now)
        drawn = len(terminal.getvalue())
        app.present(app.view())
        assert "> P2 SET! (+1)" in plain(terminal.getvalue()[drawn:])  # on the terminal
        assert card.shown_fb() == 1  # not on the screen: the other program's picture
        # The loop wakes to ask for the screen back, though the terminal has it all.
        assert app.screen is not None and app.screen.wake_ns == clock.now + MASTER_RETRY_NS
    finally:
        app.close()
    assert card.closed and terminal.getvalue().endswith(ALT_SCREEN_OFF)


def test_a_consoles_screen_that_cannot_open_beside_a_window_closes_the_window(console, tmp_path):
    card, _ = console
    card.other_master = True  # a desktop holds the screen
    options = RunOptions(default_config(), tmp_path / "referee.db", "serial:/dev/no", "window+kms")
    with pytest.raises(ScreenUnavailable) as raised:
        App(options)
    said = str(raised.value)
    assert said.startswith("--display kms: /dev/dri/card0: busy: another program") and (
        "\n" not in said
    )
    assert not pygame.display.get_init() and card.closed  # the window opened first: closed


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
