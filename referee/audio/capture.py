"""The microphone's last 30 s, in memory only, every sample placed on CLOCK_MONOTONIC.

A thread of its own reads the capture stream (docs/design.md, "The microphone"): it waits
in libasound with the GIL released, and each time the card has a period for it, it copies
the samples into a preallocated ring and learns one pair (the capture pointer's position,
the kernel's monotonic stamp of it; clock.py). That is all it does: the main loop never
waits on audio, and the samples' times come from the driver's stamps, so a thread that runs
late (the GIL, a busy CPU) reads late and changes no time.

An overrun (the card's buffer full before it was read) loses samples: it is counted, the
capture restarts, and what comes after is a new segment with its own line, so the samples
before the overrun keep their times and those after it get theirs from their own stamps.
A window of the ring (`sound`) is one timeline: the samples lost in it are zeros, and each
gap is reported.

A microphone that vanishes (a USB one pulled out: ALSA's calls fail with ENODEV or EIO, or
overrun again and again with nothing read) is lost, told (`tell`: the main loop's inbox,
for the screen's notices) and opened again by the reader (`reopen`), RETRY_S after it
was lost and twice as long each time it still cannot be, up to RETRY_MAX_S, as the
serial board is: the reader's own thread waits, never the main loop. Back, it is a new
segment, as after an overrun: the time it was away is a gap in the sound, and no call
made then has a clip (clip_writer.py, `Sound.heard`).
"""

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from referee.inbox import SourceStatus
from referee.linux.children import Backoff

from .clock import FIT_WINDOW_NS, NS_PER_S, SegmentClock
from .pcm import CaptureError, CapturePcm, Overrun
from .samples import Gap, Sound
from .source import MICROPHONE, RETRY_MAX_S, RETRY_S

log = logging.getLogger(__name__)

RING_S = 30
# How long the reader waits in libasound at a time before it looks whether it should stop:
# a stream runs a period at a time, so this is only ever reached by a stalled card.
WAIT_MS = 200
# Overruns in a row with not a frame read between them: a stream that does not recover.
OVERRUNS_LOST = 5


@dataclass
class _Segment:
    """A run of samples with no overrun in it: ring indices [first, end), one clock."""

    first: int
    end: int
    clock: SegmentClock


