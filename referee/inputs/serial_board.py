"""The serial button board: a USB microcontroller that stamps button edges in its own clock.

Its lines are docs/protocol.md (the firmware is hardware/pico/main.py). The main loop
reads it like any source: the port is opened non-blocking (pyserial, timeout 0), its
descriptor is in the loop's wait, and `read` takes what is there without ever waiting.
board_lines.py cuts and parses the lines; board_stream.py puts them in event time (sorted
at the board's T lines, mapped to the daemon's clock, impossible stamps kept out). Here:
the port, its comings and goings, and the source's watermark.

- **Watermark.** While the board sends T lines, its last T, mapped. Otherwise (an older
  board without them, a board not heard yet, or one stalled) the keyboard's rule with the
  settle window as how much longer than the fastest a line's trip may be: the time the
  port was last read empty, less `settle_ns` and less the mapping's margin (a line is
  mapped up to the margin plus its extra trip before its arrival, board_clock.py).
- **Stalled.** A board in watermark mode whose last T line is STALL_NS old, judged right
  after the port has been read (so that a stall of the daemon itself, after which the
  board's lines are all there, is not taken for the board's), is shown as stalled until
  its T lines come again; meanwhile its watermark follows the fallback rule, so the
  game's timers go on, and what it sends goes on as from a board without T lines.
- **Opening.** A missing or unplugged board is tried again every RETRY_NS, from `read`
  (`wake_ns` says when); each condition is reported once, as a `SourceStatus`. For
  STALE_WAIT_NS after the port opens, what comes is what MicroPython kept for a host while
  nobody listened, presses included: old, and mapped to now if taken, so it is dropped.
- **Commands.** `set_led` and `beep` write at once (the speaker's thread beeps: a lock
  guards the port). Those sent while the board is away are dropped, not queued: a stale
  beep is worse than none. But the LEDs are state: every (re)opening sends every LED's
  latest mode, since a board that was away has restarted dark, and one that stayed
  plugged while the referee restarted still shows what the last run left.
"""

import errno
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import serial
from serial.tools import list_ports

from referee.buttons import BUTTONS, PIN_BUTTONS
from referee.framing import LineFramer
from referee.inbox import SourceStatus
from referee.inputs import SourceItem
from referee.inputs.board_clock import MARGIN_NS
from referee.inputs.board_lines import LED_MODES, MAX_LINE, BadLine, parse_line
from referee.inputs.board_stream import JUMPED, BoardStream
from referee.inputs.burst_log import BurstLog

log = logging.getLogger(__name__)

# The board stamps in microseconds, but a MicroPython hard interrupt on an RP2040 starts
# 20-25 us after its edge, up to 100 us when the loop is busy (measured in MicroPython
# issue #6957), and edges pending together are served in pin-number order: presses closer
# than that cannot be ordered honestly.
BOARD_RESOLUTION_NS = 100_000
# How long after opening the port the board's kept output has surely arrived.
STALE_WAIT_NS = 50_000_000
RETRY_NS = 500_000_000
# A board in watermark mode sends a T at least every 100 ms: ten missed is a stall.
STALL_NS = 1_000_000_000
# A command to a board that stopped reading is dropped after this, not waited for.
WRITE_TIMEOUT_S = 0.1
READ_SIZE = 4096
# Reads a call makes at most: a flood of bytes cannot hold the main loop.
MAX_READS = 16

CONNECTED = "button board connected"
STALLED = f"button board stalled: no T line for {STALL_NS / 1e9:g} s"
HEARD_AGAIN = "button board heard again"


