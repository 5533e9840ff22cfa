"""GPIO buttons through gpiozero's MockFactory; tests/gpio_rig/ runs the same class on a kernel."""

import gc
import logging
import os
import subprocess
import sys

import pytest
from gpiozero import LED, Button, Device
from gpiozero.pins.mock import MockFactory, MockPin
from gpiozero.pins.pi import PiFactory
from hypothesis import given
from hypothesis import strategies as st

from referee.edges import Edge, Inbox
from referee.inputs import gpio
from referee.inputs.gpio import GpioButtons, GpioError, pin_factory_info

PINS = {"P1": "GPIO17", "P2": "GPIO27", "VALID": "GPIO16"}
RESOLUTION_NS = 100_000


class TimedPin(MockPin):
    """A MockPin whose edges carry a chosen time, as lgpio's carry the kernel's.

    MockPin stamps an edge with time.monotonic() when drive_low() runs; the arbiter's
    cases need edges delivered late and out of order, with times of our choosing.
    """

    def edge_at(self, ticks: float, *, high: bool) -> None:
        self._state = high
        self._last_change = ticks
        if self._when_changed is not None:
            self._call_when_changed()  # MockPin hands on (_last_change, _state)


class StickyPin(TimedPin):
    """A pin lgpio is slow to stop watching: "GPIO busy" the first `busy` times."""

    busy = 0

    def _disable_event_detect(self) -> None:
        if self.busy:
            self.busy -= 1
            raise RuntimeError("GPIO busy")  # the text of lgpio.error


class LGPIOFactory(MockFactory):
    """Mock pins behind a factory that passes for gpiozero's lgpio one (as the rig's does)."""


LGPIOFactory.__module__ = "gpiozero.pins.lgpio"


class RemoteFactory(PiFactory):
    """A factory whose ticks are not on this computer's clock (pigpio's, say)."""


@pytest.fixture
def factory():
    with MockFactory(pin_class=TimedPin) as f:
        yield f


@pytest.fixture
def buttons(factory):
    source = GpioButtons(PINS, RESOLUTION_NS, factory=factory)
    yield source
    source.close()


def test_edges_keep_their_own_times_whatever_order_they_arrive_in(factory, buttons):
    inbox = Inbox()
    buttons.start(inbox)
    p1, p2, valid = (factory.pin(PINS[b]) for b in ("P1", "P2", "VALID"))
    p2.edge_at(1000.000_300, high=False)  # reaches Python first, pressed second
    p1.edge_at(1000.000_100, high=False)
    p1.edge_at(1000.000_150, high=True)  # a bounce: passed on, not filtered
    p1.edge_at(1000.000_190, high=False)
    valid.edge_at(1001.5, high=False)
    assert inbox.get(timeout_s=1) == [
        Edge("P2", 1_000_000_300_000, down=True),
        Edge("P1", 1_000_000_100_000, down=True),
        Edge("P1", 1_000_000_150_000, down=False),
        Edge("P1", 1_000_000_190_000, down=True),
        Edge("VALID", 1_001_500_000_000, down=True),
    ]


@given(kernel_ns=st.integers(min_value=0, max_value=2**51 - 1))
def test_kernel_nanoseconds_survive_gpiozeros_float_seconds(kernel_ns):
    # gpiozero's lgpio pin hands on timestamp_ns / 1e9; 2**51 ns is 26 days of uptime.
    with MockFactory(pin_class=TimedPin) as factory:
        source = GpioButtons({"P1": "GPIO17"}, RESOLUTION_NS, factory=factory)
        inbox = Inbox()
        source.start(inbox)
        factory.pin("GPIO17").edge_at(kernel_ns / 1_000_000_000, high=False)
        source.close()
    assert inbox.get(timeout_s=1) == [Edge("P1", kernel_ns, down=True)]


def test_edges_keep_coming_after_garbage_collection(factory, buttons):
    inbox = Inbox()
    buttons.start(inbox)
    gc.collect()
    factory.pin("GPIO17").edge_at(5.0, high=False)
    assert inbox.get(timeout_s=1) == [Edge("P1", 5_000_000_000, down=True)]


