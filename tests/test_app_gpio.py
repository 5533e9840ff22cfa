"""referee run on GPIO: a fake line request in, gpiozero's MockFactory for the LEDs and beeper."""

from dataclasses import replace

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from referee.config import default_config
from referee.daemon.app import App, RunOptions
from referee.inputs import gpio
from referee.inputs.gpio import IRQ_BOUND_NS
from referee.outputs.lights import ShiftRegisterLeds
from referee.outputs.sound import BeeperSpeaker
from referee.rules import Phase
from tests.fake_gpio import FakeRequest

MS = 1_000_000


@pytest.fixture
def factory():
    Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    yield Device.pin_factory
    Device.pin_factory.close()
    Device.pin_factory = None


@pytest.fixture
def requests(monkeypatch):
    """Every line request the box makes, fake; the chip found as a Pi's would be."""
    made: list[FakeRequest] = []
    low: set[int] = set()

    def request(chip, offsets):
        made.append(FakeRequest(offsets, low))
        return made[-1]

    monkeypatch.setattr(gpio, "find_chip", lambda: gpio.DEV / "gpiochip0")
    monkeypatch.setattr(gpio, "request_buttons", request)
    return made, low


def offset(app: App, button: str) -> int:
    return int(app.options.config.pins[button].removeprefix("GPIO"))


def press(app: App, request: FakeRequest, button: str, t_ns: int) -> None:
    request.feed.press(offset(app, button), t_ns)
    request.feed.release(offset(app, button), t_ns + 80 * MS)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000 * MS

    def __call__(self) -> int:
        return self.now


def read_at(app: App, clock: Clock, t_ns: int) -> None:
    """The loop's pass at t_ns: read every source, then decide."""
    clock.now = t_ns
    for item in app.inputs.read():
        app._take(item)
    app.step(t_ns)


def test_a_game_on_gpio_with_its_leds_and_beeper(factory, requests, tmp_path):
    clock = Clock()
    app = App(RunOptions(default_config(), tmp_path / "referee.db", "gpio", "none"), clock=clock)
    try:
        [request] = requests[0]
        assert app.inputs.name == "GPIO (kernel edge times)"
        assert isinstance(app.lights, ShiftRegisterLeds)
        assert isinstance(app.speaker, BeeperSpeaker)
        t = clock.now
        for button in ("P1", "P2", "SUPER"):
            t += 200 * MS
            press(app, request, button, t)
            read_at(app, clock, t + 100 * MS)
        assert app.session.state.phase is Phase.OPEN
        # The later press is queued first: the kernel's stamps decide, not the order.
        first = t + 300 * MS
        seqno = request.feed.seqno  # the kernel numbers edges as they happen
        request.feed.edge(offset(app, "P2"), first + 200_000, falling=True, seqno=seqno + 2)
        request.feed.edge(offset(app, "P1"), first, falling=True, seqno=seqno + 1)
        tie = app.session.settings.tie_ns
        read_at(app, clock, first + tie + IRQ_BOUND_NS - 1)
        assert app.session.state.phase is Phase.OPEN  # the watermark is not past P1's tie
        read_at(app, clock, first + tie + IRQ_BOUND_NS)
        call = app.session.state.pending
        assert call is not None and [p for p, _ in call.presses] == [1]
        read_at(app, clock, first + 200_000 + tie + IRQ_BOUND_NS)
        call = app.session.state.pending
        assert call is not None and call.callers == (1,)
        assert [p for p, _ in call.presses] == [1, 2]
        data = factory.pin(app.options.config.leds.data)
        app.present(app.view())
        assert len(data.states) > 1  # the shift register was written
    finally:
        app.close()


