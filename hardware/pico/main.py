"""Firmware of the referee's serial button board: a Raspberry Pi Pico running MicroPython.

It speaks the referee's protocol (docs/protocol.md) over the Pico's USB serial port, in
ASCII lines ended by "\\n":

    board -> referee   HELLO referee-board 1      once, when it starts
                       D <button> <t_us>          a button went down, at the board's clock
                       U <button> <t_us>          ... and up
                       T <t_us>                   every edge stamped before t_us has been sent
    referee -> board   L <button> off|on|blink    a buzzer's LED
                       B <hz> <ms>                a beep

Why it is built the way it is:

- Every button pin has a *hard* interrupt on both edges whose first act is to read
  time.ticks_us(). A soft (scheduled) handler would run when the main loop got round to
  it, and its time would be late by whatever the loop was doing. A hard handler may not
  allocate memory, so it only stores small integers into arrays made beforehand: a ring
  the main loop drains.
- time.ticks_us() on rp2 is the chip's 64-bit microsecond timer masked to MicroPython's
  30-bit small integers: it wraps every 2**30 us, about 17.9 minutes. TickExtender turns
  it back into a count that never wraps, because the referee relies on t_us only growing.
- Lines go out through sys.stdout.buffer: the text sys.stdout turns "\\n" into "\\r\\n".
  Commands come in through sys.stdin.buffer, read only when select.poll says a byte is
  waiting, so the loop never blocks on the host. Blinking is done here.
- The referee orders presses by these stamps, not by when lines arrive: the loop's pace
  adds latency, never unfairness. The ring holds the edges of one pass, with room to spare.
- T lines tell the referee how far the stamps are complete, so that it decides a race or
  a timer only when no earlier edge can still come. Each pass reads the time *before* it
  drains the ring: a handler runs to its end before the loop goes on, so every edge
  stamped before that time is in the ring by then. A T goes out with every drain that
  sent lines (in the same write), on the next pass if an edge drained was stamped at or
  after it, and at least every T_EVERY_US.

The pin numbers below are the table in README.md (this folder).
"""

import array
import select
import sys
import time

import machine
import micropython
from micropython import const

# GPIO numbers (GPn), as in README.md's pin table. Buttons wire to ground (internal pull-ups).
BUTTON_PINS = (
    ("P1", 2),
    ("P2", 3),
    ("P3", 4),
    ("P4", 5),
    ("P5", 6),
    ("P6", 7),
    ("P7", 8),
    ("P8", 9),
    ("VALID", 10),
    ("INVALID", 11),
    ("SUPER", 12),
    ("UNDO", 13),
    ("REPLAY", 26),  # optional: its pull-up reads "up" with nothing wired, so never a press
)
# The buzzers' LEDs, high = lit. The judge buttons have none: L commands for them are ignored.
LED_PINS = (
    ("P1", 14),
    ("P2", 15),
    ("P3", 16),
    ("P4", 17),
    ("P5", 18),
    ("P6", 19),
    ("P7", 20),
    ("P8", 21),
)
BEEPER_PIN = 22  # a passive piezo, driven with PWM

HELLO = b"HELLO referee-board 1\n"
BUTTON_NAMES = tuple(name for name, _ in BUTTON_PINS)
LED_MODES = ("off", "on", "blink")

# ticks_us() wraps at MicroPython's small-int limit: 2**30 on the rp2's 32-bit words.
TICKS_PERIOD = 1 << 30
TICKS_HALF = 1 << 29
RING_SIZE = const(256)  # a power of two: indices wrap with a mask
RING_MASK = const(RING_SIZE - 1)
BLINK_HALF_PERIOD_MS = const(250)
BEEP_HZ_MIN = const(20)  # the rp2's PWM cannot go below about 8 Hz
BEEP_HZ_MAX = const(20_000)
BEEP_MS_MAX = const(10_000)
COMMAND_MAX = const(40)  # the longest command is 16 bytes
T_EVERY_US = const(100_000)  # a T line at least this often, edges or not


# Pure functions: no hardware, tested on a PC (tests/test_pico_firmware.py).


def edge_line(down: bool, button: str, t_us: int) -> str:
    return ("D " if down else "U ") + button + " " + str(t_us) + "\n"


def time_line(t_us: int) -> str:
    return "T " + str(t_us) + "\n"