class SerialBoard:
    """The button board on a serial device, as an `InputSource` that also drives its LEDs
    and its beeper."""

    resolution_ns = BOARD_RESOLUTION_NS
    buttons = PIN_BUTTONS

    def __init__(
        self,
        device: str,
        *,
        settle_ns: int,
        baud: int = 115_200,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.device = device
        self.name = f"serial button board ({device})"
        self._baud = baud  # a USB board ignores it; a UART needs it
        # The fallback rule's lag: a line up to settle_ns slower than the fastest, mapped.
        self._lag_ns = settle_ns + MARGIN_NS
        self._now = clock
        self._unplugged = f"button board unplugged: waiting for {device}"
        self._seen = False  # opened once: a device missing since the start may be a typo
        self._missing: str | None = None  # what to say of it, the ports listed once
        self._lock = threading.Lock()  # guards _port between the main loop and the speaker
        self._port: serial.Serial | None = None  # open and listened to
        self._leds = dict.fromkeys(BUTTONS, "off")  # as the referee wants them; under _lock
        self._opening: serial.Serial | None = None  # open, its kept output not dropped yet
        self._ready_at = 0  # when the kept output has surely come
        self._retry_at = 0
        self._items: list[SourceItem] = []
        self._last_status: dict[str, tuple[bool, str]] = {}  # by condition
        self._bad_lines = 0
        self._bad_log = BurstLog(log, self.name, "lines that do not parse")
        self._impossible_shown = 0
        self._jumps_shown = 0
        self._framer = LineFramer(MAX_LINE)
        self._stream = BoardStream(self.name)
        self._stalled = False
        now = clock()
        self._empty_ns = now  # when the port was last read empty, or found not there
        self._received_ns = now  # when bytes last came
        self._watermark = now - self._lag_ns
        self._connect(now)

    @property
    def bad_lines(self) -> int:
        """Lines that did not parse, since start."""
        return self._bad_lines

    @property
    def impossible_times(self) -> int:
        """Lines whose stamps could not be true, since start."""
        return self._stream.impossible

    def fileno(self) -> int | None:
        port = self._port
        return None if port is None else int(port.fileno())

    @property
    def watermark_ns(self) -> int:
        return self._watermark

    def wake_ns(self, wanted_ns: int | None) -> int | None:
        times = []
        if self._opening is not None:
            times.append(self._ready_at)
        elif self._port is None:
            times.append(self._retry_at)
        if self._port is not None and self._stream.timed and not self._stalled:
            # Its T lines wake the loop; this is to judge a silence.
            times.append(self._stream.last_t_received_ns + STALL_NS)
        elif wanted_ns is not None:
            times.append(wanted_ns + self._lag_ns)  # the fallback rule
        return min(times, default=None)

    def held_at_start(self) -> tuple[str, ...]:
        return ()  # the protocol has no line for a button already down

    def read(self) -> list[SourceItem]:
        now = self._now()
        if self._port is None:
            self._connect(now)
        if self._port is None:
            self._empty_ns = now
        else:
            self._read_port(self._port)
        self._bad_log.tick(now)
        self._stream.tick(now)
        self._judge()
        items, self._items = self._items, []
        return items

    def close(self) -> None:
        with self._lock:
            port, self._port = self._port, None
        opening, self._opening = self._opening, None
        for each in (port, opening):
            if each is not None:
                each.close()

    # Commands: from the main loop (LEDs) and the speaker's thread (beeps).

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
            # The next read finds an unplugged board for itself and reports it.
            log.warning("%s: could not send %r: %s", self.name, commands, exc)

    # The port, from the main loop.

    def _connect(self, now: int) -> None:
        """Open the device when a retry is due; listen once its kept output is in."""
        if self._opening is None and now >= self._retry_at:
            self._retry_at = now + RETRY_NS
            self._open(now)
        if self._opening is not None and now >= self._ready_at:
            self._listen(self._opening)

    def _open(self, now: int) -> None:
        if not Path(self.device).exists():
            self._report(ok=False, text=self._unplugged if self._seen else self._never_seen())
            return
        try:
            self._opening = serial.Serial(
                self.device,
                baudrate=self._baud,
                timeout=0,  # reads take what is there: the main loop never waits on them
                write_timeout=WRITE_TIMEOUT_S,
                exclusive=True,  # a second reader would steal half the lines
            )
        except OSError as exc:
            self._report(ok=False, text=self._open_failure(exc))
            return
        self._ready_at = now + STALE_WAIT_NS

    def _never_seen(self) -> str:
        """A device missing since the start: a board not plugged in yet, or a wrong name;
        the ports there are tell which. Listed once, not at every retry: listing scans
        sysfs (1.6 ms here) on the main loop."""
        if self._missing is None:
            ports = ", ".join(sorted(port.device for port in list_ports.comports())) or "none"
            self._missing = (
                f"button board {self.device} does not exist (serial ports here: {ports}):"
                " waiting for it"
            )
        return self._missing

    def _open_failure(self, exc: OSError) -> str:
        if exc.errno == errno.ENOENT or not Path(self.device).exists():
            return self._unplugged if self._seen else self._never_seen()
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"button board {self.device}: permission denied (is the user in dialout?)"
        if exc.errno == errno.EWOULDBLOCK:  # pyserial's exclusive lock is taken
            return f"button board {self.device} is in use by another program"
        return f"button board {self.device} cannot be opened: {exc}"

    def _listen(self, port: serial.Serial) -> None:
        """Drop what the board kept while unheard, then take its lines from now on."""
        self._opening = None
        self._seen = True
        kept = b""
        try:
            for _ in range(MAX_READS):
                data = port.read(READ_SIZE)
                if not data:
                    break
                kept += data
        except OSError as exc:
            port.close()
            self._gone(exc)
            return
        self._framer.reset()
        if kept:
            log.info("%s: dropped %d bytes the board kept while unheard", self.name, len(kept))
            if not kept.endswith(b"\n"):
                self._framer.skip_line()
        self._stream.restart()
        with self._lock:
            self._port = port
            self._send("".join(f"L {b} {mode}\n" for b, mode in self._leds.items()))
        self._report(ok=True, text=CONNECTED)

    def _read_port(self, port: serial.Serial) -> None:
        for _ in range(MAX_READS):
            before = self._now()
            try:
                data = port.read(READ_SIZE)
            except OSError as exc:  # SerialException is an OSError: unplugged
                self._gone(exc)
                return
            if not data:
                self._empty_ns = before
                return
            self._received_ns = self._now()
            self._take(data, self._received_ns)

    def _take(self, data: bytes, received_ns: int) -> None:
        for raw in self._framer.feed(data):
            try:
                line = parse_line(raw)
            except BadLine as exc:
                self._bad_lines += 1
                self._bad_log.warn(received_ns, f"ignored line {raw!r}: {exc}")
                continue
            self._items += self._stream.take(raw, line, received_ns)

    def _gone(self, exc: OSError) -> None:
        """The port failed: the board was unplugged (or reset). Wait for it again."""
        now = self._now()
        log.warning("%s: %s", self.name, exc)
        with self._lock:
            port, self._port = self._port, None
        if port is not None:
            port.close()
        self._report(ok=False, text=self._unplugged)
        self._items += self._stream.end(now)
        self._stalled = False
        self._empty_ns = now
        self._retry_at = now + RETRY_NS

    def _judge(self) -> None:
        """After a read: impossible stamps, a stall, what waits, and the watermark."""
        stream = self._stream
        if stream.impossible != self._impossible_shown:
            self._impossible_shown = count = stream.impossible
            lines = "line" if count == 1 else "lines"
            text = f"button board: {count} {lines} with impossible times"
            self._report(ok=False, text=text, condition="times", logged=False)  # burst_log's
        if stream.jumps != self._jumps_shown:
            self._jumps_shown = stream.jumps
            self._report(ok=True, text=JUMPED, condition="clock")
        listening = self._port is not None
        silent_ns = self._empty_ns - stream.last_t_received_ns
        stalled = listening and stream.timed and silent_ns >= STALL_NS
        if stalled != self._stalled and listening:
            text = STALLED if stalled else HEARD_AGAIN
            self._report(ok=not stalled, text=text, condition="stall")
        self._stalled = stalled
        if stream.timed and not stalled:
            assert stream.watermark_ns is not None  # a T came
            self._watermark = max(self._watermark, stream.watermark_ns)
        else:
            self._items += stream.release(self._received_ns)
            self._watermark = max(self._watermark, self._empty_ns - self._lag_ns)

    def _report(self, *, ok: bool, text: str, condition: str = "link", logged: bool = True) -> None:
        """Tell the main loop one of the board's conditions, once per change."""
        if self._last_status.get(condition) != (ok, text):
            self._last_status[condition] = (ok, text)
            if logged:
                log.log(logging.INFO if ok else logging.WARNING, "%s: %s", self.name, text)
            self._items.append(SourceStatus(self.name, text, ok, condition))
