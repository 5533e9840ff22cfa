"""A learned voice onset detector (a small convolutional network, as in Schlüter & Böck's
onset detection), run with numpy alone: "a new voice starts here", a second one over a
first one's vowel among them, each placed to the sample by the bands' split
(referee/audio/onsets.py). Measured beside the bands by bench/onsets.py; the box does not
run it: on held-out speakers it did not find more pairs than the bands
(docs/notes/onsets.md, "A learned detector").

    find_learned_onsets(signal, sample_rate) -> [Onset(t, sample, strength_db, "learned", soft)]

How:

1. Features: frames of FRAME_S every HOP_S, Hann-windowed; the power in MELS triangular
   bands spaced on the mel scale from LOW_HZ to HIGH_HZ, in dB, less each band's running
   median over the last 0.5 s (the bands' floor, onsets.py's `_floor`): what is new over
   the room, whatever its level; and less its highest level 20-80 ms before (RECENT):
   what is new over a sound going on. Two channels, divided by SCALE_DB.
2. The network (its weights in onsets.npz beside this module, trained by train.py here,
   `make onset-model`; MODEL.md says on what and how it scored): three convolutions over
   bands and frames (the third dilated in time: it sees 29 frames, 0.15 s around a
   frame), ReLU, the first two each followed by the larger of each two neighbouring
   bands; a last 1x1 to one value a frame, the logistic of which is how likely a voice
   starts (is first heard) in that frame.
3. Peaks: a frame whose probability is at least the model's threshold and the highest
   within PEAK_S either side, REFRACTORY_S after the last onset.
4. Placed: each of the bands (sibilant, voiced, low) split into two levels over the piece
   around the peak's frame (onsets.py's split); the band whose split fits best places it.
   Soft unless its probability reaches SURE_P.

The network is computed tap by tap (one small matrix product a kernel's cell), not by
unrolling patches: the memory is a layer's output, some 0.5 MB for a 3 s clip.
"""

import functools
import math
from pathlib import Path

import numpy as np

from referee.audio.onsets import (
    LOW,
    SIBILANT,
    VOICED,
    Onset,
    Settings,
    _band_passed,
    _checked,
    _floor,
)

FRAME_S = 0.025
HOP_S = 0.005
MELS = 40
LOW_HZ = 100.0
HIGH_HZ = 10000.0
SCALE_DB = 20.0
RECENT = (16, 4)  # frames before: 80 to 20 ms
FLOOR = Settings(hop_s=HOP_S, floor_s=0.5, floor_step_s=0.05, first_noise_s=0.1)
PEAK_S = 0.03
REFRACTORY_S = 0.05
SURE_P = 0.9
PLACE_BEFORE_S = 0.03  # the piece split to place an onset, around its frame's centre
PLACE_AFTER_S = 0.02
MODEL = Path(__file__).resolve().parent / "onsets.npz"


def _mel(hz: float) -> float:
    return 2595.0 * math.log10(1.0 + hz / 700.0)


@functools.cache
def filterbank(frame: int, sample_rate: float) -> np.ndarray:
    """(MELS, bins) triangular weights on the mel scale; a band too narrow for any bin's
    centre takes its nearest bin, so that none is empty."""
    hz = np.fft.rfftfreq(frame, 1 / sample_rate)
    edges = 700.0 * (10 ** (np.linspace(_mel(LOW_HZ), _mel(HIGH_HZ), MELS + 2) / 2595.0) - 1)
    weights = np.zeros((MELS, len(hz)))
    for i in range(MELS):
        lo, mid, hi = edges[i : i + 3]
        rising = (hz - lo) / (mid - lo)
        falling = (hi - hz) / (hi - mid)
        weights[i] = np.maximum(0.0, np.minimum(rising, falling))
        if not weights[i].any():
            weights[i, np.argmin(np.abs(hz - mid))] = 1.0
    weights /= weights.sum(axis=1, keepdims=True)
    return weights


def features(x: np.ndarray, sample_rate: float, scale: float = 1.0) -> np.ndarray:
    """(2, MELS, frames) float32, over SCALE_DB: each band's level over its running floor,
    and over its highest level RECENT frames before (what is new over a sound going on);
    frame i covers samples from i * hop on."""
    frame, hop = round(FRAME_S * sample_rate), round(HOP_S * sample_rate)
    if len(x) < frame:
        return np.zeros((2, MELS, 0), dtype=np.float32)
    bank = filterbank(frame, sample_rate)
    window = np.hanning(frame) * scale
    frames = np.lib.stride_tricks.sliding_window_view(x, frame)[::hop]
    power = np.empty((MELS, len(frames)))
    for at in range(0, len(frames), 64):  # a chunk's spectra at a time: bounded memory
        spectra = np.fft.rfft(frames[at : at + 64] * window, axis=1)
        power[:, at : at + 64] = bank @ (np.abs(spectra) ** 2).T
    levels = 10 * np.log10(np.maximum(power, 1e-12))
    floor = _floor(levels, FLOOR)
    far, near = RECENT
    # The highest over the frames far to near before each (the floor where there are none).
    padded = np.concatenate((floor[:, :1].repeat(far, axis=1), levels), axis=1)
    recent = np.lib.stride_tricks.sliding_window_view(padded, far - near + 1, axis=1)
    highest = recent[:, : levels.shape[1]].max(axis=2)
    over = np.stack((levels - floor, levels - np.maximum(highest, floor)))
    scaled: np.ndarray = (over / SCALE_DB).astype(np.float32)
    return scaled


@functools.cache
def model(path: Path = MODEL) -> dict[str, np.ndarray]:
    """The network's weights and its threshold (an .npz of float32 arrays)."""
    with np.load(path) as saved:
        return {name: saved[name] for name in saved.files}


