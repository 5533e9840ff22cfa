"""A window of the microphone's sound: samples on CLOCK_MONOTONIC, and the gaps in them.

Apart from the ring that makes them (capture.py), so that the clips' cutter, which only
reads them, loads neither the ring nor libasound's bindings.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Gap:
    """Samples lost to an overrun, between the one taken at start_ns and the one at end_ns."""

    start_ns: int
    end_ns: int
    lost: int


@dataclass(frozen=True)
class Sound:
    """Samples taken one period_ns apart from first_ns on (CLOCK_MONOTONIC); those lost in
    a gap are zeros. `rate`: the card's, as it was set (what a clip's WAV says); period_ns is
    how far apart the samples truly are, off it by the card's crystal."""

    samples: np.ndarray  # int16, mono
    first_ns: int
    period_ns: float
    gaps: tuple[Gap, ...]
    rate: int

    def ns(self, index: float) -> float:
        """When the sample at index was taken."""
        return self.first_ns + index * self.period_ns

    def index(self, t_ns: int) -> int:
        """The sample taken nearest t_ns."""
        return round((t_ns - self.first_ns) / self.period_ns)

    def heard(self, t_ns: int) -> bool:
        """Whether the microphone took a sample at t_ns: within the samples, and in none
        of the gaps (an overrun's, or the time the microphone was lost: zeros here)."""
        at = self.index(t_ns)
        if not 0 <= at < len(self.samples):
            return False
        return not any(
            self.index(gap.start_ns) < at <= self.index(gap.start_ns) + gap.lost
            for gap in self.gaps
        )

    def floats(self) -> np.ndarray:
        """The samples at full scale +-1."""
        return self.samples.astype(np.float32) / 32768.0