def edges_for(was_down: bool, fell: bool, level: int) -> tuple:
    """The edges one interrupt stands for, as down flags to report in order.

    `fell` says a falling edge latched the interrupt; `level` is the pin as the handler
    read it, microseconds later, maybe after a bounce back (buttons pull the pin low).
    A press is reported at its first edge even if the pin has already bounced up: the
    referee's arbiter debounces. A bounce while held is nothing to report.
    """
    pressed = level == 0
    if was_down:
        return () if pressed else (False,)
    if fell or pressed:
        return (True,) if pressed else (True, False)
    return ()


def parse_command(line: bytes) -> tuple | None:
    """("L", button, mode) or ("B", hz, ms) for a command, None for anything else.

    The beep is clamped to what the PWM and the piezo can do; ms 0 silences it.
    """
    try:
        fields = line.rstrip(b"\r").decode().split(" ")
    except UnicodeError:
        return None
    if len(fields) != 3:
        return None
    kind, a, b = fields
    if kind == "L" and a in BUTTON_NAMES and b in LED_MODES:
        return ("L", a, b)
    if kind == "B" and a.isdigit() and b.isdigit():
        return ("B", min(max(int(a), BEEP_HZ_MIN), BEEP_HZ_MAX), min(int(b), BEEP_MS_MAX))
    return None


def led_level(mode: str, blink_on: bool) -> int:
    return 1 if mode == "on" or (mode == "blink" and blink_on) else 0