DILATION = 2  # the third convolution's, in frames


def context(weights: dict[str, np.ndarray]) -> tuple[int, int]:
    """Frames the network reads before and after the frame it judges."""
    reach = (weights["c1w"].shape[3] - 1) + (weights["c2w"].shape[3] - 1)
    reach += DILATION * (weights["c3w"].shape[3] - 1)
    return reach // 2, reach - reach // 2


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, dilation: int = 1) -> np.ndarray:
    """A valid 2-D convolution (as torch's Conv2d: cross-correlation) of x (channels,
    bands, frames) by w (out, in, bands, frames), then ReLU."""
    out_c, _, kf, kt = w.shape
    bands, frames = x.shape[1] - kf + 1, x.shape[2] - dilation * (kt - 1)
    y = np.zeros((out_c, bands, frames), dtype=np.float32)
    y += b[:, None, None]
    for i in range(kf):
        for j in range(kt):
            piece = x[:, i : i + bands, j * dilation : j * dilation + frames]
            y += np.tensordot(w[:, :, i, j], piece, axes=(1, 0))
    relu: np.ndarray = np.maximum(y, 0.0)
    return relu


def _pool(x: np.ndarray) -> np.ndarray:
    """The larger of each two neighbouring bands."""
    half = x.shape[1] // 2
    pooled: np.ndarray = np.maximum(x[:, 0 : 2 * half : 2], x[:, 1 : 2 * half : 2])
    return pooled


def probabilities(feats: np.ndarray, weights: dict[str, np.ndarray]) -> np.ndarray:
    """How likely a voice starts in each frame of the features: edge frames repeated
    for the context the network reads beyond them."""
    if feats.shape[2] == 0:
        return np.zeros(0)
    before, after = context(weights)
    x = np.pad(feats, ((0, 0), (0, 0), (before, after)), mode="edge")
    x = _pool(_conv(x, weights["c1w"], weights["c1b"]))
    x = _pool(_conv(x, weights["c2w"], weights["c2b"]))
    x = _conv(x, weights["c3w"], weights["c3b"], DILATION)
    logit = np.tensordot(weights["ow"][0], x[:, 0], axes=(0, 0)) + weights["ob"][0]
    p: np.ndarray = 1.0 / (1.0 + np.exp(-logit.astype(np.float64)))
    return p


def peaks(p: np.ndarray, threshold: float) -> list[int]:
    """The frames where an onset is: over threshold, the highest within PEAK_S either side,
    REFRACTORY_S after the last."""
    if not len(p):
        return []
    near = round(PEAK_S / HOP_S)
    refractory = round(REFRACTORY_S / HOP_S)
    padded = np.pad(p, near, constant_values=-1.0)
    highest = np.lib.stride_tricks.sliding_window_view(padded, 2 * near + 1).max(axis=1)
    found: list[int] = []
    for i in np.flatnonzero((p >= threshold) & (p >= highest)):
        if not found or i - found[-1] >= refractory:
            found.append(int(i))
    return found


def _best_split(y: np.ndarray, edge: int) -> tuple[int, float]:
    """Where y's power rises (onsets.py's `_split`) and by how much the two levels fit
    it better than one (log-likelihood, per sample)."""
    total = np.concatenate(([0.0], np.cumsum(y**2)))
    k = np.arange(edge, len(y) - edge + 1)
    tiny = 1e-30
    before = np.maximum(total[k] / k, tiny)
    after = np.maximum((total[-1] - total[k]) / (len(y) - k), tiny)
    one = len(y) * np.log(max(total[-1] / len(y), tiny))
    gain = one - k * np.log(before) - (len(y) - k) * np.log(after)
    gain[after <= before] = -np.inf
    best = int(np.argmax(gain))
    return int(k[best]), float(gain[best]) / len(y)


def place(x: np.ndarray, scale: float, sample_rate: float, centre: int) -> int:
    """The sample an onset found near `centre` starts at: the best split of the bands."""
    begin = max(0, centre - round(PLACE_BEFORE_S * sample_rate))
    end = min(len(x), centre + round(PLACE_AFTER_S * sample_rate))
    edge = max(1, round(0.002 * sample_rate))
    if end - begin < 2 * edge + 1:
        return centre
    piece = x[begin:end] * scale
    splits = [
        _best_split(_band_passed(piece, sample_rate, band), edge)
        for band in (SIBILANT, VOICED, LOW)
        if band.low_hz < sample_rate / 2
    ]
    if not splits:
        return centre
    at, gain = max(splits, key=lambda split: split[1])
    return begin + at if math.isfinite(gain) else centre


def find_learned_onsets(
    signal: np.ndarray,
    sample_rate: float,
    threshold: float | None = None,
    weights: dict[str, np.ndarray] | None = None,
) -> list[Onset]:
    """The voice onsets the network finds in a mono signal (as find_onsets takes it)."""
    x, scale = _checked(signal, sample_rate)
    weights = model() if weights is None else weights
    threshold = float(weights["threshold"]) if threshold is None else threshold
    p = probabilities(features(x, sample_rate, scale), weights)
    frame, hop = round(FRAME_S * sample_rate), round(HOP_S * sample_rate)
    onsets = []
    last = -1
    for i in peaks(p, threshold):
        at = max(place(x, scale, sample_rate, i * hop + frame // 2), last + 1)
        strength = 10 * math.log10(max(p[i], 1e-12) / max(1 - p[i], 1e-12))
        onsets.append(Onset(at / sample_rate, at, strength, "learned", bool(p[i] < SURE_P)))
        last = at
    return onsets
