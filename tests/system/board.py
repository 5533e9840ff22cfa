"""The serial button board, played from the host: the far end of the guest's USB serial port.

QEMU backs the guest's USB serial adapter with a pty on the host; this writes the board's
protocol there (docs/protocol.md) as the Pico's firmware does: HELLO,
D/U lines stamped with the board's own microsecond clock, and a `T <t_us>` watermark every
100 ms and right after each edge. It reads back what the referee sends (L and B lines).
"""

import os
import select
import threading
import time

WATERMARK_S = 0.1


class HostBoard:
    def __init__(self, pty_fd: int) -> None:
        self.fd = os.dup(pty_fd)  # the machine holds the pty open: the board stays plugged
        self.epoch_ns = time.monotonic_ns()
        self.lock = threading.RLock()  # one line or race at a time, and no T between
        self.received = bytearray()
        self.lines: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="host-board", daemon=True)
        self.thread.start()

    def now_us(self) -> int:
        """The board's clock: microseconds since it was plugged in."""
        return (time.monotonic_ns() - self.epoch_ns) // 1000

    def _write(self, *lines: str) -> None:
        with self.lock:
            os.write(self.fd, "".join(line + "\n" for line in lines).encode("ascii"))

    def hello(self) -> None:
        self._marked("HELLO referee-board 1")

    def _marked(self, *lines: str) -> None:
        """Lines with their watermark after them."""
        self._write(*lines, f"T {self.now_us()}")

    def edge(self, kind: str, button: str) -> int:
        """One edge (D or U) stamped now, with its watermark right after; its stamp."""
        t_us = self.now_us()
        self._marked(f"{kind} {button} {t_us}")
        return t_us

    def press(self, button: str, hold_s: float = 0.08) -> int:
        t_us = self.edge("D", button)
        time.sleep(hold_s)
        self.edge("U", button)
        return t_us

    def race(self, first: str, second: str, gap_us: int) -> tuple[int, int]:
        """Two presses gap_us apart on the board's clock, sent in the reverse order, as the
        protocol allows before the next T line: the referee must order them by their
        stamps, not by their arrival. No T goes out between the stamps and the lines."""
        with self.lock:
            t1 = self.now_us()
            t2 = t1 + gap_us
            time.sleep((t2 - self.now_us()) / 1e6 + 0.001)  # the later stamp is in the past
            self._marked(f"D {second} {t2}", f"D {first} {t1}")
        time.sleep(0.08)
        self._marked(f"U {first} {self.now_us()}", f"U {second} {self.now_us()}")
        return t1, t2

    def _run(self) -> None:
        next_mark = time.monotonic()
        while not self.stop.is_set():
            now = time.monotonic()
            if now >= next_mark:
                self._write(f"T {self.now_us()}")
                next_mark = now + WATERMARK_S
            ready, _, _ = select.select([self.fd], [], [], max(0.0, next_mark - now))
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    continue
                with self.lock:
                    self.received += chunk
                    *done, rest = self.received.split(b"\n")
                    self.lines += [line.decode("ascii", "replace") for line in done]
                    self.received[:] = rest

    def sent_by_referee(self, prefix: str) -> list[str]:
        with self.lock:
            return [line for line in self.lines if line.startswith(prefix)]

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        os.close(self.fd)
