"""The serial button board: a USB microcontroller that stamps button edges in its own clock.

The protocol (DESIGN.md, "The serial button board"; the firmware is hardware/pico/main.py),
ASCII lines ended by "\\n":

    board -> referee   HELLO referee-board 1        once, when the board starts
                       D <button> <t_us>             button down at the board's microsecond clock
                       U <button> <t_us>             button up
    referee -> board   L <button> off|on|blink       its LED
                       B <hz> <ms>                   a beep

One thread opens the device with pyserial, frames the bytes into lines itself (pyserial's
readline hands back half a line on a timeout, and half a line must never count as one),
parses them and puts `Edge`s in the inbox.

The clock mapping (board_clock.py has the details): the board's clock orders and spaces
the presses exactly, so a burst of edges (each less than a second after the one before) is
mapped with one offset, `t_ns = 1000 * t_us + offset`, and keeps the board's differences to
the nanosecond. A line always arrives after its edge, so the smallest receive-minus-board
time seen is the best estimate of the offset; it is aged by the largest drift NTP may put
between the clocks (500 ppm) so that it follows the crystals' drift, and each burst's
offset sits a 5 ms margin below it so that a later, faster line of the burst still maps
before its arrival. Re-anchoring between bursts never moves an edge back: the mapping is
monotonic. A HELLO means the board restarted: the mapping starts afresh, as it does
whenever the device is (re)opened.

A line that does not parse is counted (`bad_lines`), logged with its repr and skipped. An
unplugged board is reported once as a `SourceStatus`, waited for and reopened. Commands sent
meanwhile are dropped, not queued: a stale beep is worse than none. But the LEDs are state,
not events: whenever the board is (re)opened it is sent every LED's latest mode, since a
board that was away has restarted dark, and one that stayed plugged while the referee
restarted still shows what the last run left.
"""

import errno
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import serial

from referee.edges import BUTTONS, Edge, Inbox, SourceStatus
from referee.inputs import gil_wait_ns
from referee.inputs.board_clock import MARGIN_NS, BoardClock

log = logging.getLogger(__name__)

HELLO = "HELLO referee-board 1"
LED_MODES = ("off", "on", "blink")

# The board stamps in microseconds, but a MicroPython hard interrupt on an RP2040 starts
# 20-25 us after its edge, up to 100 us when the loop is busy (measured in MicroPython
# issue #6957), and edges pending together are served in pin-number order: presses closer
# than that cannot be ordered honestly.
BOARD_RESOLUTION_NS = 100_000
# A line's trip before this thread has it: the firmware's 1 ms loop, a 1 ms USB
# full-speed frame and the kernel's tty layer, under 5 ms in all. Its edge reaches the
# inbox that long after its mapped time, plus this thread's wait for the GIL, plus the
# margin BoardClock maps times early by.
BOARD_TRIP_NS = 5_000_000

# How long after opening the port the board's kept output has surely arrived.
STALE_WAIT_S = 0.05
# The longest valid line is under 40 bytes; anything this long without a "\n" is noise.
MAX_LINE = 80
# A command to a board that stopped reading is dropped after this, not waited for.
WRITE_TIMEOUT_S = 0.1


class BadLine(ValueError):
    """A line from the board that is not the protocol; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class BoardEdge:
    button: str
    t_us: int
    down: bool


def parse_line(raw: bytes) -> BoardEdge | None:
    """The edge a line reports, or None for the board's HELLO; BadLine for anything else."""
    try:
        line = raw.decode("ascii")
    except UnicodeDecodeError:
        raise BadLine("not ASCII") from None
    # MicroPython's text stdout ends lines with "\r\n": take a board that prints that too.
    line = line.removesuffix("\r")
    if line == HELLO:
        return None
    fields = line.split(" ")
    if fields[0] == "HELLO":
        raise BadLine(f"not a greeting this referee speaks (it expects {HELLO!r})")
    if fields[0] not in ("D", "U"):
        raise BadLine("expected D, U or HELLO first")
    if len(fields) != 3:
        raise BadLine(f"expected 3 fields separated by one space, got {len(fields)}")
    kind, button, t_us = fields
    if button not in BUTTONS:
        raise BadLine(f"unknown button {button!r} (known: {' '.join(BUTTONS)})")
    if not t_us.isdigit():
        raise BadLine(f"t_us {t_us!r} is not a non-negative integer")
    return BoardEdge(button, int(t_us), kind == "D")


