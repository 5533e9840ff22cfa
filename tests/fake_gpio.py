"""A GPIO line request for tests and benchmarks: the kernel's edge events through a pipe.

`FakeRequest` stands for `gpiod.LineRequest` as `referee.inputs.gpio.GpioButtons` uses
it: its descriptor is the read end of a pipe, readable while events wait, as the real
request's is. Whoever plays the kernel (a test, or another process in a benchmark)
writes events with chosen timestamps, in a chosen order, with `Feed`. tests/gpio_rig/
runs the real thing on a kernel.
"""

import contextlib
import os
import struct
from collections.abc import Sequence
from datetime import timedelta

import gpiod
from gpiod.line import Value

# An event on the pipe: line offset, rising (1) or falling (2), timestamp_ns, global_seqno.
RECORD = struct.Struct("<IIQQ")
RISING = gpiod.EdgeEvent.Type.RISING_EDGE.value
FALLING = gpiod.EdgeEvent.Type.FALLING_EDGE.value


class Feed:
    """The kernel's side: writes events for a FakeRequest to read (any process may)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seqno = 0

    def edge(self, offset: int, t_ns: int, *, falling: bool, seqno: int | None = None) -> None:
        self.seqno = self.seqno + 1 if seqno is None else seqno
        kind = FALLING if falling else RISING
        os.write(self.fd, RECORD.pack(offset, kind, t_ns, self.seqno))

    def press(self, offset: int, t_ns: int) -> None:
        self.edge(offset, t_ns, falling=True)

    def release(self, offset: int, t_ns: int) -> None:
        self.edge(offset, t_ns, falling=False)


class FakeRequest:
    def __init__(self, offsets: Sequence[int], low: Sequence[int] = ()) -> None:
        self.offsets = list(offsets)
        self.low = set(low)  # lines held low (pressed) when the request is made
        self._r, w = os.pipe()
        os.set_blocking(self._r, False)
        self.feed = Feed(w)
        self._partial = b""
        self.released = False

    @classmethod
    def on(cls, chip: object, offsets: Sequence[int]) -> "FakeRequest":
        """As `referee.inputs.gpio.request_buttons` opens one: every line up."""
        return cls(offsets)

    @property
    def fd(self) -> int:
        return self._r

    def wait_edge_events(self, timeout: timedelta | float | None = None) -> bool:
        assert timeout == 0, "the main loop waits in its own poll, never in the request"
        return len(self._partial) >= RECORD.size or self._fill()

    def _fill(self) -> bool:
        with contextlib.suppress(BlockingIOError):  # nothing written yet
            self._partial += os.read(self._r, 64 * RECORD.size)
        return len(self._partial) >= RECORD.size

    def read_edge_events(self, max_events: int | None = None) -> list[gpiod.EdgeEvent]:
        self._fill()
        whole = len(self._partial) // RECORD.size * RECORD.size
        data, self._partial = self._partial[:whole], self._partial[whole:]
        events = []
        for offset, kind, t_ns, seqno in RECORD.iter_unpack(data):
            events.append(gpiod.EdgeEvent(kind, t_ns, offset, seqno, seqno))
        return events

    def get_values(self, lines: Sequence[int | str] | None = None) -> list[Value]:
        return [Value.INACTIVE if o in self.low else Value.ACTIVE for o in lines or self.offsets]

    def release(self) -> None:
        self.released = True
        os.close(self._r)
        os.close(self.feed.fd)