def test_a_button_down_at_start_is_stuck_not_pressed(factory, requests, tmp_path):
    config = default_config()
    requests[1].add(int(config.pins["UNDO"].removeprefix("GPIO")))  # wired to the NC lug, say
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"))
    try:
        for button in app.inputs.held_at_start():
            app.arbiter.held_at_start(button, app.clock())
        assert app.arbiter.stuck == ("UNDO",)
        requests[0][0].feed.edge(offset(app, "UNDO"), app.clock() + 5_000 * MS, falling=True)
        app.inputs.read()
        app.step(app.clock() + 6_000 * MS)  # held well past the end-of-game hold
        assert app.session.state.phase is Phase.LOBBY  # UNDO held at start ended nothing
        assert [n.text for n in app.notices()] == ["UNDO is held down: ignored until released"]
    finally:
        app.close()


def test_only_the_seats_in_play_take_their_pins(factory, requests, tmp_path):
    """A HAT screen's touch controller holds P8's pin: with 7 players the box still starts."""
    config = default_config()
    config = replace(config, game=replace(config.game, players=7))
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"))
    try:
        [request] = requests[0]
        assert offset(app, "P8") not in request.offsets
        assert offset(app, "P7") in request.offsets
    finally:
        app.close()


def test_a_verdict_stamped_before_the_deadline_wins_however_late_it_is_read(
    factory, requests, tmp_path
):
    """pointout_s = 2: P1 calls; the box stalls from +1 s to +3.2 s; VALID was pressed at
    +1.5 s. Read after the deadline, it is still decided before it: the SET is valid."""
    clock = Clock()
    config = default_config()
    config = replace(config, game=replace(config.game, players=2, pointout_ns=2_000 * MS))
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"), clock=clock)
    try:
        [request] = requests[0]
        t = clock.now
        for button in ("P1", "P2", "SUPER"):
            t += 200 * MS
            press(app, request, button, t)
            read_at(app, clock, t + 100 * MS)
        call = t + 1_000 * MS
        press(app, request, "P1", call)
        read_at(app, clock, call + 2 * MS)
        assert app.session.state.phase is Phase.CALL
        read_at(app, clock, call + 1_000 * MS)  # the last pass before the stall
        press(app, request, "VALID", call + 1_500 * MS)  # queued by the kernel meanwhile
        read_at(app, clock, call + 3_200 * MS)  # the stall ends, past the deadline
        assert [p.points for p in app.session.state.players] == [1, 0]
        assert app.session.state.calls[-1].verdicts == ("valid",)
    finally:
        app.close()


def test_the_replay_button_replays_and_is_no_input_of_the_rules(factory, requests, tmp_path):
    clock = Clock()
    app = App(RunOptions(default_config(), tmp_path / "referee.db", "gpio", "none"), clock=clock)
    try:
        [request] = requests[0]
        assert offset(app, "REPLAY") in request.offsets
        before = app.session.state
        press(app, request, "REPLAY", clock.now + 100 * MS)
        read_at(app, clock, clock.now + 300 * MS)
        assert app.messages[-1] == "no microphone: nothing to replay"  # a REPLAY, heard
        assert app.session.state is before  # the game untouched
        assert app.session.ledger.pending == 0  # and nothing for the ledger
    finally:
        app.close()


def test_a_box_without_the_replay_button_leaves_its_pin_alone(factory, requests, tmp_path):
    config = default_config()
    pin = config.pins["REPLAY"]
    config = replace(config, pins={b: p for b, p in config.pins.items() if b != "REPLAY"})
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"))
    try:
        [request] = requests[0]
        assert int(pin.removeprefix("GPIO")) not in request.offsets
        assert "REPLAY" not in app.inputs.sources[0].buttons
    finally:
        app.close()


def test_a_replay_pin_held_low_at_start_is_stuck_not_a_replay(factory, requests, tmp_path):
    """A short on the pin, or a button wired to NC: no replay, ever, until it is let go."""
    config = default_config()
    requests[1].add(int(config.pins["REPLAY"].removeprefix("GPIO")))
    clock = Clock()
    app = App(RunOptions(config, tmp_path / "referee.db", "gpio", "none"), clock=clock)
    try:
        for button in app.inputs.held_at_start():
            app.arbiter.held_at_start(button, clock.now)
        read_at(app, clock, clock.now + 5_000 * MS)
        assert app.arbiter.stuck == ("REPLAY",)
        assert not any("replay" in m for m in app.messages)
    finally:
        app.close()
