"""A button board for tests: a pseudo-terminal that speaks the board's protocol.

The referee opens `board.path` (a symlink to the pty's slave, as /dev/serial/by-id/... is
to /dev/ttyACM0) with pyserial exactly as it opens a real board; the test writes the
board's lines on the master side and reads back what the referee sent. `unplug()` removes
the link and closes the pty, as pulling the USB cable does; `plug()` brings a new one.

pyserial flushes its input when it opens a port, so lines written before the referee has
the port open are lost. `wait_connected()` waits for the LED states the referee sends on
opening the port: lines written after it returns are read.

A pty hands written bytes to the other side a moment later (the kernel's work queue). A
test that reads the port itself, in its own thread, makes the board `synchronous`: each
write returns once its bytes are there to be read.

The board has a clock, as a real one has (`clock_us`, from its plugging in), for tests
that run in real time against the daemon: `tick()` sends a T line every 100 ms as the
firmware does, and `edges_now()` sends edges stamped a little before now with their T.
"""

import fcntl
import os
import select
import struct
import termios
import threading
import time
import tty
from pathlib import Path
from types import TracebackType

from referee.buttons import BUTTONS


class FakeBoard:
    def __init__(
        self, directory: Path, name: str = "ttyACM-fake", *, synchronous: bool = False
    ) -> None:
        self.path = directory / name
        self.synchronous = synchronous
        self._master: int | None = None
        self._slave: int | None = None
        self._received = bytearray()
        # Held while a line is stamped and written: T lines from the ticking thread
        # never pass an edge stamped before them.
        self.lock = threading.RLock()
        self._ticking: threading.Thread | None = None
        self._stop_ticking = threading.Event()
        self._plugged_ns = 0
        self._last_t_us = 0  # the board's last T line
        self.plug()

    def plug(self) -> None:
        """Connect a fresh board (a new pty) at `path`."""
        if self._master is not None:
            raise RuntimeError("the fake board is already plugged in")
        self._master, self._slave = os.openpty()
        # Raw from the start: a pty echoes by default, and the echo of our own lines would
        # read back as if the referee had sent them.
        tty.setraw(self._slave)
        self.path.symlink_to(os.ttyname(self._slave))
        self._received.clear()
        self._plugged_ns = time.monotonic_ns()
        self._last_t_us = 0

    def unplug(self) -> None:
        """Pull the cable: the path goes away and the referee's next read fails."""
        if self._master is None or self._slave is None:
            raise RuntimeError("the fake board is not plugged in")
        self.stop_ticking()
        self.path.unlink()
        os.close(self._master)
        os.close(self._slave)
        self._master = self._slave = None

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def write(self, data: bytes) -> None:
        """Raw bytes to the referee: half lines, garbage, several lines at once."""
        if self._master is None or self._slave is None:
            raise RuntimeError("the fake board is not plugged in")
        waiting = self._waiting()
        with self.lock:
            os.write(self._master, data)
        if self.synchronous:
            deadline = time.monotonic() + 2
            while self._waiting() < waiting + len(data):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the pty did not pass on {data!r} within 2 s")
                os.sched_yield()

    def _waiting(self) -> int:
        """Bytes written and not read yet on the referee's side."""
        assert self._slave is not None
        buf = fcntl.ioctl(self._slave, termios.TIOCINQ, b"\0\0\0\0")
        return int(struct.unpack("i", buf)[0])

    def send(self, *lines: str) -> None:
        """Protocol lines, "\\n" added, in one write (so the referee reads them together)."""
        with self.lock:
            self.write("".join(line + "\n" for line in lines).encode("ascii"))
            for line in lines:
                if line.startswith("T "):
                    self._last_t_us = max(self._last_t_us, int(line[2:]))

    def hello(self) -> None:
        self.send("HELLO referee-board 1")

    def down(self, button: str, t_us: int) -> None:
        self.send(f"D {button} {t_us}")

    def up(self, button: str, t_us: int) -> None:
        self.send(f"U {button} {t_us}")

    def t_line(self, t_us: int) -> None:
        """A T line: every edge stamped before t_us has been sent."""
        self.send(f"T {t_us}")

    def down_then_t(self, button: str, t_us: int, t_after: int | None = None) -> None:
        """A press and the T line after it (t_us + 1 unless given), in one write, as the
        firmware sends them."""
        self.send(f"D {button} {t_us}", f"T {t_us + 1 if t_after is None else t_after}")

    def up_then_t(self, button: str, t_us: int, t_after: int | None = None) -> None:
        self.send(f"U {button} {t_us}", f"T {t_us + 1 if t_after is None else t_after}")

    def clock_us(self) -> int:
        """The board's clock: microseconds since it was plugged in."""
        return (time.monotonic_ns() - self._plugged_ns) // 1000

    def edges_now(self, *edges: tuple[str, str, int]) -> int:
        """Edges (kind D or U, button, how many us before now they happened), in that
        order, and the T that covers them, in one write; returns now on the board's clock.
        It waits for its clock to pass the last T first: no edge is stamped before it."""
        with self.lock:
            self.wait_until_us(self._last_t_us + max(ago for _, _, ago in edges) + 1)
            now = self.clock_us()
            lines = (f"{kind} {button} {now - ago}" for kind, button, ago in edges)
            self.send(*lines, f"T {now + 1}")
        return now

    def wait_until_us(self, t_us: int) -> None:
        """Let the board's clock run to t_us (its stamps are checked against it)."""
        while (left_us := t_us - self.clock_us()) > 0:
            time.sleep(left_us / 1e6)

    def tick(self) -> None:
        """Send a T line every 100 ms, as the firmware does, until unplugged."""
        if self._ticking is not None:
            raise RuntimeError("the fake board is already ticking")
        self._stop_ticking.clear()

        def ticking() -> None:
            while not self._stop_ticking.wait(0.1):
                with self.lock:
                    self.t_line(max(self.clock_us(), self._last_t_us))

        self._ticking = threading.Thread(target=ticking, name="fake-board-ticks", daemon=True)
        self._ticking.start()

    def stop_ticking(self) -> None:
        """No more T lines: a board whose lines are held up (its loop, its USB)."""
        self._stop_ticking.set()
        if self._ticking is not None:
            self._ticking.join()
            self._ticking = None

    def garbage(self, data: bytes) -> None:
        """A line that is not the protocol ("\\n" added unless there)."""
        self.write(data if data.endswith(b"\n") else data + b"\n")

    def read_line(self, timeout_s: float = 2.0) -> str:
        """The next line the referee sent (without its "\\n"); TimeoutError if none came."""
        if self._master is None:
            raise RuntimeError("the fake board is not plugged in")
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._received:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._master], [], [], max(left, 0))
            if not ready:
                raise TimeoutError(f"the referee sent no line within {timeout_s} s")
            self._received += os.read(self._master, 1024)
        line, _, rest = bytes(self._received).partition(b"\n")
        self._received[:] = rest
        return line.decode("ascii")

    def wait_connected(self, timeout_s: float = 2.0) -> dict[str, str]:
        """Wait for the referee to open the board; return the LED modes it then sends."""
        leds = {}
        for _ in BUTTONS:
            kind, button, mode = self.read_line(timeout_s).split(" ")
            if kind != "L":
                raise AssertionError(f"expected the referee's LED states, got {kind!r} first")
            leds[button] = mode
        return leds

    def close(self) -> None:
        if self.plugged:
            self.unplug()

    def __enter__(self) -> "FakeBoard":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
