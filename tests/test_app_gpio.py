"""referee run on GPIO, through gpiozero's MockFactory: pins in, LEDs and beeper out."""

from dataclasses import replace

import pytest
from gpiozero import Device, DigitalInputDevice
from gpiozero.pins.mock import MockFactory, MockPWMPin

from referee.app import App, RunOptions
from referee.config import default_config
from referee.outputs.lights import ShiftRegisterLeds
from referee.outputs.sound import BeeperSpeaker
from referee.rules import Phase

MS = 1_000_000


@pytest.fixture
def factory():
    Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    yield Device.pin_factory
    Device.pin_factory.close()
    Device.pin_factory = None


def press(app: App, factory, button: str) -> None:
    pin = factory.pin(app.options.config.pins[button])
    pin.drive_low()
    pin.drive_high()
    edges = app.inbox.get(1.0)  # the callback thread puts them there
    edges += app.inbox.drain()
    for edge in edges:
        app._take(edge)
    app.step(max(e.t_ns for e in edges) + app.timing.settle_ns + app.timing.debounce_ns)


def test_a_game_on_gpio_with_its_leds_and_beeper(factory, tmp_path):
    config = default_config()
    # The mock's edges come microseconds apart, faster than a buzzer could be pressed twice.
    config = replace(config, buttons=replace(config.buttons, debounce_ns=1))
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"))
    try:
        assert app.source.name.startswith("GPIO (mock")
        assert isinstance(app.lights, ShiftRegisterLeds)
        assert isinstance(app.speaker, BeeperSpeaker)
        app.source.start(app.inbox)
        for button in ("P1", "P2", "SUPER", "P2"):
            press(app, factory, button)
        assert app.session.state.phase is Phase.CALL
        assert app.session.state.pending is not None
        assert app.session.state.pending.callers == (2,)
        data = factory.pin(app.options.config.leds.data)
        app.present(app.view())
        assert len(data.states) > 1  # the shift register was written
    finally:
        app.close()


def test_a_button_down_at_start_is_stuck_not_pressed(factory, tmp_path):
    config = default_config()
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"))
    # Held low against the pull-up (wired to the NC lug, say). A mock pin held low before
    # it was opened would be pulled up by the opening, so it is driven low after.
    factory.pin(config.pins["UNDO"]).drive_low()
    try:
        for button in app.source.held_at_start():
            app.arbiter.held_at_start(button, app.clock())
        assert app.arbiter.stuck == ("UNDO",)
        app.step(app.clock() + 5_000 * MS)  # held well past the end-of-game hold
        assert app.session.state.phase is Phase.LOBBY  # UNDO held at start ended nothing
        assert [n.text for n in app.notices()] == ["UNDO is held down: ignored until released"]
    finally:
        app.close()


def test_only_the_seats_in_play_take_their_pins(factory, tmp_path):
    """A HAT screen's touch controller holds P8's pin: with 7 players the box still starts."""
    config = default_config()
    config = replace(config, rules=replace(config.rules, players=7))
    touch = DigitalInputDevice(config.pins["P8"])  # someone else has it
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"))
    try:
        assert "P8" not in app.source._pins and "P7" in app.source._pins
    finally:
        app.close()
        touch.close()