def test_pins_are_pulled_up_inputs_that_pass_on_every_edge(factory):
    for name in PINS.values():  # as a previous user might leave them
        pin = factory.pin(name)
        pin.function, pin.pull, pin.bounce, pin.edges = "input", "down", 0.05, "falling"
    buttons = GpioButtons(PINS, RESOLUTION_NS, factory=factory)
    for name in PINS.values():
        pin = factory.pin(name)
        assert (pin.function, pin.pull, pin.bounce, pin.edges) == ("input", "up", None, "both")
        assert pin.state, "released, the pull-up holds the pin high"
        assert pin.when_changed is None, "no edges before start()"
    buttons.start(Inbox())
    assert all(factory.pin(name).when_changed is not None for name in PINS.values())
    buttons.close()


def test_close_stops_the_edges_and_frees_the_pins(factory, buttons):
    inbox = Inbox()
    buttons.start(inbox)
    with pytest.raises(GpioError):
        GpioButtons({"P4": "GPIO17"}, RESOLUTION_NS, factory=factory)
    buttons.close()
    pin = factory.pin("GPIO17")
    assert pin.when_changed is None
    pin.edge_at(7.0, high=False)
    assert inbox.drain() == []
    Button("GPIO17", pin_factory=factory).close()
    again = GpioButtons(PINS, RESOLUTION_NS, factory=factory)
    again.start(inbox)
    pin.edge_at(8.0, high=True)
    assert inbox.get(timeout_s=1) == [Edge("P1", 8_000_000_000, down=False)]
    again.close()


def test_close_waits_out_a_line_that_is_busy_for_a_moment():
    with MockFactory(pin_class=StickyPin) as factory:
        source = GpioButtons(PINS, RESOLUTION_NS, factory=factory)
        source.start(Inbox())
        factory.pin("GPIO17").busy = 3
        source.close()
        assert factory.pin("GPIO17").when_changed is None
        Button("GPIO17", pin_factory=factory).close()


def test_close_lets_go_of_the_rest_when_a_pin_stays_busy(monkeypatch, caplog):
    monkeypatch.setattr(gpio, "UNWATCH_PATIENCE_S", 0.01)
    with MockFactory(pin_class=StickyPin) as factory:
        source = GpioButtons(PINS, RESOLUTION_NS, factory=factory)
        source.start(Inbox())
        stuck = factory.pin("GPIO17")
        stuck.busy = 1_000_000
        source.close()
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert errors == ["GPIO17 (P1) did not close: GPIO busy"]
        assert factory.pin("GPIO27").when_changed is None
        GpioButtons(PINS, RESOLUTION_NS, factory=factory).close()  # nothing stayed reserved
        stuck.busy = 0


@pytest.mark.parametrize(
    ("pins", "message"),
    [
        ({}, "no buttons given"),
        ({"P1": "GPIO99"}, "GPIO99 (P1): not a GPIO pin of this board: name it the gpiozero way"),
        ({"P1": "BOARD1"}, "BOARD1 (P1): not a GPIO pin of this board"),
        ({"P9": "GPIO17"}, "GPIO17 (P9): P9 is not a button: use one of P1, P2"),
        ({"P1": "GPIO17", "P2": "GPIO17"}, "GPIO17 (P2): the pin is also given to P1"),
        (
            {"P1": "GPIO17", "P2": "BOARD11"},
            "BOARD11 (P2): pin GPIO17 is already in use by <referee GpioButtons P1=GPIO17>: "
            "give each button its own pin",
        ),
    ],
)
def test_a_wrong_pin_map_is_refused_naming_pin_and_button(factory, pins, message):
    with pytest.raises(GpioError) as caught:
        GpioButtons(pins, RESOLUTION_NS, factory=factory)
    assert str(caught.value).startswith(message)


