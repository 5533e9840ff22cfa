"""A sound card for tests and benchmarks: a simulated ADC clock behind `CapturePcm`.

`FakeCard` stands for `referee.audio.pcm.AlsaCapture`, the libasound calls, and for
nothing above them: capture.py's ring and clock.py's mapping run as they do on a card. Its
crystal is `ppm` off the monotonic clock, its pointer's stamps are late by up to
`jitter_ns` (a USB card's pointer moves a packet at a time, and the kernel stamps it after
it read it), its buffer overruns when it is not read in time, and it captures silence with
a click at chosen monotonic moments; it can be pulled out (`unplug`: every call fails as
ALSA's do for a USB card gone) and plugged back (`plug`, then opened again: `reopen`).
Its clock is the test's: `advance` moves it, and no call ever sleeps. `scenario` runs one
with clicks and overruns and finds each click in the ring by its known time.
`RealTimeCard` runs on the monotonic clock itself, at a card's pace, for the benchmark of
what capture costs (bench/capture.py).
"""

import math
import random
import threading
import time
from collections.abc import Iterable

import numpy as np

from referee.audio.capture import Capture
from referee.audio.pcm import PERIOD_US, CaptureError, Overrun, PcmStatus

NS_PER_S = 1_000_000_000
MS = 1_000_000
CLICK = 20_000


class FakeCard:
    def __init__(
        self,
        *,
        rate: int = 48_000,
        ppm: float = 0.0,
        jitter_ns: int = 1_000_000,
        late_only: bool = True,
        period: int = 960,
        buffer: int = 48_000,
        start_ns: int = 5_000 * NS_PER_S,
        clicks: Iterable[int] = (),
        ramp: bool = False,
        seed: int = 0,
    ) -> None:
        self.name = "fake"
        self.rate = rate
        self.period = period
        self.buffer = buffer
        # A card `ppm` fast takes its samples that much closer together.
        self.ppm = ppm
        self.true_period_ns = NS_PER_S / (rate * (1 + ppm / 1e6))
        self.jitter_ns = jitter_ns
        self.late_only = late_only
        self.now_ns = start_ns
        self.clicks = sorted(clicks)
        self.ramp = ramp  # each sample its frame's number since the card opened, mod 2**15
        self._random = random.Random(seed)
        self._changed = threading.Condition()
        self._t0 = start_ns  # when this run's frame 0 was taken
        self._read = 0  # frames of this run read
        self._frames_before = 0  # frames of earlier runs, for the ramp
        self.xrun = False
        self.closed = False
        self.plugged = True
        self.opened = 1  # times opened
        self.frames_read = 0  # by every run
        self.heard: list[int] = []  # the exact times of the clicks' samples that were read
        # Each overrun's gap: the times of the last sample read before it and the first after.
        self.gaps: list[tuple[int, int]] = []

    # The test's side.

    def advance(self, ns: int) -> None:
        with self._changed:
            self.now_ns += ns
            self._changed.notify_all()

    def wait_read(self, frames: int, timeout_s: float) -> bool:
        """Until frames in all have been read (by another thread), or timeout_s."""
        with self._changed:
            return self._changed.wait_for(lambda: self.frames_read >= frames, timeout_s)

    def unplug(self) -> None:
        """Pulled out: every call fails from now on, as ALSA's do (ENODEV), and what it
        took since it was last read is lost."""
        with self._changed:
            self.plugged = False
            self._changed.notify_all()

    def plug(self, rate: int | None = None) -> None:
        """Plugged back in: it takes samples again once it is opened again (reopen); at
        `rate`, a microphone of another rate in its socket."""
        if rate is not None:
            self.rate = rate
            self.true_period_ns = NS_PER_S / (rate * (1 + self.ppm / 1e6))
        self.plugged = True

    def reopen(self) -> "FakeCard":
        """Opened again (Capture's reopen): a new run from now, or CaptureError while it is
        unplugged."""
        if not self.plugged:
            raise CaptureError("audio open error: No such file or directory")
        self.restart()
        self.closed = False
        self.opened += 1
        return self

    def _gone(self) -> None:
        if not self.plugged:
            raise CaptureError(f"{self.name}: read: No such device")

    def frame_ns(self, frame: int) -> float:
        """When frame (of this run) was taken."""
        return self._t0 + frame * self.true_period_ns

    def _captured(self) -> int:
        return max(0, math.floor((self.now_ns - self._t0) / self.true_period_ns) + 1)

    def _check(self) -> None:
        self._gone()
        if self.xrun or self._captured() - self._read > self.buffer:
            self.xrun = True
            raise Overrun("fake")

    # CapturePcm.

    def wait(self, timeout_ms: int) -> None:
        with self._changed:
            self._changed.wait_for(
                lambda: (
                    not self.plugged or self.xrun or self._captured() - self._read >= self.period
                ),
                timeout_ms / 1000,
            )
        self._check()

    def read(self, out: np.ndarray) -> int:
        self._check()
        n = min(len(out), self._captured() - self._read)
        first = self._read
        if self.ramp:
            out[:n] = (np.arange(first, first + n) + self._frames_before) % 2**15
        else:
            out[:n] = 0
            lo = self.frame_ns(first) - self.true_period_ns / 2
            hi = self.frame_ns(first + n) - self.true_period_ns / 2
            for t in self.clicks:
                if lo <= t < hi:
                    frame = round((t - self._t0) / self.true_period_ns)
                    out[frame - first] = CLICK
                    self.heard.append(round(self.frame_ns(frame)))
        with self._changed:
            self._read += n
            self.frames_read += n
            self._changed.notify_all()
        return n

    def status(self) -> PcmStatus | None:
        self._gone()
        if self.xrun:
            return None
        lateness = self._random.uniform(0, self.jitter_ns)
        if not self.late_only:
            lateness -= self.jitter_ns / 2
        return PcmStatus(round(self.now_ns + lateness), self._captured() - self._read)

    def restart(self) -> None:
        self._gone()
        self.gaps.append((round(self.frame_ns(self._read - 1)), self.now_ns))
        self._frames_before += self._read
        self._t0 = self.now_ns
        self._read = 0
        self.xrun = False

    def close(self) -> None:
        self.closed = True


