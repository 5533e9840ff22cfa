"""The benchmarks' outside world: the kernel's GPIO queue or a button board, and whatever
stops the box.

A process of its own, so that it goes on while the box is stopped (SIGSTOP) or busy. It
plays the buttons at the moments a plan says, in the order it says, stamped as the plan
says, and stops the box's process or makes a thread of the box hold the GIL between them:

- `gpio FD`: it writes edge events into the fake line request's pipe (tests/fake_gpio.py's
  records), stamped on CLOCK_MONOTONIC, the kernel's clock for the box.
- `serial FD`: it is the button board on a pseudo-terminal's master (docs/protocol.md):
  HELLO, then `D`/`U` lines stamped on its own microsecond clock, and `T` lines every
  100 ms and after every edge, each promising only what it has sent: while a plan still
  has an edge to send, no T passes that edge's stamp. What the box sends it is read and
  dropped.

It reads one plan a line from standard input (JSON) and answers each with one line:

    {"at": [[delay_ns, action...], ...]}   delays from when the plan arrived
      ["edge", button, stamp_ns, down]     an edge stamped stamp_ns after that, or when it
                                           is sent if stamp_ns is null
      ["stop", ms]                         SIGSTOP the box, SIGCONT it ms later
      ["gil", ms]                          ask the box's staller thread to hold the GIL
    answer: {"t0": ns}                     when the plan arrived, on CLOCK_MONOTONIC

    .venv/bin/python bench/drive.py gpio|serial FD STALLER_FD BOX_PID OFFSETS_JSON
"""

import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests/

from tests.fake_gpio import Feed

T_EVERY_NS = 100_000_000


def sleep_until(t_ns: int) -> None:
    while (left := t_ns - time.monotonic_ns()) > 0:
        time.sleep(left / 1e9)


class Gpio:
    def __init__(self, fd: int, offsets: dict[str, int]) -> None:
        self.feed = Feed(fd)
        self.offsets = offsets

    def planned(self, stamps: list[int]) -> None:
        pass

    def edge(self, button: str, stamp_ns: int, down: bool) -> None:
        self.feed.edge(self.offsets[button], stamp_ns, falling=down)


class Board:
    """The serial button board: its clock, its lines, its promises."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.zero_ns = time.monotonic_ns()  # its clock's 0: it started a moment ago
        self.lock = threading.Lock()
        self.unsent: list[int] = []  # stamps (ns) the current plan has still to send
        self.last_t = -1
        self._listened = threading.Event()
        threading.Thread(target=self._drop_commands, daemon=True).start()
        self._wait_listened()
        self._write("HELLO referee-board 1\n")
        threading.Thread(target=self._tick, daemon=True).start()

    def us(self, t_ns: int) -> int:
        return (t_ns - self.zero_ns) // 1000

    def planned(self, stamps: list[int]) -> None:
        with self.lock:
            self.unsent = sorted(stamps)

    def edge(self, button: str, stamp_ns: int, down: bool) -> None:
        with self.lock:
            if stamp_ns in self.unsent:
                self.unsent.remove(stamp_ns)
            self._write(f"{'D' if down else 'U'} {button} {self.us(stamp_ns)}\n")
            self._t_line()

    def _t_line(self) -> None:
        """A T as far as the board may promise now; with the lock held."""
        t = self.us(min([time.monotonic_ns(), *(s - 1000 for s in self.unsent)]))
        if t > self.last_t:
            self.last_t = t
            self._write(f"T {t}\n")

    def _tick(self) -> None:
        while True:
            time.sleep(T_EVERY_NS / 1e9)
            with self.lock:
                self._t_line()

    def _write(self, line: str) -> None:
        os.write(self.fd, line.encode())

    def _wait_listened(self) -> None:
        """Until the box sends its LED states: it listens from then on."""
        self._listened.wait(30)

    def _drop_commands(self) -> None:
        seen = b""
        while data := os.read(self.fd, 4096):
            seen = (seen + data)[-64:]
            if b"L UNDO" in seen:
                self._listened.set()


def main() -> int:
    kind, fd, staller_fd, box_pid = sys.argv[1], *(int(a) for a in sys.argv[2:5])
    # The kernel stamps an edge in its interrupt handler and queues it from the line's
    # interrupt thread (gpiolib-cdev), which runs at SCHED_FIFO 50: no task of normal
    # priority comes between the stamp and the queue. Playing the kernel, so does this
    # process, where it may (root); bench/box.py says which it got.
    with contextlib.suppress(PermissionError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    offsets = json.loads(sys.argv[5])
    buttons = Gpio(fd, offsets) if kind == "gpio" else Board(fd)
    stopped_until: int | None = None
    for line in sys.stdin:
        plan = json.loads(line)
        t0 = time.monotonic_ns()
        actions = sorted(plan["at"], key=lambda a: a[0])
        buttons.planned([t0 + a[3] for a in actions if a[1] == "edge" and a[3] is not None])
        for delay_ns, action, *args in actions:
            if stopped_until is not None and stopped_until <= t0 + delay_ns:
                sleep_until(stopped_until)
                os.kill(box_pid, signal.SIGCONT)
                stopped_until = None
            sleep_until(t0 + delay_ns)
            match action:
                case "edge":
                    button, stamp_ns, down = args
                    stamp = time.monotonic_ns() if stamp_ns is None else t0 + stamp_ns
                    buttons.edge(button, stamp, down)
                case "stop":
                    os.kill(box_pid, signal.SIGSTOP)
                    stopped_until = time.monotonic_ns() + round(args[0] * 1e6)
                case "gil":
                    os.write(staller_fd, f"{args[0]}\n".encode())
        if stopped_until is not None:
            sleep_until(stopped_until)
            os.kill(box_pid, signal.SIGCONT)
            stopped_until = None
        print(json.dumps({"t0": t0}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