class SerialBoard:
    """The button board on a serial device, as an `InputSource` that also drives its LEDs."""

    resolution_ns = BOARD_RESOLUTION_NS

    def __init__(
        self,
        device: str,
        *,
        baud: int = 115_200,
        clock: Callable[[], int] = time.monotonic_ns,
        retry_s: float = 0.5,
    ) -> None:
        self.device = device
        self.name = f"serial button board ({device})"
        self.latency_ns = BOARD_TRIP_NS + gil_wait_ns() + MARGIN_NS
        self._baud = baud  # a USB board ignores it; a UART needs it
        self._now = clock
        self._retry_s = retry_s
        self._unplugged = f"button board unplugged: waiting for {device}"
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards _port between the reader and the senders
        self._port: serial.Serial | None = None
        self._leds = dict.fromkeys(BUTTONS, "off")  # as the referee wants them; under _lock
        self._thread: threading.Thread | None = None
        self._inbox: Inbox  # set by start(), before the thread that uses it runs
        self._last_status: tuple[bool, str] | None = None
        self._bad_lines = 0
        self._clock = BoardClock()
        self._partial = bytearray()
        self._skipping = False  # inside an over-long line: drop bytes up to its "\n"
        self._last_us: int | None = None
        self._held: set[str] = set()  # down, as far as the board's lines have said

    @property
    def bad_lines(self) -> int:
        """Lines received that did not parse, since start (for check-buttons and the screen)."""
        return self._bad_lines

    def held_at_start(self) -> tuple[str, ...]:
        return ()  # the protocol has no line for a button already down

    def start(self, inbox: Inbox) -> None:
        if self._thread is not None:
            raise RuntimeError(f"{self.name} is already started")
        self._inbox = inbox
        self._thread = threading.Thread(target=self._run, name="serial-board", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the reader at once, whether it is reading or waiting for the board."""
        self._stop.set()
        with self._lock:
            if self._port is not None:
                self._port.cancel_read()
        if self._thread is not None:
            self._thread.join()

    def set_led(self, button: str, mode: str) -> None:
        if button not in BUTTONS:
            raise ValueError(f"no button {button!r}: the buttons are {' '.join(BUTTONS)}")
        if mode not in LED_MODES:
            raise ValueError(f"LED mode {mode!r} is not one of {', '.join(LED_MODES)}")
        with self._lock:
            self._leds[button] = mode
            self._send(f"L {button} {mode}\n")

    def beep(self, hz: int, ms: int) -> None:
        if not (isinstance(hz, int) and isinstance(ms, int) and hz > 0 and ms > 0):
            raise ValueError(f"a beep needs whole positive Hz and ms, not {hz!r} Hz, {ms!r} ms")
        with self._lock:
            self._send(f"B {hz} {ms}\n")

    def _send(self, commands: str) -> None:
        """Write to the board if it is there; call with _lock held."""
        if self._port is None:
            log.debug("%s: not connected, dropped %r", self.name, commands)
            return
        try:
            self._port.write(commands.encode("ascii"))
        except OSError as exc:  # SerialException and its timeout are OSErrors
            # The reader sees an unplugged board for itself and reports it.
            log.warning("%s: could not send %r: %s", self.name, commands, exc)

    # The reader thread.

    def _run(self) -> None:
        try:
            self._serve()
        except Exception as exc:  # a bug: say so on the screen rather than fall silent
            log.exception("%s: the reader failed", self.name)
            self._report(ok=False, text=f"button board reader failed: {exc!r}")

    def _serve(self) -> None:
        while (port := self._connect()) is not None:
            try:
                self._read(port)
            except OSError as exc:  # SerialException is an OSError
                log.warning("%s: %s", self.name, exc)
                self._report(ok=False, text=self._unplugged)
            finally:
                with self._lock:
                    self._port = None
                port.close()
                self._release_held(self._now())
            # Not straight back: a device that opens but fails every read would spin.
            self._stop.wait(self._retry_s)

    def _connect(self) -> serial.Serial | None:
        """The opened port, once the device is there; None when closed meanwhile."""
        while not self._stop.is_set():
            if not Path(self.device).exists():
                self._report(ok=False, text=self._unplugged)
            else:
                try:
                    port = serial.Serial(
                        self.device,
                        baudrate=self._baud,
                        timeout=None,  # read() blocks until data, an unplug or cancel_read()
                        write_timeout=WRITE_TIMEOUT_S,
                        exclusive=True,  # a second reader would steal half the lines
                    )
                except OSError as exc:
                    self._report(ok=False, text=self._open_failure(exc))
                else:
                    self._drop_stale(port)
                    with self._lock:
                        if self._stop.is_set():
                            port.close()
                            return None
                        self._port = port
                        self._send("".join(f"L {b} {mode}\n" for b, mode in self._leds.items()))
                    self._restart()
                    self._report(ok=True, text="button board connected")
                    return port
            self._stop.wait(self._retry_s)
        return None

    def _open_failure(self, exc: OSError) -> str:
        if exc.errno == errno.ENOENT or not Path(self.device).exists():
            return self._unplugged
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"button board {self.device}: permission denied (is the user in dialout?)"
        if exc.errno == errno.EWOULDBLOCK:  # pyserial's exclusive lock is taken
            return f"button board {self.device} is in use by another program"
        return f"button board {self.device} cannot be opened: {exc}"

    def _drop_stale(self, port: serial.Serial) -> int:
        """Drop what the board kept while nobody listened: MicroPython holds its output for
        a host to come, presses included, and sends it as the port opens. Those presses
        are old; taken now they would be mapped to now. Returns the bytes dropped."""
        self._stop.wait(STALE_WAIT_S)
        dropped = port.in_waiting
        port.reset_input_buffer()
        if dropped:
            log.info("%s: dropped %d bytes the board kept while unheard", self.name, dropped)
        return int(dropped)

    def _release_held(self, t_ns: int) -> None:
        """The board went away or restarted with buttons down: their ups will never come."""
        for button in sorted(self._held):
            self._inbox.put(Edge(button, t_ns, down=False))
        self._held.clear()

    def _restart(self) -> None:
        """Forget what the last connection knew: the board may have restarted meanwhile."""
        self._clock.reset()
        self._last_us = None
        self._partial.clear()
        self._skipping = False

    def _read(self, port: serial.Serial) -> None:
        while True:
            data = port.read(1)
            if self._stop.is_set():
                return
            waiting = port.in_waiting
            if waiting:
                data += port.read(waiting)
            self._take(data, received_ns=self._now())

    def _take(self, data: bytes, received_ns: int) -> None:
        """Turn what one read brought into edges, all received at received_ns."""
        edges: list[BoardEdge] = []
        for raw in self._lines(data):
            try:
                edge = parse_line(raw)
            except BadLine as exc:
                self._bad(raw, str(exc))
                continue
            if edge is None:
                self._put_edges(edges, received_ns)
                edges = []
                self._release_held(received_ns)
                self._clock.reset()
                self._last_us = None
                log.info("%s: the board said hello; its clock is mapped afresh", self.name)
            elif self._last_us is not None and edge.t_us < self._last_us:
                self._bad(raw, f"t_us went back (the line before had {self._last_us})")
            else:
                self._last_us = edge.t_us
                edges.append(edge)
        self._put_edges(edges, received_ns)

    def _lines(self, data: bytes) -> Iterator[bytes]:
        """The complete lines in data; the unfinished rest waits for the next read."""
        *lines, rest = data.split(b"\n")
        for end in lines:
            line = bytes(self._partial) + end
            self._partial.clear()
            if self._skipping:  # the end of an over-long line, already counted
                self._skipping = False
            elif len(line) > MAX_LINE:
                self._bad(line, f"longer than {MAX_LINE} bytes")
            else:
                yield line
        if not self._skipping:
            self._partial += rest
            if len(self._partial) > MAX_LINE:
                self._bad(bytes(self._partial), f"longer than {MAX_LINE} bytes")
                self._partial.clear()
                self._skipping = True

    def _put_edges(self, edges: list[BoardEdge], received_ns: int) -> None:
        times = self._clock.map([edge.t_us for edge in edges], received_ns)
        for edge, t_ns in zip(edges, times, strict=True):
            if edge.down:
                self._held.add(edge.button)
            else:
                self._held.discard(edge.button)
            self._inbox.put(Edge(edge.button, t_ns, edge.down))

    def _bad(self, raw: bytes, why: str) -> None:
        self._bad_lines += 1
        log.warning("%s: ignored line %r: %s", self.name, raw, why)

    def _report(self, *, ok: bool, text: str) -> None:
        """Tell the main loop the board's condition, once per change."""
        if self._last_status != (ok, text):
            self._last_status = (ok, text)
            log.log(logging.INFO if ok else logging.WARNING, "%s: %s", self.name, text)
            self._inbox.put(SourceStatus(source=self.name, text=text, ok=ok))
