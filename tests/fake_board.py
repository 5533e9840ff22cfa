"""A button board for tests: a pseudo-terminal that speaks the board's protocol.

The referee opens `board.path` (a symlink to the pty's slave, as /dev/serial/by-id/... is
to /dev/ttyACM0) with pyserial exactly as it opens a real board; the test writes the
board's lines on the master side and reads back what the referee sent. `unplug()` removes
the link and closes the pty, as pulling the USB cable does; `plug()` brings a new one.

pyserial flushes its input when it opens a port, so lines written before the referee has
the port open are lost. `wait_connected()` waits for the LED states the referee sends on
opening the port: lines written after it returns are read.
"""

import os
import select
import time
import tty
from pathlib import Path
from types import TracebackType

from referee.edges import BUTTONS


class FakeBoard:
    def __init__(self, directory: Path, name: str = "ttyACM-fake") -> None:
        self.path = directory / name
        self._master: int | None = None
        self._slave: int | None = None
        self._received = bytearray()
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

    def unplug(self) -> None:
        """Pull the cable: the path goes away and the referee's next read fails."""
        if self._master is None or self._slave is None:
            raise RuntimeError("the fake board is not plugged in")
        self.path.unlink()
        os.close(self._master)
        os.close(self._slave)
        self._master = self._slave = None

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def write(self, data: bytes) -> None:
        """Raw bytes to the referee: half lines, garbage, several lines at once."""
        if self._master is None:
            raise RuntimeError("the fake board is not plugged in")
        os.write(self._master, data)

    def send(self, *lines: str) -> None:
        """Protocol lines, "\\n" added, in one write (so the referee reads them together)."""
        self.write("".join(line + "\n" for line in lines).encode("ascii"))

    def hello(self) -> None:
        self.send("HELLO referee-board 1")

    def down(self, button: str, t_us: int) -> None:
        self.send(f"D {button} {t_us}")

    def up(self, button: str, t_us: int) -> None:
        self.send(f"U {button} {t_us}")

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
