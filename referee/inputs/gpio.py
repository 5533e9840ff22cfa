"""The box's buttons on the Pi's GPIO pins, read through gpiozero at the pin level.

Each button wires its pin to ground against the internal pull-up, so low is pressed.
Every edge goes to the inbox with its own time, bounce included: the arbiter debounces
(DESIGN.md, "The arbiter: who pressed first"). Device-level callbacks carry no time and
gpiozero's bounce_time stamps a press late, so neither is used here.

Where an edge's time comes from, in gpiozero 2.0.1 and lgpio 0.2.2:

- lgpio factory: `when_changed` gets `ticks = timestamp / 1e9`
  (gpiozero/pins/lgpio.py, LGPIOPin._call_when_changed), `timestamp` being the kernel's
  `gpio_v2_line_event.timestamp_ns` passed through unchanged (lgPthAlerts.c, xDebWatEvt,
  with debounce 0). The kernel takes it in the GPIO's hard interrupt
  (gpiolib-cdev.c, edge_irq_handler) from CLOCK_MONOTONIC, because lgpio never sets
  GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME (commented out in lgGpio.c, xMakeFlags). So
  ticks are seconds on CLOCK_MONOTONIC, a 64-bit count of nanoseconds that never wraps.
- rpigpio, native and mock factories: `ticks` is `time.monotonic()` read in Python when
  the callback runs (gpiozero/pins/local.py, LocalPiFactory.ticks; native.py's watch
  thread; mock.py), late by however long Python took to get there.

Both are seconds on the clock of `time.monotonic_ns()`, the daemon's clock, so one
conversion serves all; only the honesty of the time differs, and `name` says which.
"""

import logging
import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpiozero import Device, GPIOPinInUse, PinFixedPull, PinInvalidPin

from referee.edges import BUTTONS, Edge, Inbox
from referee.inputs import gil_wait_ns

log = logging.getLogger(__name__)

# The chip whose permissions decide whether the box's user may use GPIO at all.
GPIOCHIP = Path("/dev/gpiochip0")

# gpiozero's pin factories whose ticks are known to be seconds on CLOCK_MONOTONIC
# (see the module's docstring), with whether those are the kernel's edge times.
_KNOWN_FACTORIES: dict[str, tuple[str, bool]] = {
    "gpiozero.pins.lgpio.LGPIOFactory": ("lgpio", True),
    "gpiozero.pins.rpigpio.RPiGPIOFactory": ("rpigpio", False),
    "gpiozero.pins.native.NativeFactory": ("native", False),
    "gpiozero.pins.mock.MockFactory": ("mock", False),
}

# lgpio's alert thread polls every 0.5 ms and holds each edge until it is 0.5 ms old on
# the kernel's clock, so that it can hand over the edges of all pins sorted by time
# (lgPthAlerts.c, lgPthAlert: ppoll timeout 0.5 ms, emit(count, nowGT - 500000)).
LGPIO_HOLD_NS = 1_000_000

# How long close() retries a line that lgpio reports busy (see _unwatch).
UNWATCH_PATIENCE_S = 0.2


class GpioError(Exception):
    """GPIO cannot be used; the message names the pin, its button and what to do."""


@dataclass(frozen=True, slots=True)
class FactoryInfo:
    """Which gpiozero pin factory reads the pins, and whether its times are the kernel's."""

    name: str  # gpiozero's name for it: "lgpio", "rpigpio", "native" or "mock"
    kernel_times: bool

    def __str__(self) -> str:
        how = "kernel edge times" if self.kernel_times else "software times, may be late"
        return f"{self.name}: {how}"


def pin_factory_info(factory: Any = None) -> FactoryInfo:
    """Describe `factory` (None: gpiozero's default, loaded now) for the screen and the log.

    Raises GpioError when there is no usable factory or its times cannot be trusted.
    """
    if factory is None:
        factory = _default_factory()
    for cls in type(factory).__mro__:
        known = _KNOWN_FACTORIES.get(f"{cls.__module__}.{cls.__qualname__}")
        if known is not None:
            return FactoryInfo(*known)
    raise GpioError(
        f"gpiozero's {type(factory).__name__} is not supported: its edge times are not on "
        "this computer's monotonic clock; set GPIOZERO_PIN_FACTORY=lgpio"
    )


