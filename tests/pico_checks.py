"""Checks of the Pico firmware's logic, for CPython and MicroPython alike.

tests/test_pico_firmware.py runs this file (with `run(<the firmware's source>)` appended)
as a program, under CPython always and under MicroPython when one is at hand, with stand-ins
for the `machine` module. Under MicroPython the interrupt handler runs with the heap locked:
a hard interrupt handler that allocates would fail on a Pico, and here it fails loudly.

Written in the Python both speak: no pytest, no dataclasses, plain asserts via `check`.
"""

import sys

try:
    import micropython
except ImportError:  # CPython: the few names the firmware and these checks use

    class micropython:  # stands in for the module
        @staticmethod
        def const(value):
            return value

        @staticmethod
        def heap_lock():
            pass

        @staticmethod
        def heap_unlock():
            pass

        @staticmethod
        def alloc_emergency_exception_buf(size):
            pass

    sys.modules["micropython"] = micropython


PINS = {}  # GPIO number -> the Pin made for it last
PWMS = []


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, gpio=None, mode=None, pull=None, value=None):
        self.level = 1 if value is None else value  # buttons idle high (pulled up)
        self.flag = 0
        self.handler = None
        self._irq = Irq(self)
        PINS[gpio] = self

    def value(self, level=None):
        if level is None:
            return self.level
        self.level = level
        return None

    def irq(self, handler=None, trigger=None, hard=False):
        if handler is not None:
            self.handler = handler
        return self._irq


class Irq:
    def __init__(self, pin):
        self.pin = pin

    def flags(self):
        return self.pin.flag


class PWM:
    def __init__(self, pin=None):
        self.hz = 0
        self.duty = None
        self.duties = []
        PWMS.append(self)

    def freq(self, hz):
        self.hz = hz

    def duty_u16(self, duty):
        self.duty = duty
        self.duties.append(duty)


class machine:  # stands in for the module
    Pin = Pin
    PWM = PWM


sys.modules["machine"] = machine

PERIOD = 1 << 30  # rp2's ticks wrap