class Capture:
    """The ring of one capture stream; `start` its reader, or turn `pump` yourself.

    reopen: the stream opened anew (CaptureError if it cannot be), to try when it is lost;
    without it a lost stream stays lost. clock: when to try (monotonic ns)."""

    def __init__(
        self,
        pcm: CapturePcm,
        *,
        seconds: float = RING_S,
        reopen: Callable[[], CapturePcm] | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.pcm: CapturePcm | None = pcm  # None while it is lost
        self.name = pcm.name
        self._reopen = reopen
        self._clock = clock
        self._keep_ns = round(seconds * NS_PER_S) + FIT_WINDOW_NS
        # Samples ever written: the ring's absolute index of the next one.
        self._written = 0
        self._lock = threading.Lock()  # the reader writes, `sound` copies
        self._begin(pcm, seconds)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.overruns = 0
        self._overruns_in_a_row = 0
        self.losses = 0  # times the stream was lost
        self._backoff = Backoff(RETRY_S, RETRY_MAX_S)
        self._retry_at = 0
        self._telling = threading.Lock()  # a status told, or where to tell changed
        self._told: Callable[[SourceStatus], None] = lambda status: None
        self._said: SourceStatus | None = None

    @property
    def seconds(self) -> float:
        return len(self._ring) / self._rate

    @property
    def sample_rate(self) -> int:
        return self._rate

    @property
    def listening(self) -> bool:
        """The stream is open and read (not lost)."""
        return self.pcm is not None

    def tell(self, told: Callable[[SourceStatus], None]) -> None:
        """Where the stream's losses and returns are told from now on (the main loop's
        inbox, from the reader's thread); a loss under way is told at once."""
        with self._telling:
            self._told = told
            if self._said is not None and not self._said.ok:
                told(self._said)

    def _say(self, text: str, *, ok: bool) -> None:
        """Told and logged once, not at every try that finds the same."""
        said = SourceStatus(MICROPHONE, text, ok)
        with self._telling:
            if said == self._said:
                return
            self._said = said
            self._told(said)
        log.log(logging.INFO if ok else logging.WARNING, "%s", text)

    @property
    def heard_ns(self) -> int | None:
        """When the newest sample in the ring was taken; None before its line is known. A
        window ending before it is whole in the ring (a clip may be cut from it)."""
        with self._lock:
            segment = self._segments[-1]
            line = segment.clock.recent()
        if line is None or segment.end == segment.first:
            return None
        return round(line.ns(segment.end - 1))

    def start(self) -> None:
        """Read the stream on a thread of its own until `close`."""
        self._thread = threading.Thread(target=self._read, name="microphone", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            self.pump(WAIT_MS)
            if self.pcm is None:  # lost: asleep until the next try, or close()
                self._stop.wait(max(0, self._retry_at - self._clock()) / NS_PER_S)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.pcm is not None:
            self.pcm.close()

    def pump(self, timeout_ms: int) -> int:
        """Wait up to timeout_ms for the card, read what it holds into the ring, and learn
        its pointer's stamp: the frames read. A lost card is opened again when that is
        due (and then not waited for)."""
        pcm, block = self.pcm, self._block
        if pcm is None:
            self._try_again()
            return 0
        frames = 0
        try:
            pcm.wait(timeout_ms)
            # Until the card runs dry, or close() asks: a device never read dry (ALSA's
            # "null") kept `referee run` from ever quitting.
            while not self._stop.is_set() and (n := pcm.read(block)) > 0:
                self._store(block[:n])
                frames += n
            status = pcm.status()
        except Overrun:
            self._overrun(frames)
            return frames
        except CaptureError as err:
            self._lose(err)
            return frames
        if frames:
            self._overruns_in_a_row = 0
        if status is not None:
            with self._lock:
                segment = self._segments[-1]
                segment.clock.observe(segment.end + status.delay, status.stamp_ns)
                segment.clock.forget_before(status.stamp_ns - self._keep_ns)
        return frames

    def _store(self, samples: np.ndarray) -> None:
        ring, size = self._ring, len(self._ring)
        with self._lock:
            at = self._written % size
            n = min(len(samples), size - at)
            ring[at : at + n] = samples[:n]
            ring[: len(samples) - n] = samples[n:]
            self._written += len(samples)
            self._segments[-1].end = self._written
            oldest = self._written - size
            while len(self._segments) > 1 and self._segments[0].end <= oldest:
                self._segments.popleft()

    def _overrun(self, frames: int) -> None:
        assert self.pcm is not None
        self.overruns += 1
        self._overruns_in_a_row = 0 if frames else self._overruns_in_a_row + 1
        log.warning("the microphone's buffer overran: a gap in the sound (%d)", self.overruns)
        if self._overruns_in_a_row >= OVERRUNS_LOST:
            self._lose(CaptureError(f"{self._overruns_in_a_row} overruns in a row, nothing read"))
            return
        try:
            self.pcm.restart()
        except CaptureError as err:
            self._lose(err)
            return
        self._new_segment()

    def _new_segment(self) -> None:
        """What is read from now on has its own line: a gap before it never moves a sample
        on either side."""
        line = self._segments[-1].clock.line(-math.inf, math.inf)
        clock = SegmentClock(self.nominal_period_ns, line.period_ns if line else None)
        with self._lock:
            if self._segments[-1].end == self._segments[-1].first:
                # Nothing read since the last: replaced, so that a card that opens and
                # fails again, for hours, adds no segment each time.
                self._segments.pop()
            self._segments.append(_Segment(self._written, self._written, clock))

    def _lose(self, err: CaptureError) -> None:
        """The stream cannot go on (unplugged, failing): closed, told, tried again later."""
        assert self.pcm is not None
        pcm, self.pcm = self.pcm, None
        pcm.close()
        self.losses += 1
        self._overruns_in_a_row = 0
        self._backoff.reset()
        self._retry_at = self._clock() + round(self._backoff.after() * NS_PER_S)
        again = "waiting for it" if self._reopen is not None else "not opened again"
        self._say(f"microphone lost ({err}): {again}, no clips meanwhile", ok=False)

    def _try_again(self) -> None:
        """The lost stream opened again, when a try is due."""
        if self._reopen is None or self._clock() < self._retry_at:
            return
        self._retry_at = self._clock() + round(self._backoff.after() * NS_PER_S)
        try:
            pcm = self._reopen()
        except CaptureError as err:
            log.debug("the microphone cannot be opened again yet: %s", err)
            return
        if pcm.rate == self._rate:
            self._new_segment()
            said = f"microphone {pcm.name} listening again"
        else:  # another microphone in its socket, or the same one set otherwise
            said = f"microphone {pcm.name} listening again, at {pcm.rate} Hz ({self._rate} before)"
            # One ring holds samples of one rate; what it held was taken before the
            # microphone was lost (its calls' clips are cut, or were not heard).
            self._begin(pcm, self.seconds)
        self.pcm = pcm
        self._say(said, ok=True)

    def _begin(self, pcm: CapturePcm, seconds: float) -> None:
        """The ring (of `seconds`) begun at pcm's rate, empty, from the next sample on."""
        with self._lock:
            self._rate = pcm.rate
            self.nominal_period_ns = NS_PER_S / pcm.rate
            self._ring = np.zeros(round(seconds * pcm.rate), np.int16)
            self._block = np.empty(max(pcm.period, pcm.rate // 10), np.int16)
            clock = SegmentClock(self.nominal_period_ns)
            self._segments = deque([_Segment(self._written, self._written, clock)])

    def gaps(self) -> list[Gap]:
        """The overruns' gaps in the ring (those whose both sides it still holds)."""
        with self._lock:
            segments = list(self._segments)
            lines = [s.clock.line(-math.inf, math.inf) for s in segments]
        gaps = []
        for before, after, line_before, line_after in zip(
            segments, segments[1:], lines, lines[1:], strict=False
        ):
            if line_before is None or line_after is None or before.end == before.first:
                continue
            start_ns, end_ns = line_before.ns(before.end - 1), line_after.ns(after.first)
            lost = max(0, round((end_ns - start_ns) / line_before.period_ns) - 1)
            gaps.append(Gap(round(start_ns), round(end_ns), lost))
        return gaps

    def sound(self, from_ns: int, to_ns: int) -> Sound:
        """The samples taken from from_ns to before to_ns that the ring still holds."""
        with self._lock:
            oldest = max(0, self._written - len(self._ring))
            spans = []  # (its line, ring indices [lo, hi)) of each segment in the window
            for segment in self._segments:
                line = segment.clock.line(from_ns, to_ns)
                if line is None:
                    continue
                lo = max(segment.first, oldest, math.ceil(line.index(from_ns)))
                hi = min(segment.end, math.ceil(line.index(to_ns)))
                if lo < hi:
                    spans.append((line, lo, hi))
            if not spans:
                return Sound(np.zeros(0, np.int16), from_ns, self.nominal_period_ns, (), self._rate)
            first_line, first, _ = spans[0]
            first_ns, period = first_line.ns(first), first_line.period_ns
            last_line, _, last = spans[-1]
            length = round((last_line.ns(last - 1) - first_ns) / period) + 1
            # Copied from the ring straight to its place, once: the clips' writer holds the
            # GIL throughout, and the main loop waits for it (0.7 ms with a copy between).
            out = np.zeros(length, np.int16)
            gaps = []
            end = 0  # where the span before ends in out
            for line, lo, hi in spans:
                start = max(0, min(length, round((line.ns(lo) - first_ns) / period)))
                if end:
                    last_ns = first_ns + (end - 1) * period
                    gaps.append(Gap(round(last_ns), round(line.ns(lo)), max(0, start - end)))
                n = min(hi - lo, length - start)
                self._copy(lo, out[start : start + n])
                end = start + n
        return Sound(out, round(first_ns), period, tuple(gaps), self._rate)

    def _copy(self, lo: int, into: np.ndarray) -> None:
        """The ring's samples from absolute index lo on, as many as `into` takes."""
        size = len(self._ring)
        at = lo % size
        n = min(len(into), size - at)
        into[:n] = self._ring[at : at + n]
        into[n:] = self._ring[: len(into) - n]
