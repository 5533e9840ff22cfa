"""The box's buttons on the Pi's GPIO pins, read from the kernel by the main loop.

docs/design.md, "Event time": one line request through the GPIO character device (libgpiod
v2's Python bindings, `gpiod` >= 2) holds every button: both edges, the pull-up bias
(each button wires its pin to ground, so low is pressed) and no kernel debounce (the
kernel's debounce stamps an edge when its work runs, rounded to jiffies). Its file
descriptor is in the main loop's wait: no thread, no callback, no polling.

- Each event carries `timestamp_ns`, CLOCK_MONOTONIC taken in the GPIO's hard interrupt
  (gpiolib-cdev.c, edge_irq_handler), the daemon's clock; the arbiter debounces.
- The event is queued by the interrupt's thread a moment later (edge_irq_thread). So
  after the request has been read empty at time R, every edge stamped before
  R - IRQ_BOUND_NS has been read: that is the watermark.
- One request, one queue and one sequence number (global_seqno) for all its lines: a
  gap in it means edges were merged (a bounce faster than the interrupt's thread) or
  dropped (the queue overflowed); they are counted, and an overflow is said.
- A both-edges request names an edge rising or falling by reading the level in the
  interrupt's thread, which can be wrong while a contact bounces. A button that is up
  can only go down: its first edge is a press whatever the kernel calls it.
- The chip is found by its label, not its number (the Pi 5's header moved from
  gpiochip4 to gpiochip0 in kernel 6.6); a line offset on it is the BCM number.
"""

import errno
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Protocol

import gpiod
from gpiod.line import Bias, Clock, Direction, Value
from gpiod.line import Edge as LineEdge

from referee.buttons import PIN_BUTTONS, REPLAY
from referee.errors import GpioError
from referee.inbox import SourceStatus
from referee.inputs import SourceItem

from .edges import Edge

log = logging.getLogger(__name__)

# The GPIO controllers of the 40-pin header: Pi 1-3 and Zero, Pi 4 and 400, Pi 5.
PI_CHIP_LABELS = ("pinctrl-bcm2835", "pinctrl-bcm2711", "pinctrl-rp1")
DEV = Path("/dev")
CONSUMER = "referee"
# How long after its hard interrupt stamps an edge the interrupt's thread may take to
# queue it for us: a choice, which a Pi's own chip can measure (docs/performance.md).
IRQ_BOUND_NS = 1_000_000
# The kernel's queue for the request: a bouncing button makes a dozen edges a press.
EVENT_BUFFER = 1024


class Request(Protocol):
    """What the buttons need of a `gpiod.LineRequest` (a fake one in tests)."""

    @property
    def fd(self) -> int: ...

    def wait_edge_events(self, timeout: timedelta | float | None = None) -> bool: ...

    def read_edge_events(self, max_events: int | None = None) -> list[gpiod.EdgeEvent]: ...

    def get_values(self, lines: Sequence[int | str] | None = None) -> list[Value]: ...

    def release(self) -> None: ...


def find_chip(dev: Path = DEV) -> Path:
    """The GPIO character device of the Pi's 40-pin header, found by its label."""
    chips = sorted(dev.glob("gpiochip*"))
    if not chips:
        raise GpioError(
            f"no GPIO here (no {dev}/gpiochip*; not a Raspberry Pi?): "
            "use --input keyboard or --input serial:DEVICE"
        )
    labels = []
    for path in chips:
        try:
            with gpiod.Chip(str(path)) as chip:
                label = chip.get_info().label
        except PermissionError:
            raise GpioError(
                f"permission denied on {path}: add the user to the gpio group "
                "(sudo adduser $USER gpio), then log in again"
            ) from None
        except OSError as err:
            raise GpioError(f"cannot open {path}: {err.strerror}") from None
        if label in PI_CHIP_LABELS:
            return path
        labels.append(f"{path.name} ({label})")
    raise GpioError(
        f"none of the GPIO chips here is a Raspberry Pi's header ({', '.join(labels)}; "
        f"looked for {', '.join(PI_CHIP_LABELS)}): use --input serial:DEVICE"
    )


def _offset(pin: str) -> int:
    # The settings name every pin "GPIOn" (config.py turns BOARD11 and the rest into it).
    if not (pin.startswith("GPIO") and pin[4:].isdigit()):
        raise ValueError(f"{pin!r} is not a GPIO pin name")
    return int(pin[4:])


def request_buttons(chip: Path, offsets: Sequence[int]) -> Request:
    settings = gpiod.LineSettings(
        direction=Direction.INPUT,
        edge_detection=LineEdge.BOTH,
        bias=Bias.PULL_UP,
        debounce_period=timedelta(0),
        event_clock=Clock.MONOTONIC,
    )
    return gpiod.request_lines(
        str(chip),
        consumer=CONSUMER,
        config={tuple(offsets): settings},
        event_buffer_size=EVENT_BUFFER,
    )