class FakeTime:
    """time as the firmware uses it, with a settable clock."""

    now_us = 0
    now_ms = 0

    @staticmethod
    def ticks_us():
        return FakeTime.now_us

    @staticmethod
    def ticks_ms():
        return FakeTime.now_ms

    @staticmethod
    def ticks_add(ticks, delta):
        return (ticks + delta) % PERIOD

    @staticmethod
    def ticks_diff(end, start):
        return (end - start + PERIOD // 2) % PERIOD - PERIOD // 2


passed = []


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    passed.append(what)


def check_lines(fw):
    check(fw["edge_line"](True, "P1", 2**40) == "D P1 1099511627776\n", "D line")
    check(fw["edge_line"](False, "UNDO", 0) == "U UNDO 0\n", "U line")
    edges_for = fw["edges_for"]
    check(edges_for(False, True, 0) == (True,), "a press")
    check(edges_for(False, True, 1) == (True, False), "a press already bounced up")
    check(edges_for(False, False, 0) == (True,), "a press whose fall was missed")
    check(edges_for(True, False, 1) == (False,), "a release")
    check(edges_for(True, True, 0) == (), "a bounce while held")
    check(edges_for(False, False, 1) == (), "a rise while up")
    check(fw["time_line"](2**40) == "T 1099511627776\n", "T line")


def check_time_lines(fw):
    times = fw["TimeLines"]()
    after = times.after_drain
    check(after(0, b"", -1) == b"T 0\n", "a T at once")
    check(after(500, b"", -1) == b"", "no T before its time")
    check(after(100_000, b"", -1) == b"T 100000\n", "a T every 100 ms")
    check(after(100_900, b"D P1 100800\n", 100_800) == b"D P1 100800\nT 100900\n", "with lines")
    check(after(101_900, b"", -1) == b"", "the lines were covered")
    # An edge whose interrupt came between the reading of the time and the drain.
    drained = b"D P2 102950\n"
    check(after(102_900, drained, 102_950) == drained + b"T 102900\n", "an edge after the T")
    check(after(103_900, b"", -1) == b"T 103900\n", "covered on the next pass")
    check(after(104_900, b"", -1) == b"", "and then quiet again")


def check_commands(fw):
    parse = fw["parse_command"]
    check(parse(b"L P3 blink") == ("L", "P3", "blink"), "L")
    check(parse(b"L UNDO off\r") == ("L", "UNDO", "off"), "L with CR")
    check(parse(b"B 880 120") == ("B", 880, 120), "B")
    check(parse(b"B 1 99999") == ("B", 20, 10000), "B clamped")
    check(parse(b"B 30000 0") == ("B", 20000, 0), "B 0 ms silences")
    for bad in (b"", b"L P9 on", b"L P1 dim", b"B -1 5", b"B 4 x", b"L P1 on x", b"\xff", b"AT"):
        check(parse(bad) is None, f"{bad!r} is not a command")
    lines = fw["LineBuffer"]()
    check(lines.feed(b"L P1 o") == [], "half a command waits")
    check(lines.feed(b"n\nB 1 2\nL") == [b"L P1 on", b"B 1 2"], "commands cut at newlines")
    check(lines.feed(b"B 440 1" + b"0" * 100 + b"\nL P2 on\n") == [b"L P2 on"], "too long")


def check_ticks(fw):
    true_us = PERIOD - 1000
    extender = fw["TickExtender"](true_us % PERIOD)
    for step in (500, 999, 1, 123456789, PERIOD // 2 - 1, 7, PERIOD // 2 - 1, 3):
        true_us += step
        check(extender.extend(true_us % PERIOD) == true_us, f"extended {true_us}")
    # A stamp from just before the loop's own reading maps just before it.
    check(extender.extend((true_us - 10) % PERIOD) == true_us - 10, "a reading a little back")


def check_interrupts(fw):
    pins = tuple(Pin() for _ in fw["BUTTON_PINS"])
    fw["_pins"] = pins
    fw["_irqs"] = tuple(pin.irq() for pin in pins)
    on_edge = fw["_on_edge"]

    def edge(i, level, flag, t_us):
        pins[i].level = level
        pins[i].flag = flag
        FakeTime.now_us = t_us
        micropython.heap_lock()  # the handler must not allocate
        try:
            on_edge(pins[i])
        finally:
            micropython.heap_unlock()

    edge(2, 0, Pin.IRQ_FALLING, PERIOD - 5)  # P3 down, just before ticks_us wraps
    edge(0, 0, Pin.IRQ_FALLING, PERIOD - 2)  # P1 down
    edge(2, 1, Pin.IRQ_RISING, 3)  # P3 up, after the wrap
    edge(9, 1, Pin.IRQ_FALLING, 10)  # INVALID tapped, back up before the handler ran
    down = bytearray(len(pins))
    extender = fw["TickExtender"](PERIOD - 100)
    lines, newest = fw["drain"](extender, down)
    want = (
        f"D P3 {PERIOD - 5}\nD P1 {PERIOD - 2}\nU P3 {PERIOD + 3}\n"
        f"D INVALID {PERIOD + 10}\nU INVALID {PERIOD + 10}\n"
    )
    check(lines == want.encode(), f"drained {lines!r}")
    check(newest == PERIOD + 10, "the newest stamp drained")
    check(list(down) == [1] + [0] * (len(down) - 1), "P1 is held")
    check(fw["drain"](extender, down) == (b"", -1), "nothing twice")
    for n in range(fw["RING_SIZE"] + 5):
        edge(1, n % 2, Pin.IRQ_FALLING, 100 + n)
    check(fw["_lost"] == 6, "a full ring drops and counts")


def check_lights(fw):
    leds = {"P1": Pin(value=0), "P2": Pin(value=0)}
    beeper = PWM()
    lights = fw["Lights"](leds, beeper)
    lights.apply(("L", "P1", "blink"), 0)
    lights.apply(("L", "P2", "on"), 0)
    lights.apply(("L", "VALID", "on"), 0)  # no LED: ignored
    lights.update(0)
    check((leds["P1"].level, leds["P2"].level) == (1, 1), "blink starts lit")
    lights.update(260)
    check((leds["P1"].level, leds["P2"].level) == (0, 1), "blink goes dark, on stays")
    lights.apply(("B", 440, 100), PERIOD - 50)  # the beep's end wraps ticks_ms
    check((beeper.hz, beeper.duty) == (440, 32768), "beeping")
    lights.update(30)
    check(beeper.duty == 32768, "still beeping")
    lights.update(50)
    check(beeper.duty == 0, "the beep ends on time")


class StopLoop(Exception):
    pass


class Host:
    """The USB serial port and select as main() uses them, played from a script: each
    pass of the loop's pause runs the next step (press a button, type a command), and
    the last step stops the loop."""

    def __init__(self, steps):
        self.steps = list(steps)
        self.typed = b""
        self.written = b""
        self.stdin = self
        self.stdout = self
        self.buffer = self
        self.POLLIN = 1

    def poll(self, timeout=None):  # select.poll() and its poll(), both
        if timeout is None:
            return self
        if timeout == 0:
            return [(self, self.POLLIN)] if self.typed else []
        if not self.steps:
            raise StopLoop
        FakeTime.now_us += 1000  # the loop's pause
        self.steps.pop(0)()
        return []

    def register(self, stream, events):
        pass

    def read(self, n):
        byte, self.typed = self.typed[:n], self.typed[n:]
        return byte

    def write(self, data):
        self.written += data


class MicropythonOnRp2:
    """rp2 builds have alloc_emergency_exception_buf; the WebAssembly port does not."""

    @staticmethod
    def alloc_emergency_exception_buf(size):
        pass


def check_main(fw):
    host = Host([])
    fw["sys"] = host
    fw["select"] = host
    if not hasattr(micropython, "alloc_emergency_exception_buf"):
        fw["micropython"] = MicropythonOnRp2
    fw["_head"] = fw["_tail"] = 0

    def press(gpio):
        """A press half-way through the loop's pause."""

        def step():
            pin = PINS[gpio]
            pin.level, pin.flag = 0, Pin.IRQ_FALLING
            now = FakeTime.now_us
            FakeTime.now_us -= 500
            pin.handler(pin)
            FakeTime.now_us = now

        return step

    def type_in(text):
        def step():
            host.typed += text

        return step

    def wait(ms):
        def step():
            FakeTime.now_ms += ms
            FakeTime.now_us += 1000 * ms

        return step

    FakeTime.now_us = 5_000
    host.steps = [press(3), type_in(b"L P2 on\nB 880 50\n"), wait(49), wait(1), wait(100)]
    try:
        fw["main"]()
        raise AssertionError("main() returned")
    except StopLoop:
        passed.append("main() ran its script")
    want = b"HELLO referee-board 1\nT 5000\nD P2 5500\nT 6000\nT 160000\n"
    check(host.written == want, f"wrote {host.written!r}")
    buttons = [gpio for gpio, pin in PINS.items() if pin.handler is fw["_on_edge"]]
    check(sorted(buttons) == [*range(2, 14), 26], "an interrupt on each button, GP2-GP13 and GP26")
    check(PINS[15].level == 1, "P2's LED (GP15) is lit")
    check(PWMS[-1].hz == 880, "the beep's pitch")
    check(PWMS[-1].duties == [0, 32768, 0], "silent, beeping, silent again after 50 ms")


def run(source):
    fw = {"__name__": "pico_firmware"}
    exec(source, fw)
    fw["time"] = FakeTime
    for checks in (
        check_lines,
        check_time_lines,
        check_commands,
        check_ticks,
        check_interrupts,
        check_lights,
    ):
        checks(fw)
    check_main(fw)
    print(sys.implementation.name, len(passed), "firmware checks passed")