def _default_factory() -> Any:
    if Device.pin_factory is not None:
        return Device.pin_factory
    # gpiozero turns each factory that fails into a warning and tries the next; the
    # warnings are the only record of why lgpio was passed over.
    with warnings.catch_warnings(record=True) as passed_over:
        warnings.simplefilter("always")
        try:
            Device.ensure_pin_factory()
        except Exception as err:
            reasons = [str(w.message) for w in passed_over] + [str(err)]
            raise GpioError(_why_no_gpio(reasons)) from err
    for w in passed_over:
        log.warning("gpiozero: %s", w.message)
    return Device.pin_factory


def _why_no_gpio(reasons: list[str]) -> str:
    try:
        fd = os.open(GPIOCHIP, os.O_RDWR)
    except FileNotFoundError:
        return (
            f"no GPIO here ({GPIOCHIP} is missing; not a Raspberry Pi?): "
            "use --input keyboard or --input serial:DEVICE"
        )
    except PermissionError:
        return (
            f"permission denied on {GPIOCHIP}: add the user to the gpio group "
            "(sudo adduser $USER gpio), then log in again"
        )
    except OSError as err:
        return f"cannot open {GPIOCHIP}: {err.strerror}"
    os.close(fd)
    return (
        f"no gpiozero pin factory works ({'; '.join(reasons)}): "
        "install lgpio (Raspberry Pi OS: sudo apt install python3-lgpio)"
    )


def _advice(err: Exception) -> str:
    """What went wrong with one pin, and what to do about it."""
    if isinstance(err, GPIOPinInUse):
        return f"{err}: give each button its own pin"
    if isinstance(err, PinInvalidPin):
        return (
            "not a GPIO pin of this board: name it the gpiozero way, "
            "e.g. GPIO17 (Broadcom number) or BOARD11 (header pin)"
        )
    if isinstance(err, PinFixedPull):
        return f"{err}: choose a pin without a fixed pull resistor"
    # lgpio's own exception (lgpio.error, "GPIO busy") cannot be named here: lgpio only
    # installs on a Pi.
    if "busy" in str(err).lower():
        return (
            "the pin is busy: another program or a kernel driver holds it (`gpioinfo` "
            "names it): stop that program, drop the dtoverlay that claims it, or choose "
            "another pin"
        )
    return f"{type(err).__name__}: {err}"


def _ticks_to_ns(ticks: float) -> int:
    # A double holds nanoseconds since boot exactly for about 26 days of uptime, and to
    # within a few nanoseconds for years after: far below any resolution that matters.
    return round(ticks * 1_000_000_000)


class _PinWatch:
    """One pin's when_changed handler.

    gpiozero keeps only a weak reference to a handler (gpiozero/pins/pi.py,
    PiPin._set_when_changed: WeakMethod or ref) and silently stops calling it once it
    is gone (PiPin._call_when_changed), so GpioButtons holds these.
    """

    def __init__(self, button: str, inbox: Inbox) -> None:
        self.button = button
        self.inbox = inbox

    def __call__(self, ticks: float, state: int) -> None:
        self.inbox.put(Edge(self.button, _ticks_to_ns(ticks), down=state == 0))