def drive(card: FakeCard, capture: Capture, seconds: float, rng: random.Random, overruns=()):
    """Run the card for `seconds`, the ring read at irregular moments (1 to 120 ms apart),
    and overrun it (left unread past its buffer) at each of `overruns` (seconds from now)."""
    start = card.now_ns
    end = start + round(seconds * NS_PER_S)
    pending = sorted(start + round(s * NS_PER_S) for s in overruns)
    while card.now_ns < end:
        if pending and card.now_ns >= pending[0]:
            pending.pop(0)
            stall = card.buffer * card.true_period_ns + rng.uniform(10, 500) * MS
            card.advance(round(stall))
        card.advance(rng.randint(1, 120) * MS)
        capture.pump(0)


def click_times(start_ns: int, seconds: float, rng: random.Random) -> list[int]:
    """A click about every 0.3 s, from half a second in to half a second before the end."""
    t = start_ns + NS_PER_S // 2
    times = []
    while t < start_ns + round((seconds - 0.5) * NS_PER_S):
        times.append(t)
        t += round(rng.uniform(0.2, 0.4) * NS_PER_S)
    return times


def marker_errors(capture: Capture, heard: list[int]) -> list[int]:
    """Each click found in the ring by its known time: where the ring puts it, less that."""
    errors = []
    for t in heard:
        sound = capture.sound(t - 20 * MS, t + 20 * MS)
        assert sound.samples.max() > 0, "a click read from the card is missing from the ring"
        errors.append(round(sound.ns(int(np.argmax(sound.samples)))) - t)
    return errors


def scenario(ppm, jitter_ns, late_only, overruns, seed, seconds=12.0):
    rng = random.Random(seed)
    start = 5_000 * NS_PER_S
    card = FakeCard(
        ppm=ppm,
        jitter_ns=jitter_ns,
        late_only=late_only,
        clicks=click_times(start, seconds, rng),
        start_ns=start,
        seed=seed,
    )
    capture = Capture(card)
    drive(card, capture, seconds, rng, overruns)
    return card, capture, marker_errors(capture, card.heard)


class RealTimeCard(FakeCard):
    """A FakeCard whose clock is CLOCK_MONOTONIC: its periods come at a card's pace, and
    `wait` sleeps until the next one, as snd_pcm_wait does. Unless told otherwise, its
    period is the one the box asks of its card (pcm.PERIOD_US) and its buffer 1 s, as
    the box's: at FakeCard's 20 ms the capture's reader woke 2.5 times as often as on a
    box, each time running this fake's Python with the GIL held."""

    def __init__(self, *, rate: int = 48_000, period: int | None = None, **kwargs: object) -> None:
        if period is None:
            period = PERIOD_US * rate // 1_000_000
        super().__init__(  # type: ignore[arg-type]
            rate=rate, period=period, start_ns=time.monotonic_ns(), **kwargs
        )
        self.packet = self.rate // 1000  # frames a USB packet: 1 ms

    def _captured(self) -> int:
        # A USB card's pointer moves a packet at a time, so a reader that empties it finds
        # it empty until the next. Moved a frame at a time (a frame every 21 us), the
        # reader chased it a frame or two a read for 0.3 to 0.8 ms every period, holding
        # the GIL: the latency benchmark's listening rows paid for a card no box has.
        frames = super()._captured()
        return frames - frames % self.packet

    @property  # type: ignore[override]
    def now_ns(self) -> int:
        return time.monotonic_ns()

    @now_ns.setter
    def now_ns(self, _: int) -> None:
        pass  # the monotonic clock runs by itself

    def wait(self, timeout_ms: int) -> None:
        due = self.frame_ns(self._read + self.period - 1)
        time.sleep(max(0.0, min(due - time.monotonic_ns(), timeout_ms * 1e6)) / 1e9)
        self._check()