def blink_on(now_ms: int) -> bool:
    # All blinking LEDs share one phase, so they blink together.
    return (now_ms // BLINK_HALF_PERIOD_MS) % 2 == 0


class TickExtender:
    """ticks_us() readings, which wrap every TICKS_PERIOD, as microseconds that never wrap.

    Each reading must be within half a period (about 9 minutes) of the one before, either
    way; the main loop feeds it the current time on every pass, so that always holds.
    """

    def __init__(self, first: int) -> None:
        self._raw = first
        self._us = first

    def extend(self, raw: int) -> int:
        # The same modular difference as time.ticks_diff, written out to be testable.
        self._us += ((raw - self._raw + TICKS_HALF) & (TICKS_PERIOD - 1)) - TICKS_HALF
        self._raw = raw
        return self._us


class TimeLines:
    """When to send `T <t_us>`: with every drain that sent lines, again on the next pass
    while an edge sent is stamped at or after the last T (its interrupt came between the
    pass's reading of the time and the drain), and at least every T_EVERY_US."""

    def __init__(self) -> None:
        self._sent_us = None  # the last T's t_us
        self._newest_us = -1  # the newest stamp of an edge sent

    def after_drain(self, now_us: int, lines: bytes, newest_us: int) -> bytes:
        """What this pass writes: `lines` (drained after now_us was read; newest_us is
        their newest stamp) and the T line, when one is due."""
        if lines:
            self._newest_us = max(self._newest_us, newest_us)
        last = self._sent_us
        due = lines or last is None or self._newest_us >= last or now_us - last >= T_EVERY_US
        if not due:
            return lines
        self._sent_us = now_us
        return lines + time_line(now_us).encode()


class LineBuffer:
    """Bytes from the host, cut into lines; a line too long to be a command is dropped."""

    def __init__(self) -> None:
        self._line = bytearray()  # None while dropping an over-long line

    def feed(self, data: bytes) -> list:
        lines = []
        for byte in data:
            if byte == 10:  # "\n"
                if self._line is not None:
                    lines.append(bytes(self._line))
                self._line = bytearray()
            elif self._line is not None:
                if len(self._line) < COMMAND_MAX:
                    self._line.append(byte)
                else:
                    self._line = None
        return lines


# The interrupt side. _on_edge runs as a hard interrupt handler: it may not allocate, so it
# stores small ints into the arrays below and moves _head; the main loop moves _tail.

_stamps = array.array("i", [0] * RING_SIZE)  # ticks_us() at the interrupt
_which = bytearray(RING_SIZE)  # index into BUTTON_PINS
_levels = bytearray(RING_SIZE)  # the pin's level as the handler read it
_fell = bytearray(RING_SIZE)  # 1 if a falling edge latched the interrupt
_head = 0  # the slot the handler fills next
_tail = 0  # the slot the main loop reads next
_lost = 0  # edges dropped on a full ring (the loop was stuck): look at it from the REPL
_pins = ()  # machine.Pin per button, in BUTTON_PINS order
_irqs = ()  # their IRQ objects, for flags()


def _on_edge(pin: machine.Pin) -> None:
    global _head, _lost
    t = time.ticks_us()
    slot = _head
    following = (slot + 1) & RING_MASK
    if following == _tail:
        _lost += 1
        return
    i = _pins.index(pin)
    _stamps[slot] = t
    _which[slot] = i
    _levels[slot] = pin.value()
    _fell[slot] = 1 if _irqs[i].flags() & machine.Pin.IRQ_FALLING else 0
    _head = following


def drain(clock: TickExtender, down: bytearray) -> tuple:
    """The lines for every edge recorded since the last call, and the newest stamp among
    them (-1 for none); `down` is each button's state."""
    global _tail
    lines = []
    newest = -1
    while _tail != _head:
        slot = _tail
        i = _which[slot]
        t_us = clock.extend(_stamps[slot])
        for is_down in edges_for(down[i] == 1, _fell[slot] == 1, _levels[slot]):
            lines.append(edge_line(is_down, BUTTON_NAMES[i], t_us))
            newest = max(newest, t_us)
        down[i] = 1 if _levels[slot] == 0 else 0
        _tail = (slot + 1) & RING_MASK
    return "".join(lines).encode(), newest


# The main loop's outputs.


class Lights:
    """The buzzers' LEDs and the beeper, as the referee's commands left them."""

    def __init__(self, leds: dict, beeper: machine.PWM) -> None:
        self._leds = leds  # button name -> machine.Pin
        self._modes = {name: "off" for name in leds}
        self._beeper = beeper
        self._beep_until = None  # ticks_ms() when the beep ends, or None
        self._blink_on = None  # the blink phase last shown
        beeper.duty_u16(0)

    def apply(self, command: tuple, now_ms: int) -> None:
        if command[0] == "L":
            _, button, mode = command
            if button in self._leds:
                self._modes[button] = mode
                self._show(blink_on(now_ms))
        else:
            _, hz, ms = command
            self._beeper.freq(hz)
            self._beeper.duty_u16(32768 if ms else 0)
            self._beep_until = time.ticks_add(now_ms, ms) if ms else None

    def update(self, now_ms: int) -> None:
        """Blink and end the beep on time; call it on every pass of the loop."""
        phase = blink_on(now_ms)
        if phase != self._blink_on:
            self._show(phase)
        if self._beep_until is not None and time.ticks_diff(now_ms, self._beep_until) >= 0:
            self._beeper.duty_u16(0)
            self._beep_until = None

    def _show(self, phase: bool) -> None:
        self._blink_on = phase
        for button, pin in self._leds.items():
            pin.value(led_level(self._modes[button], phase))


def main() -> None:
    global _pins, _irqs
    micropython.alloc_emergency_exception_buf(100)  # so an error in _on_edge is reported
    # Made before the first interrupt, so no stamp is older than its start: t_us >= 0.
    clock = TickExtender(time.ticks_us())
    _pins = tuple(machine.Pin(gpio, machine.Pin.IN, machine.Pin.PULL_UP) for _, gpio in BUTTON_PINS)
    down = bytearray(1 if pin.value() == 0 else 0 for pin in _pins)
    _irqs = tuple(pin.irq() for pin in _pins)  # made, not armed: _on_edge needs them all
    for pin in _pins:
        pin.irq(_on_edge, machine.Pin.IRQ_FALLING | machine.Pin.IRQ_RISING, hard=True)
    lights = Lights(
        {name: machine.Pin(gpio, machine.Pin.OUT, value=0) for name, gpio in LED_PINS},
        machine.PWM(machine.Pin(BEEPER_PIN)),
    )
    out = sys.stdout.buffer
    # Until a host opens the port, MicroPython keeps the latest output for it, presses
    # too: the referee drops what comes in the moment after it opens the port, so those
    # old presses are not taken as new (the HELLO with them is not needed: opening the
    # port maps the clock afresh anyway).
    out.write(HELLO)
    host = select.poll()
    host.register(sys.stdin, select.POLLIN)
    commands = LineBuffer()
    times = TimeLines()
    while True:
        # Read before the drain (see TimeLines); it also keeps the extender within half
        # a period.
        now_us = clock.extend(time.ticks_us())
        lines, newest_us = drain(clock, down)
        written = times.after_drain(now_us, lines, newest_us)
        if written:
            out.write(written)
        while host.poll(0):
            for line in commands.feed(sys.stdin.buffer.read(1)):
                command = parse_command(line)
                if command is not None:
                    lights.apply(command, time.ticks_ms())
        lights.update(time.ticks_ms())
        host.poll(1)  # the loop's pause: a millisecond, or less when the host writes


if __name__ == "__main__":
    main()