def test_a_pin_another_device_holds_is_refused_and_nothing_stays_reserved(factory):
    led = LED("GPIO27", pin_factory=factory)
    with pytest.raises(GpioError, match=r"^GPIO27 \(P2\): pin GPIO27 is already in use by "):
        GpioButtons(PINS, RESOLUTION_NS, factory=factory)
    Button("GPIO17", pin_factory=factory).close()  # P1 was opened first, then let go
    led.close()


def test_a_factory_with_foreign_ticks_is_refused():
    with pytest.raises(GpioError, match=r"^GPIO17 \(P1\): gpiozero's RemoteFactory is not"):
        GpioButtons(PINS, RESOLUTION_NS, factory=RemoteFactory())


@pytest.fixture
def no_default_factory(monkeypatch, tmp_path):
    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "nosuch")
    monkeypatch.setattr(gpio, "GPIOCHIP", tmp_path / "gpiochip0")
    return tmp_path / "gpiochip0"


def test_without_gpio_the_error_says_so(no_default_factory):
    with pytest.raises(GpioError) as caught:
        GpioButtons(PINS, RESOLUTION_NS)
    assert str(caught.value) == (
        f"GPIO17 (P1): no GPIO here ({no_default_factory} is missing; not a Raspberry Pi?): "
        "use --input keyboard or --input serial:DEVICE"
    )


def test_without_permission_the_error_says_how_to_get_it(no_default_factory, monkeypatch):
    no_default_factory.touch()
    real_open = os.open

    def denied(path, flags, *args):
        if path == no_default_factory:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(GpioError) as caught:
        GpioButtons(PINS, RESOLUTION_NS)
    assert str(caught.value) == (
        f"GPIO17 (P1): permission denied on {no_default_factory}: add the user to the gpio "
        "group (sudo adduser $USER gpio), then log in again"
    )


def test_with_gpio_but_no_factory_the_error_gives_gpiozeros_reasons(no_default_factory):
    no_default_factory.touch()
    with pytest.raises(GpioError) as caught:
        GpioButtons(PINS, RESOLUTION_NS)
    assert str(caught.value) == (
        "GPIO17 (P1): no gpiozero pin factory works (Unable to find pin factory 'nosuch'): "
        "install lgpio (Raspberry Pi OS: sudo apt install python3-lgpio)"
    )


def test_software_times_say_so_and_widen_the_resolution(buttons, caplog):
    assert buttons.name == "GPIO (mock: software times, may be late)"
    assert sys.getswitchinterval() == 0.005
    assert buttons.latency_ns == 5_000_000  # one GIL switch interval
    assert buttons.resolution_ns == 5_000_000  # stamped after that same wait


def test_kernel_times_say_so_and_keep_the_resolution():
    class SimFactory(LGPIOFactory):  # as tests/gpio_rig/ subclasses the real one
        pass

    with SimFactory(pin_class=TimedPin) as factory:
        source = GpioButtons(PINS, RESOLUTION_NS, factory=factory)
        assert source.name == "GPIO (lgpio: kernel edge times)"
        assert source.resolution_ns == RESOLUTION_NS
        assert source.latency_ns == 6_000_000  # lgpio's 1 ms hold, then the GIL's 5 ms
        source.close()


def test_the_factory_in_use_is_reported_and_logged(factory, monkeypatch, caplog):
    monkeypatch.setattr(Device, "pin_factory", factory)
    assert str(pin_factory_info()) == "mock: software times, may be late"
    with caplog.at_level(logging.INFO, logger="referee.inputs.gpio"):
        GpioButtons(PINS, RESOLUTION_NS).close()
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "GPIO (mock: software times, may be late): P1=GPIO17, P2=GPIO27, VALID=GPIO16"),
        (
            "WARNING",
            "GPIO edge times are read in Python by the mock pin factory and may be late "
            "by up to 5.0 ms: use lgpio (GPIOZERO_PIN_FACTORY=lgpio)",
        ),
    ]


def test_importing_it_leaves_pygame_out():
    # The rig's guest has no pygame; the daemon's GPIO path must not need it.
    code = "import sys, referee.inputs.gpio; sys.exit('pygame' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
