"""The buzzers' LEDs: what each seat's LED shows, and three ways to drive them.

Each seat's LED answers one question for its player: "does my buzzer count now?"

| phase           | ON                     | SLOW_BLINK     | FAST_BLINK | OFF         |
|-----------------|------------------------|----------------|------------|-------------|
| lobby           | joined                 | not yet joined |            |             |
| open            | may call               |                |            | locked; out |
| call            | co-callers still to go |                | whose turn | the rest    |
| super-join      | joined the round       | may join       |            | locked; out |
| super-countdown | in the round: may call |                |            | the rest    |
| super-call      | co-callers still to go |                | whose turn | the rest    |
| over            |                        | the winner(s)  |            | the rest    |

"out" is a seat that did not join this game. ON means "you are in": your press counts
now, you joined (pressing again leaves), or your call waits its turn. A slow blink
invites a press (join now) or, at the end, crowns the winners; the fast blink says "all
eyes on you: show your SET". A solo no-SET claim waits for the judge, not for a player:
every LED is off then.

Drivers carry the modes out and act only on change. Blinking seats share one phase, so
the table sees them blink together; it restarts, lit first, whenever blinking starts
from none. `ShiftRegisterLeds` and `PinLeds` blink from one small thread each that sleeps
until the next blink transition and, while nothing blinks, until `show` or `close`.
"""

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from functools import partial
from typing import Any, Protocol

from gpiozero import LED, OutputDevice

from referee.rules import Phase, sitting_out
from referee.units import MAX_SEATS
from referee.view import View


class LedMode(StrEnum):
    OFF = "off"
    ON = "on"
    SLOW_BLINK = "slow-blink"
    FAST_BLINK = "fast-blink"


# Half periods: 1 Hz and 4 Hz. The slow one is a whole number of fast ones, so every
# slow transition is also a fast one and the thread wakes at one rate only.
SLOW_HALF_NS = 500_000_000
FAST_HALF_NS = 125_000_000


def led_modes(view: View) -> dict[int, LedMode]:
    """Each seat's LED, for seats 1 to settings.players."""
    state = view.state
    seats = set(range(1, view.settings.players + 1))
    out = sitting_out(view.settings, state)  # an official dealer who does not play
    armed = {p.id for p in state.players if not p.locked and p.id != out}
    on: set[int] = set()
    slow: set[int] = set()
    fast: set[int] = set()
    match state.phase:
        case Phase.LOBBY:
            on = {p.id for p in state.players}
            slow = seats - on
        case Phase.OPEN:
            on = armed
        case Phase.CALL | Phase.SUPER_CALL:
            call = state.pending  # None while a solo no-SET claim is judged
            if call is not None and call.turn is not None:
                fast = {call.turn}
                on = set(call.callers[len(call.verdicts) + 1 :])
        case Phase.SUPER_JOIN:
            assert state.super_round is not None
            on = set(state.super_round.participants)
            slow = armed - on
        case Phase.SUPER_COUNTDOWN:
            assert state.super_round is not None
            on = set(state.super_round.participants)
        case Phase.OVER:
            slow = {place.player for place in state.ranking if place.place == 1}
    modes: dict[int, LedMode] = {}
    for seat in sorted(seats):
        if seat in fast:
            modes[seat] = LedMode.FAST_BLINK
        elif seat in slow:
            modes[seat] = LedMode.SLOW_BLINK
        elif seat in on:
            modes[seat] = LedMode.ON
        else:
            modes[seat] = LedMode.OFF
    return modes