class GpioButtons:
    """The buttons named in `pins` (button -> "GPIOn"), as an InputSource.

    Opening happens here, so a wrong pin or missing GPIO fails before anything starts.
    `request` opens the line request (`request_buttons` by default; tests give a fake).
    """

    name = "GPIO (kernel edge times)"

    def __init__(
        self,
        pins: Mapping[str, str],
        resolution_ns: int,
        *,
        chip: Path | None = None,
        request: Callable[[Path, Sequence[int]], Request] | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        _check_pin_map(pins)
        self.resolution_ns = resolution_ns
        self.buttons = tuple(pins)
        self._pins = dict(pins)
        self._button_at = {_offset(pin): button for button, pin in pins.items()}
        self._clock = clock
        self.chip = find_chip() if chip is None else chip
        opened_ns = clock()
        try:
            opener = request_buttons if request is None else request
            self._request: Request | None = opener(self.chip, list(self._button_at))
        except OSError as err:
            raise GpioError(self._why_not(err)) from None
        except ValueError as err:  # an offset the chip does not have
            raise GpioError(f"{self.chip}: {err}: check the [pins] table") from None
        values = self._request.get_values(list(self._button_at))
        # Low is pressed: the button wires its pin to ground against the pull-up.
        self._down = {
            button: value == Value.INACTIVE
            for button, value in zip(self._button_at.values(), values, strict=True)
        }
        self._watermark = opened_ns - IRQ_BOUND_NS
        self._seqno: int | None = None
        self.lost_edges = 0
        wired = ", ".join(f"{b}={p}" for b, p in pins.items())
        log.info("%s on %s: %s", self.name, self.chip, wired)

    def _why_not(self, err: OSError) -> str:
        """The request failed: say which pin and what to do."""
        if err.errno in (errno.EACCES, errno.EPERM):
            return (
                f"permission denied on {self.chip}: add the user to the gpio group "
                "(sudo adduser $USER gpio), then log in again"
            )
        if err.errno == errno.EBUSY:
            return self._busy()
        return f"{self.chip}: cannot request the buttons' lines: {os.strerror(err.errno or 0)}"

    def _busy(self) -> str:
        held = []
        try:
            with gpiod.Chip(str(self.chip)) as chip:
                for offset, button in self._button_at.items():
                    info = chip.get_line_info(offset)
                    if info.used:
                        who = info.consumer or "a kernel driver"
                        held.append(f"{self._pins[button]} ({button}) is held by {who}")
        except OSError:
            pass
        what = "; ".join(held) or "a pin of the buttons is busy"
        optional = f' (or [pins] {REPLAY} = "": the button is optional)' if REPLAY in what else ""
        return (
            f"{what}: stop that program, drop the dtoverlay that claims it, or choose "
            f"another pin{optional} (`gpioinfo` lists every pin's user)"
        )

    def fileno(self) -> int | None:
        return None if self._request is None else self._request.fd

    @property
    def watermark_ns(self) -> int:
        return self._watermark

    def wake_ns(self, wanted_ns: int | None) -> int | None:
        # Read then, the request shows every edge stamped before wanted_ns.
        return None if wanted_ns is None else wanted_ns + IRQ_BOUND_NS

    def held_at_start(self) -> tuple[str, ...]:
        return tuple(button for button, down in self._down.items() if down)

    def read(self) -> list[SourceItem]:
        request = self._request
        items: list[SourceItem] = []
        if request is None:
            return items
        while True:
            read_ns = self._clock()
            if not request.wait_edge_events(0):
                self._watermark = max(self._watermark, read_ns - IRQ_BOUND_NS)
                return items
            events = request.read_edge_events()
            items += self._lost(sorted(e.global_seqno for e in events))
            # Each line's interrupt thread queues its own events: in one read they may
            # stand out of order between lines, never within one.
            events.sort(key=lambda e: (e.timestamp_ns, e.global_seqno))
            items += [self._edge(event) for event in events if event.line_offset in self._button_at]

    def _lost(self, seqnos: list[int]) -> list[SourceItem]:
        """Count the edges the sequence numbers skip. A bounce faster than the interrupt's
        thread merges edges (the event keeps the last stamp and the level read after it,
        which is why a button's last edge is trusted and its first made a press): that
        is only logged. A gap of half the queue means it overflowed: that is shown."""
        lost = 0
        for seqno in seqnos:
            if self._seqno is not None and seqno > self._seqno + 1:
                lost += seqno - self._seqno - 1
            self._seqno = seqno if self._seqno is None else max(seqno, self._seqno)
        self.lost_edges += lost
        if not lost:
            return []
        log.debug("GPIO: %d edges merged or dropped by the kernel", lost)
        if lost < EVENT_BUFFER // 2:
            return []
        text = f"GPIO: the kernel dropped {lost} edges (its queue was full)"
        log.warning("%s", text)
        return [SourceStatus(self.name, text, ok=False, condition="kernel")]

    def _edge(self, event: gpiod.EdgeEvent) -> Edge:
        button = self._button_at[event.line_offset]
        falling = event.event_type is gpiod.EdgeEvent.Type.FALLING_EDGE
        down = falling or not self._down[button]
        self._down[button] = down
        return Edge(button, event.timestamp_ns, down)

    def close(self) -> None:
        """Hand the lines back. Never raises: it runs on the way out."""
        request, self._request = self._request, None
        if request is None:
            return
        try:
            request.release()
        except OSError as err:
            log.error("the buttons' lines did not close: %s", err)


def _check_pin_map(pins: Mapping[str, str]) -> None:
    if not pins:
        raise GpioError("no buttons given: the [pins] table names none")
    owner: dict[str, str] = {}
    for button, pin_name in pins.items():
        if button not in PIN_BUTTONS:
            raise GpioError(
                f"{pin_name} ({button}): {button} is not a button:"
                f" use one of {', '.join(PIN_BUTTONS)}"
            )
        if pin_name in owner:
            raise GpioError(
                f"{pin_name} ({button}): the pin is also given to {owner[pin_name]}: "
                "each button needs its own pin"
            )
        owner[pin_name] = button
        try:
            _offset(pin_name)
        except ValueError as err:
            raise GpioError(f"{pin_name} ({button}): {err}") from None
