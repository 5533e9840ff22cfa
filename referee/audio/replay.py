"""A call's clip played again, slowed down: the sound to play, and where it is at a moment.

Slowed by plain varispeed, the default: each sample lasts `slowdown` times as long, as a
tape played slower would (the pitch drops with it, two octaves at 4x). The point of a
replay is to hear which "Set!" began first, and varispeed plays every sound once, as
sharp as it was, at its place. A stretch that keeps the pitch (stretch.py, `replay_pitch
= "kept"`) pins the moments the clip marks, but plays any other sound's start several
times over, from up to 55 ms early at 4x.

Pure: a replay is not an input of the rules and reads no clock; the caller says when it
started and asks where it is now (the screen's cursor).
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from referee.units import NS_PER_S

from .clips import Clip


def slowed(samples: np.ndarray, slowdown: float) -> np.ndarray:
    """The samples, `slowdown` times as many, to be played at the same rate: linear
    interpolation between the originals, which stay where they were (every
    slowdown-th output sample is one of them when slowdown is whole)."""
    return np.concatenate([np.zeros(0, np.float32), *slowed_pieces(samples, slowdown)])


def slowed_pieces(samples: np.ndarray, slowdown: float, piece: int = 4800) -> Iterator[np.ndarray]:
    """`slowed`, `piece` samples at a time: a player holds a piece, not the whole
    replay (4x of a 3 s clip is half a million samples, 5 MB in floats)."""
    if slowdown < 1:
        raise ValueError(f"a replay is slowed, not sped up: slowdown {slowdown}")
    if len(samples) < 2:
        yield np.asarray(samples, dtype=np.float32).copy()
        return
    count = round((len(samples) - 1) * slowdown) + 1
    for start in range(0, count, piece):
        at = np.arange(start, min(count, start + piece), dtype=np.float64) / slowdown
        # Between the originals around the piece alone (the same values as between all
        # of them): their positions for the whole clip would be 1.2 MB more in the daemon.
        lo, hi = int(at[0]), min(len(samples), int(at[-1]) + 2)
        yield np.interp(at, np.arange(lo, hi), samples[lo:hi]).astype(np.float32)


@dataclass(frozen=True, slots=True)
class Replay:
    """A clip being played from `started_ns` (the box's clock), `slowdown` times slower."""

    clip: Clip
    samples: int  # the clip's length, in its own samples
    started_ns: int
    slowdown: float

    @property
    def length_ns(self) -> int:
        """How long it plays."""
        return round(self.samples / self.clip.sample_rate * self.slowdown * NS_PER_S)

    def sample_at(self, now_ns: int) -> int:
        """The clip's sample being heard at now_ns: the cursor, 0 to `samples`."""
        heard_s = max(0, now_ns - self.started_ns) / NS_PER_S / self.slowdown
        return min(self.samples, round(heard_s * self.clip.sample_rate))

    def over(self, now_ns: int) -> bool:
        return now_ns - self.started_ns >= self.length_ns


def waveform(samples: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest sample of each of `columns` equal slices, for drawing the
    sound as a band (a peak shows however short, where a mean would hide a click)."""
    if columns < 1:
        raise ValueError(f"a waveform needs at least one column, not {columns}")
    if len(samples) == 0:
        zeros = np.zeros(columns, np.float32)
        return zeros, zeros.copy()
    # Where each column's slice begins; a clip shorter than the columns repeats samples.
    starts = np.arange(columns, dtype=np.int64) * len(samples) // columns
    lows = np.minimum.reduceat(samples, starts)
    highs = np.maximum.reduceat(samples, starts)
    return lows.astype(np.float32), highs.astype(np.float32)