def lit_at(modes: Mapping[int, LedMode], elapsed_ns: int) -> frozenset[int]:
    """The seats whose LED is lit `elapsed_ns` after blinking started (lit first)."""
    return frozenset(
        seat
        for seat, mode in modes.items()
        if mode is LedMode.ON
        or (mode is LedMode.SLOW_BLINK and (elapsed_ns // SLOW_HALF_NS) % 2 == 0)
        or (mode is LedMode.FAST_BLINK and (elapsed_ns // FAST_HALF_NS) % 2 == 0)
    )


def _blinks(modes: Mapping[int, LedMode]) -> bool:
    return any(mode in (LedMode.SLOW_BLINK, LedMode.FAST_BLINK) for mode in modes.values())


def next_blink_ns(modes: Mapping[int, LedMode], elapsed_ns: int) -> int | None:
    """When, after blinking started, the next blink transition is due; None if none blinks."""
    present = set(modes.values())
    if LedMode.FAST_BLINK in present:
        half = FAST_HALF_NS
    elif LedMode.SLOW_BLINK in present:
        half = SLOW_HALF_NS
    else:
        return None
    return (elapsed_ns // half + 1) * half


class Leds(Protocol):
    def show(self, modes: dict[int, LedMode]) -> None: ...

    def close(self) -> None: ...


class Blinker:
    """Carries out LED modes on on/off outputs through `write(lit seats)`.

    `write` runs under a lock, from `show` when the lit seats change and from the
    blinker's own thread at blink transitions, so two writes never interleave. The
    thread waits with a timeout only while something blinks.
    """

    def __init__(self, write: Callable[[frozenset[int]], None]) -> None:
        self._write = write
        self._cond = threading.Condition()
        self._modes: dict[int, LedMode] = {}
        self._lit: frozenset[int] | None = None  # unknown until the first write
        self._epoch_ns = time.monotonic_ns()
        self._closed = False
        with self._cond:
            self._refresh()  # whatever the outputs held before we came, they go dark
        self._thread = threading.Thread(target=self._run, name="referee-leds", daemon=True)
        self._thread.start()

    def show(self, modes: Mapping[int, LedMode]) -> None:
        wanted: dict[int, LedMode] = {s: m for s, m in modes.items() if m is not LedMode.OFF}
        with self._cond:
            if self._closed or wanted == self._modes:
                return
            if not _blinks(self._modes):
                self._epoch_ns = time.monotonic_ns()
            self._modes = wanted
            self._refresh()
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        with self._cond:
            self._modes = {}
            self._refresh()

    def _refresh(self) -> None:
        lit = lit_at(self._modes, time.monotonic_ns() - self._epoch_ns)
        if lit != self._lit:
            self._write(lit)
            self._lit = lit

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                due = next_blink_ns(self._modes, time.monotonic_ns() - self._epoch_ns)
                if due is None:
                    self._cond.wait()
                    continue
                delay_ns = self._epoch_ns + due - time.monotonic_ns()
                # A notify means new modes (already written by show): plan again.
                if delay_ns > 0 and self._cond.wait(delay_ns / 1e9):
                    continue
                self._refresh()


class _GpioLeds:
    """What the two GPIO wirings share: their gpiozero devices, opened in order and closed
    together (those opened so far if one cannot open), and a Blinker that writes the lit
    seats through the wiring's `_write`, once the devices are there."""

    def __init__(self, devices: Iterable[Callable[[], Any]]) -> None:
        self._devices: list[Any] = []
        try:
            for make in devices:
                self._devices.append(make())
        except Exception:
            self._release()
            raise
        self._blinker = Blinker(self._write)

    def show(self, modes: dict[int, LedMode]) -> None:
        self._blinker.show(modes)

    def close(self) -> None:
        self._blinker.close()
        self._release()

    def _release(self) -> None:
        for device in self._devices:
            device.close()

    def _write(self, lit: frozenset[int]) -> None:
        raise NotImplementedError


class ShiftRegisterLeds(_GpioLeds):
    """Eight LEDs on a 74HC595 whose latch clock (RCLK) is tied to its shift clock (SRCLK).

    With the two clocks tied, each rising edge shifts the data pin into QA and stores in
    the output register what the shift register held *before* the edge (TI SN74HC595
    datasheet: the shift register stays one clock ahead of the storage register). So a
    write shifts QH's bit (P8) first and QA's (P1) last, then gives one more clock,
    with the data pin low, to store them. Outputs flicker through the partial patterns
    during a write; at GPIO speeds that lasts well under a millisecond.
    """

    def __init__(self, data_pin: str, clock_pin: str, *, pin_factory: Any = None) -> None:
        super().__init__(
            partial(OutputDevice, pin, pin_factory=pin_factory) for pin in (data_pin, clock_pin)
        )

    def _write(self, lit: frozenset[int]) -> None:
        data, clock = self._devices
        for bit in [seat in lit for seat in range(MAX_SEATS, 0, -1)] + [False]:
            data.value = bit
            clock.on()
            clock.off()


class PinLeds(_GpioLeds):
    """One LED per seat on a pin of its own, e.g. {1: "GPIO4", 2: "GPIO19"}."""

    def __init__(self, pins: Mapping[int, str], *, pin_factory: Any = None) -> None:
        self._seats = list(pins)
        super().__init__(partial(LED, pin, pin_factory=pin_factory) for pin in pins.values())

    def _write(self, lit: frozenset[int]) -> None:
        for seat, led in zip(self._seats, self._devices, strict=True):
            if led.is_lit != (seat in lit):
                led.value = seat in lit


class LedBoard(Protocol):
    """The serial button board's LEDs: button "P1".."P8", mode "off" | "on" | "blink"."""

    def set_led(self, button: str, mode: str) -> None: ...


# The board blinks by itself, at one rate: both blinks are its "blink".
_BOARD_MODE = {
    LedMode.OFF: "off",
    LedMode.ON: "on",
    LedMode.SLOW_BLINK: "blink",
    LedMode.FAST_BLINK: "blink",
}


class BoardLeds:
    """The LEDs of the serial button board: one `L` line per LED that changes."""

    def __init__(self, board: LedBoard) -> None:
        self._board = board
        self._sent: dict[int, str] = {}  # nothing known: the first show sets all eight

    def show(self, modes: dict[int, LedMode]) -> None:
        for seat in range(1, MAX_SEATS + 1):
            mode = _BOARD_MODE[modes.get(seat, LedMode.OFF)]
            if self._sent.get(seat) != mode:
                self._board.set_led(f"P{seat}", mode)
                self._sent[seat] = mode

    def close(self) -> None:
        self.show({})
