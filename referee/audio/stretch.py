"""A sound slowed down at its own pitch (`[audio] replay_pitch = "kept"`): WSOLA, with the
moments a replay marks pinned to their place.

WSOLA (Verhelst and Roelands, 1993): frames of 20 ms, laid down half a frame apart, are
taken `slowdown` times closer together than that, each played at its own speed, so the
pitch stays; each is taken from within 5 ms of its nominal place, where its waveform best
continues the frame before, so that the overlaps add up without beating. Hann windows half
a frame apart sum to one: the frames add back to the sound's own level.

Its cost is the sharpness varispeed keeps (replay.py): every sample is in 2 x slowdown
frames, each played at its own speed, so a plain WSOLA plays a click six times at 4x,
from 55 ms before its place to 8 ms after. So each anchor (a press's sample, a voice
onset: what the screen marks) is pinned: no frame holds what follows an anchor before the
anchor's place, and the frames that straddle its place are taken exactly from it. An
anchor is heard once, at slowdown x its time, to the sample; what no anchor marks is
still heard early and more than once. Anchors closer than a frame over slowdown (5 ms at
4x) are one: the first.
"""

import math
from collections.abc import Iterator, Sequence

import numpy as np

FRAME_S = 0.02  # two periods of a low voice's pitch
TOLERANCE_S = 0.005  # half a period: enough to find the waveform's next cycle


def stretched(
    samples: np.ndarray, slowdown: float, rate: int, anchors: Sequence[int] = ()
) -> np.ndarray:
    """The samples played `slowdown` times slower at their own pitch, round(len x slowdown)
    of them, each anchor (a sample) at round(anchor x slowdown)."""
    blocks = list(stretched_blocks(samples, slowdown, rate, anchors))
    return np.concatenate(blocks) if blocks else np.zeros(0, np.float32)


def stretched_blocks(
    samples: np.ndarray, slowdown: float, rate: int, anchors: Sequence[int] = ()
) -> Iterator[np.ndarray]:
    """`stretched`, a piece at a time as it is made (a frame's hop, 10 ms): a player can
    start at once, where 12 s of sound would take a while to make whole."""
    if slowdown < 1:
        raise ValueError(f"a replay is slowed, not sped up: slowdown {slowdown}")
    x = np.asarray(samples, dtype=np.float64)
    n = len(x)
    length = round(n * slowdown)
    frame = 2 * max(1, round(FRAME_S * rate / 2))
    if slowdown == 1 or n < frame:
        # Too short to stretch by frames (or not slowed): stretched as a tape would be.
        times = np.arange(length) / slowdown
        yield (np.interp(times, np.arange(n), x) if n else np.zeros(length)).astype(np.float32)
        return
    hop = frame // 2
    tolerance = max(1, round(TOLERANCE_S * rate))
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(frame) / frame)  # periodic Hann
    # Silence around it: a frame straddling an early anchor's place starts before the
    # sound does (`frame` samples at most), and the last frames run past its end.
    lead = frame
    padded = np.concatenate([np.zeros(lead), x, np.zeros(frame + hop)])
    pins = _pins(anchors, n, slowdown, frame)
    size = 1 << math.ceil(math.log2(2 * tolerance + 1 + frame))
    piece = max(hop, rate // 10)
    # The frames summed from the first sample not yet given (`done`) on, not the whole
    # replay's: 4x of a 3 s clip would be 9 MB, in the daemon, for as long as it plays. A
    # frame starts less than a piece after `done`, and reaches a frame further.
    out = np.zeros(piece + frame + hop)
    weight = np.zeros(piece + frame + hop)
    done = 0
    taken: int | None = None  # where the last frame was taken from
    for start in range(0, length, hop):
        low, high = _span(start, slowdown, pins, n, frame, tolerance)
        if taken is None or low == high:
            at = low
        else:  # the best continuation, in the padded sound (its sample `lead` is the first)
            at = _best(padded, lead + taken + hop, lead + low, lead + high, frame, size) - lead
        kept = _before_early(at, start, pins, frame)
        i = start - done
        out[i : i + kept] += window[:kept] * padded[lead + at : lead + at + kept]
        weight[i : i + kept] += window[:kept]
        taken = at
        ready = min(length, start + hop)  # no later frame reaches before it
        if ready - done >= piece or ready == length:
            given = ready - done
            yield _level(out[:given], weight[:given])
            for summed in (out, weight):  # what is left to the front, zeros after it
                summed[:-given] = summed[given:]
                summed[-given:] = 0.0
            done = ready


def _pins(anchors: Sequence[int], n: int, slowdown: float, frame: int) -> list[tuple[int, int]]:
    """Each anchor as (its sample, its place in the slowed sound), sorted, the ones too
    close to the one before left out."""
    pins: list[tuple[int, int]] = []
    for sample in sorted({a for a in anchors if 0 < a < n}):
        if not pins or sample - pins[-1][0] >= frame / slowdown:
            pins.append((sample, round(sample * slowdown)))
    return pins


def _span(
    start: int, slowdown: float, pins: list[tuple[int, int]], n: int, frame: int, tolerance: int
) -> tuple[int, int]:
    """Where the frame laid at `start` may be taken from, (low, high): exactly there, when
    it straddles an anchor's place; else within the tolerance of its nominal place, after
    the anchor before it and ending before the one after it."""
    after = next(((s, p) for s, p in pins if p > start), None)
    if after is not None and after[1] < start + frame:
        exact = after[0] - (after[1] - start)
        return exact, exact
    nominal = round(start / slowdown)
    low, high = nominal - tolerance, nominal + tolerance
    before = next(((s, p) for s, p in reversed(pins) if p <= start), None)
    if before is not None:
        low = max(low, before[0])
    if after is not None:
        high = min(high, after[0] - frame)
    high = max(0, min(high, n - 1))
    return min(max(low, 0), high), high


def _before_early(at: int, start: int, pins: list[tuple[int, int]], frame: int) -> int:
    """How much of the frame taken at `at` and laid at `start` to keep: all of it, or up
    to an anchor it holds that it would lay before its place (anchors less than a frame
    apart: the frame that straddles the first one's place reaches the second)."""
    for sample, place in pins:
        if at < sample < at + frame and start + (sample - at) < place:
            return sample - at
    return frame


def _best(padded: np.ndarray, follows: int, low: int, high: int, frame: int, size: int) -> int:
    """The start in [low, high] whose frame best continues the waveform that would follow
    the last frame (it starts at `follows`): their cross-correlation's peak, by FFT."""
    if low >= high:
        return low
    span = padded[low : high + frame]
    wanted = padded[follows : follows + frame]
    correlation = np.fft.irfft(np.fft.rfft(span, size) * np.conj(np.fft.rfft(wanted, size)), size)
    return low + int(np.argmax(correlation[: high - low + 1]))


def _level(summed: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The overlapped frames at the sound's own level: their windows' sum divided out
    (it is one wherever two frames overlap; less only at the very start)."""
    level: np.ndarray = (summed / np.maximum(weight, 1e-3)).astype(np.float32)
    return level