class GpioButtons:
    """The buttons named in `pins` (button -> gpiozero pin name), as an InputSource.

    Opening happens here, so a wrong pin or missing GPIO fails before anything starts;
    `start` only begins delivering edges. Keep the object until `close()`: the pins'
    handlers live as long as it does.
    """

    def __init__(self, pins: Mapping[str, str], resolution_ns: int, factory: Any = None) -> None:
        _check_pin_map(pins)
        first_button, first_pin = next(iter(pins.items()))
        try:
            self._factory = factory if factory is not None else _default_factory()
            info = pin_factory_info(self._factory)
        except GpioError as err:
            raise GpioError(f"{first_pin} ({first_button}): {err}") from err
        self.name = f"GPIO ({info})"
        # A callback thread waits for the GIL for up to one switch interval while the
        # main loop runs Python (drawing, say); lgpio adds its own hold before that.
        gil_wait = gil_wait_ns()
        self.latency_ns = gil_wait + (LGPIO_HOLD_NS if info.kernel_times else 0)
        # Software times are read after that same wait, so two presses closer than it
        # may be stamped in the wrong order.
        self.resolution_ns = resolution_ns if info.kernel_times else max(resolution_ns, gil_wait)
        self._pin_names = dict(pins)
        self._pins: dict[str, Any] = {}
        self._watches: list[_PinWatch] = []
        try:
            for button, pin_name in pins.items():
                self._pins[button] = self._open(button, pin_name)
        except GpioError:
            self.close()
            raise
        log.info("%s: %s", self.name, ", ".join(f"{b}={p}" for b, p in pins.items()))
        if not info.kernel_times:
            log.warning(
                "GPIO edge times are read in Python by the %s pin factory and may be late "
                "by up to %.1f ms: use lgpio (GPIOZERO_PIN_FACTORY=lgpio)",
                info.name,
                gil_wait / 1e6,
            )

    def _open(self, button: str, pin_name: str) -> Any:
        pin = None
        try:
            self._factory.reserve_pins(self, pin_name)
            pin = self._factory.pin(pin_name)
            pin.function = "input"
            pin.pull = "up"
            pin.bounce = None
            pin.edges = "both"
        except Exception as err:
            if pin is not None:
                pin.close()
            raise GpioError(f"{pin_name} ({button}): {_advice(err)}") from err
        return pin

    def _conflicts_with(self, other: object) -> bool:
        # gpiozero asks this when a pin we want is reserved by another device.
        return True

    def __repr__(self) -> str:
        return f"<referee GpioButtons {', '.join(f'{b}={p!r}' for b, p in self._pins.items())}>"

    def held_at_start(self) -> tuple[str, ...]:
        return tuple(button for button, pin in self._pins.items() if pin.state == 0)

    def start(self, inbox: Inbox) -> None:
        for button, pin in self._pins.items():
            watch = _PinWatch(button, inbox)
            self._watches.append(watch)
            try:
                pin.when_changed = watch
            except Exception as err:
                where = f"{self._pin_names[button]} ({button})"
                raise GpioError(f"{where}: {_advice(err)}") from err

    def close(self) -> None:
        """Stop the edges and hand the pins back (lgpio leaves them floating inputs).

        Never raises: it runs on the way out, where a pin that will not let go is only
        worth a line in the log.
        """
        for button, pin in self._pins.items():
            try:
                _unwatch(pin)
                pin.close()
            except Exception as err:
                log.error("%s (%s) did not close: %s", self._pin_names[button], button, err)
        self._pins.clear()
        self._watches.clear()
        self._factory.release_all(self)


def _unwatch(pin: Any) -> None:
    # lgpio closes a watched line's request while its alert thread may still be polling
    # it, after waiting only 2 ms for that thread (lgGpio.c, xSetAsFree); until the poll
    # returns, claiming the line again fails with "GPIO busy". Nothing signals the end.
    deadline = time.monotonic() + UNWATCH_PATIENCE_S
    while True:
        try:
            pin.when_changed = None
            return
        except Exception as err:
            if "busy" not in str(err).lower() or time.monotonic() > deadline:
                raise
        time.sleep(0.002)


def _check_pin_map(pins: Mapping[str, str]) -> None:
    if not pins:
        raise GpioError("no buttons given: the [pins] table names none")
    owner: dict[str, str] = {}
    for button, pin_name in pins.items():
        if button not in BUTTONS:
            raise GpioError(
                f"{pin_name} ({button}): {button} is not a button: use one of {', '.join(BUTTONS)}"
            )
        if pin_name in owner:
            raise GpioError(
                f"{pin_name} ({button}): the pin is also given to {owner[pin_name]}: "
                "each button needs its own pin"
            )
        owner[pin_name] = button
