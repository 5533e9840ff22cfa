"""A sound card's samples placed on CLOCK_MONOTONIC, from the driver's own stamps.

The sound card samples on its own crystal, a few hundred ppm off the system's clock (and
CLOCK_MONOTONIC itself is slewed by NTP, up to 500 ppm): over the 30 s ring, 200 ppm is
6 ms, twice the markers' budget. So the nominal rate is not enough; what we know is one
pair per read of the card's status: the frame position of the capture pointer and the
kernel's stamp of it (ALSA's htstamp, of the monotonic type). Python's own moment of reading
is never used: a read may come any time after the samples did.

A stamp is never early for its position: the kernel reads the pointer, then the clock; and
the pointer of a USB card moves a packet at a time, so the frame it names was taken up to a
packet before the stamp. The jitter is lateness. The mapping, then:

1. **The slope** (the card's sample period on the monotonic clock) is the least-squares fit
   over the pairs near the samples wanted (FIT_WINDOW_NS either side): lateness that is the
   same on average does not bias a slope, and a window rather than all the pairs follows a
   drift that changes (the card warming up, NTP changing its mind). Under MIN_SPAN_NS of
   pairs (just after a start or an overrun) the slope is the previous segment's, or the
   nominal rate's.
2. **The offset** puts the line under the stamps, at a low quantile of their residuals (the
   lower envelope, as the serial board's clock takes its floor): the least lateness seen is
   the best estimate of none, and one stamp below the rest moves nothing.
3. **Segments.** An overrun loses samples; the capture restarts and its pointer starts
   again from zero. Each run between overruns is a segment with its own pairs and its own
   line, so a restart never moves a sample taken before it.

A pair that goes back in time, or lies further than PLAUSIBLE_NS from the line the earlier
pairs draw, is garbage (a driver's bug, a stamp of another clock): counted and kept out.
"""

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

NS_PER_S = 1_000_000_000
# The pairs within this of the samples wanted are fitted: long enough that 1 ms of jitter
# over ten pairs a second gives a slope a few ppm off, short enough to follow a drift that
# changes over minutes.
FIT_WINDOW_NS = 10 * NS_PER_S
# A slope is fitted over at least this span of pairs; under it, the previous one is kept.
MIN_SPAN_NS = 2 * NS_PER_S
# The line's offset: this quantile of the residuals, the lower envelope of the stamps.
ENVELOPE_QUANTILE = 0.1
# A crystal is a few hundred ppm off, NTP slews by at most 500: a fitted slope further than
# this from the nominal one is the fit's error, not the card's.
MAX_PPM = 1000
# A pair this far from the line of the pairs before it is not believed.
PLAUSIBLE_NS = 20_000_000
# The least pairs for a line to judge the next one by, and how long a line judges before it
# is fitted again (a fit a read would be most of the capture's cost).
JUDGE_PAIRS = 8
JUDGE_FOR_NS = NS_PER_S


@dataclass(frozen=True)
class Line:
    """Sample index → monotonic ns: `at_ns + (index - at_index) * period_ns`."""

    at_index: int
    at_ns: int
    period_ns: float

    def ns(self, index: float) -> float:
        return self.at_ns + (index - self.at_index) * self.period_ns

    def index(self, t_ns: float) -> float:
        return self.at_index + (t_ns - self.at_ns) / self.period_ns


class SegmentClock:
    """The line of one segment (a run of samples between overruns), from its pairs of
    (sample index of the capture pointer, the kernel's monotonic stamp of it)."""

    def __init__(self, nominal_period_ns: float, prior_period_ns: float | None = None) -> None:
        self.nominal_period_ns = nominal_period_ns
        # The slope to use while this segment's pairs span too little to fit one.
        self.prior_period_ns = prior_period_ns or nominal_period_ns
        self._index: deque[int] = deque()
        self._ns: deque[int] = deque()
        self._judge: Line | None = None
        self.rejected = 0

    def __len__(self) -> int:
        return len(self._index)

    def observe(self, index: int, t_ns: int) -> bool:
        """Learn from one pair; False if it was not believed (and is counted)."""
        if self._index and (t_ns <= self._ns[-1] or index < self._index[-1]):
            self.rejected += 1
            return False
        if len(self._index) >= JUDGE_PAIRS:
            if self._judge is None or t_ns - self._judge.at_ns > JUDGE_FOR_NS:
                self._judge = self.line(t_ns, t_ns)
            assert self._judge is not None
            if abs(self._judge.ns(index) - t_ns) > PLAUSIBLE_NS:
                self.rejected += 1
                return False
        self._index.append(index)
        self._ns.append(t_ns)
        return True

    def forget_before(self, t_ns: int) -> None:
        """Drop the pairs stamped before t_ns, keeping at least one."""
        while len(self._ns) > 1 and self._ns[0] < t_ns:
            self._index.popleft()
            self._ns.popleft()

    def recent(self) -> Line | None:
        """The line of the newest pairs, as last fitted to judge them (at most JUDGE_FOR_NS
        old: the newest sample placed within the stamps' jitter and a second's drift), or
        fitted now when there is none yet. A fit held the GIL 0.3 ms, and the clips'
        writer asks where the ring ends every 50 ms while a call's window fills: the main
        loop waited for it."""
        return self._judge or self.line(-math.inf, math.inf)

    def line(self, from_ns: float, to_ns: float) -> Line | None:
        """The line for samples taken between from_ns and to_ns (None: no pair yet)."""
        if not self._index:
            return None
        ns = np.fromiter(self._ns, np.int64, len(self._ns))
        index = np.fromiter(self._index, np.int64, len(self._index))
        near = (ns >= from_ns - FIT_WINDOW_NS) & (ns <= to_ns + FIT_WINDOW_NS)
        if np.count_nonzero(near) < 2 or np.ptp(ns[near]) < MIN_SPAN_NS:
            near = np.ones_like(near)  # too few near: all the segment's pairs
        ns, index = ns[near], index[near]
        at_index, at_ns = int(index[-1]), int(ns[-1])
        x = (index - at_index).astype(np.float64)
        y = (ns - at_ns).astype(np.float64)
        period = self.prior_period_ns
        if np.ptp(y) >= MIN_SPAN_NS:
            xc = x - x.mean()
            fitted = float(np.dot(xc, y - y.mean()) / np.dot(xc, xc))
            nominal, limit = self.nominal_period_ns, self.nominal_period_ns * MAX_PPM / 1e6
            period = min(max(fitted, nominal - limit), nominal + limit)
        offset = low_quantile(y - period * x, ENVELOPE_QUANTILE)
        return Line(at_index, at_ns + round(offset), period)


def low_quantile(values: np.ndarray, q: float) -> float:
    """np.quantile(values, q) (its linear interpolation), from a partial sort: quantile's
    own steps took half of a fit's time."""
    at = q * (len(values) - 1)
    lo = math.floor(at)
    hi = min(lo + 1, len(values) - 1)
    part = np.partition(values, (lo, hi))
    return float(part[lo] + (part[hi] - part[lo]) * (at - lo))
