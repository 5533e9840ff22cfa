"""Where the voice onset detector loses real pairs (issue 30), and two cues for a second
voice over a first one, measured beside it (not built into it): docs/notes/onsets.md,
"Where the pairs are lost".

    .venv/bin/python bench/onsets_losses.py [--seed 0] [--real-clips 24]

The clips are bench/onsets.py's real pairs (tests/voices.py: two people or one person
twice, 80-200 ms apart, /s/ words or any, over other people talking at 20 dB), tuned
and held-out speakers apart, each voice counted against its true onset and against
where it is first heard (`heard`). Its output goes to bench/results/.

1. Each voice of each pair, as the detector (referee/audio/onsets.py's DEFAULT) leaves it:
     found          an onset within 20 ms
     placed off     a trigger in a frame ending 5 ms before to 30 ms after the start, its
                    refined sample more than 20 ms off
     refractory     a band rose its threshold over the sound going on there, within 50 ms
                    of an onset before (the babble's, or the first voice's)
     under, in a sound  no band rose its threshold over the sound going on (over the floor
                    it did): the rise's highest there, under the threshold, is printed
     late           nothing there, an onset 20-80 ms later (the voice's louder part)
     under          nothing there, nothing found within 80 ms after
2. Cues for a second voice, added to the detector's onsets where it has none within 30 ms
   and within 0.5 s after one of its onsets (within a sound: so the shouts' first onsets
   and noise alone are as they were), at a cue's local highest (25 ms either side) over a
   threshold. More onsets find more pairs by chance, so each row stands beside two
   controls (10 draws each): as many onsets a clip placed at random there, and the same
   onsets moved 40-80 ms earlier or later, as many kept (where the voices sound, but not
   where the cue put them). A cue that knows where a voice starts beats both.
     residual       the energy the best comb filter (a period of 80-400 Hz, the signal at
                    80-2000 Hz) fitted on the 40 ms before a moment leaves in the 25 ms
                    after it (period refitted within 6 %), over what it leaves in the 40 ms
                    before, a sample each, dB: a second voice is energy the first one's
                    harmonics do not explain
     cepstral       the distance between the mean log mel spectra (24 bands, 100-4000 Hz,
                    16 ms frames, c1-c12) of the 40 ms before and after a moment: a new
                    voice moves the spectral envelope
   "within a voice": onsets 20 ms-0.5 s after a lone voice's true onset, a voice (twice
   as many clips as a pair case).
   And the detector's own rise over a sound (its bands' mean rise over the hold) within 2
   or 4 dB under its threshold, alone or where the residual's highest within 15 ms is over
   2, 4 or 6 dB, added the same way: a second voice is mostly there, a few dB under.
3. Told where to look: in a window around each voice's start (as a press's stamp might
   tell the box), the moment of the detector's strongest rise over the sound going on
   (its bands' mean rise over the hold, less their thresholds), refined as the detector
   does; and the residual's highest. Beside a random moment in the same window.
"""

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from machine import header, load
from onsets import in_order

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests/

from referee.audio import onsets as detector
from tests import voices

RATE = voices.SAMPLE_RATE
MS = RATE // 1000
SETTINGS = detector.DEFAULT
TOLERANCE = 20 * MS
CASES = (("two people", False), ("same voice", False), ("two people", True), ("same voice", True))
CUE_RATE = 8000  # the residual's comb works on the signal decimated to this
CUE_STEP = 16  # its moments: every 2 ms at CUE_RATE


class Detection:
    """The detector's insides on a clip: its triggers, and each frame's rises."""

    def __init__(self, x: np.ndarray) -> None:
        scan = detector._Scan(RATE, SETTINGS)
        levels = detector.band_levels(x, RATE, scan.frame, scan.hop, scan.bands)
        floor = detector._floor(levels, SETTINGS)
        threshold = np.array([[b.threshold_db] for b in scan.bands])
        back, until = (round(s / SETTINGS.hop_s) for s in SETTINGS.recent_s)
        recent = detector._recent(levels, back, until)
        recent = np.where(np.isnan(recent), floor, recent)
        hold = max(1, round(SETTINGS.hold_s / SETTINGS.hop_s))
        count = levels.shape[1] - hold + 1
        over_floor = levels - floor
        mean_floor = detector._means(over_floor, hold)[:, :count]
        mean_sound = detector._means(levels - np.maximum(floor, recent), hold)[:, :count]
        held_floor = detector._held(over_floor, mean_floor, threshold, scan.bands, SETTINGS)
        self.x, self.scan = x, scan
        self.over_sound = mean_sound - threshold  # > 0: starts an onset within a sound
        self.held_sound = (self.over_sound >= 0).any(axis=0)
        self.held_floor = held_floor.any(axis=0)
        self.triggers = [t[0] for t in detector._triggers(levels, scan.bands, SETTINGS)]
        self.found = [o.sample for o in detector.find_onsets(x, RATE)]
        self.ends = np.arange(count) * scan.hop + scan.frame  # each frame's last sample

    def frames(self, start: int) -> slice:
        """The frames whose trigger stands for a start there: ending 5 ms before to 30 ms
        after it."""
        lo = int(np.searchsorted(self.ends, start - 5 * MS))
        return slice(lo, int(np.searchsorted(self.ends, start + 30 * MS)))

    def loss(self, start: int) -> tuple[str, float | None]:
        """What the detector made of a voice starting there (the module's docstring)."""
        if any(abs(f - start) <= TOLERANCE for f in self.found):
            return "found", None
        window = self.frames(start)
        if any(window.start <= t < window.stop for t in self.triggers):
            return "placed off", None
        highest = float(self.over_sound[:, window].max())
        if self.held_sound[window].any():
            return "refractory", None
        if self.held_floor[window].any():
            return "under, in a sound", highest
        if any(TOLERANCE < f - start <= 80 * MS for f in self.found):
            return "late", highest
        return "under", highest

    def strongest(self, lo: int, hi: int) -> int:
        """The refined start of the strongest rise over the sound in frames ending from lo
        to 10 ms after hi."""
        window = slice(
            int(np.searchsorted(self.ends, lo)), int(np.searchsorted(self.ends, hi + 10 * MS))
        )
        band, at = np.unravel_index(
            np.argmax(self.over_sound[:, window]), self.over_sound[:, window].shape
        )
        end = int(self.ends[window.start + at])
        return detector._refined(self.x, 1.0, RATE, end, [self.scan.bands[band]], SETTINGS)


def residual(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(moments, the residual cue at each, dB): the module's docstring."""
    factor = RATE // CUE_RATE
    spectrum = np.fft.rfft(x)
    hz = np.fft.rfftfreq(len(x), 1 / RATE)
    spectrum[(hz < 80) | (hz > 2000)] = 0
    n = len(x) // factor
    y = np.fft.irfft(spectrum[: n // 2 + 1], n) / factor
    lags = np.arange(CUE_RATE // 400, CUE_RATE // 80 + 1)
    energy = np.concatenate(([0.0], np.cumsum(y**2)))
    left = np.zeros((len(lags), n + 1))  # the comb's output, summed
    shifted = np.zeros((len(lags), n + 1))
    for i, lag in enumerate(lags):
        left[i, lag + 1 :] = np.cumsum((y[lag:] - y[:-lag]) ** 2)
        shifted[i, lag + 1 :] = np.cumsum(y[:-lag] ** 2)
    past, future = round(0.04 * CUE_RATE), round(0.025 * CUE_RATE)
    moments = np.arange(past + lags[-1], n - future, CUE_STEP)
    cue = np.empty(len(moments))
    for k, at in enumerate(moments):
        comb = left[:, at] - left[:, at - past]
        share = comb / (
            energy[at] - energy[at - past] + shifted[:, at] - shifted[:, at - past] + 1e-20
        )
        period = lags[int(np.argmin(share))]
        near = np.flatnonzero(np.abs(lags - period) <= max(1, round(0.06 * period)))
        after = left[near, at + future] - left[near, at]
        after_share = after / (
            energy[at + future]
            - energy[at]
            + shifted[near, at + future]
            - shifted[near, at]
            + 1e-20
        )
        best = float(after[int(np.argmin(after_share))])
        cue[k] = 10 * np.log10((best / future + 1e-20) / (float(comb.min()) / past + 1e-20))
    return moments * factor, cue


def cepstral(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(moments, the cepstral distance at each): the module's docstring."""
    frame, hop = 16 * MS, 2 * MS
    frames = np.lib.stride_tricks.sliding_window_view(x, frame)[::hop]
    power = np.abs(np.fft.rfft(frames * np.hanning(frame), axis=1)) ** 2
    mel = 2595 * np.log10(1 + np.array([100.0, 4000.0]) / 700)
    edges = 700 * (10 ** (np.linspace(mel[0], mel[1], 26) / 2595) - 1)
    hz = np.fft.rfftfreq(frame, 1 / RATE)
    bank = np.array(
        [
            np.clip(np.minimum((hz - lo) / (mid - lo), (hi - hz) / (hi - mid)), 0, None)
            for lo, mid, hi in zip(edges, edges[1:], edges[2:], strict=False)
        ]
    )
    logmel = 10 * np.log10(power @ bank.T + 1e-12)
    k = np.arange(1, 13)
    bands = logmel.shape[1]
    dct = np.cos(np.pi * k[:, None] * (np.arange(bands) + 0.5) / bands) * np.sqrt(2 / bands)
    total = np.concatenate((np.zeros((1, 12)), np.cumsum(logmel @ dct.T, axis=0)))
    side = round(0.04 * RATE / hop)
    index = np.arange(side, len(frames) - side)
    before = (total[index] - total[index - side]) / side
    after = (total[index + side] - total[index]) / side
    return index * hop + frame // 2, np.sqrt(((after - before) ** 2).sum(axis=1))


def peaks(moments: np.ndarray, cue: np.ndarray, threshold: float) -> list[int]:
    """The cue's local highest (25 ms either side) over threshold."""
    width = max(1, round(25 * MS / (moments[1] - moments[0])))
    return [
        int(moments[i])
        for i in np.flatnonzero(cue >= threshold)
        if cue[i] >= cue[max(0, i - width) : i + width + 1].max()
    ]


def within_sound(candidates: list[int], found: list[int]) -> list[int]:
    """The candidates where the detector has no onset within 30 ms (nor one added), and one
    within 0.5 s before."""
    added: list[int] = []
    for at in candidates:
        if any(abs(at - f) <= 30 * MS for f in found + added):
            continue
        if any(0 < at - f <= 500 * MS for f in found):
            added.append(at)
    return added


def at_random(found: list[int], count: int, rng: np.random.Generator) -> list[int]:
    """count moments within 0.5 s after the detector's onsets, none within 30 ms of another."""
    added: list[int] = []
    for _ in range(1000):
        if len(added) >= count:
            break
        at = int(found[rng.integers(len(found))] + rng.uniform(0, 0.5) * RATE)
        if not any(abs(at - f) <= 30 * MS for f in found + added):
            added.append(at)
    return added


class Half:
    """One half's clips (tuned or held out) and the detector's onsets in them."""

    def __init__(self, half: tuple[str, ...], seeds: range) -> None:
        self.clips = [voices.clip(half, 20, s, pair=p, sibilant=b) for p, b in CASES for s in seeds]
        firsts = range(seeds.start, seeds.start + 2 * len(seeds))
        self.lone = [voices.clip(half, 20, s) for s in firsts]
        self.detections = [Detection(c.signal) for c in self.clips]
        self.lone_found = [Detection(c.signal).found for c in self.lone]

    def starts(self, clip: voices.VoiceClip, yardstick: str) -> list[int] | None:
        if yardstick == "true":
            return clip.onsets
        return None if None in clip.heard else [t for t in clip.heard if t is not None]

    def score(self, extra: Callable[[int, list[int]], list[int]]) -> tuple[int, int, float]:
        """(pairs in order against the true onsets, and the heard ones; onsets within a
        lone voice, a voice) with extra(clip's index, the detector's onsets) added."""
        true = heard = 0
        for i, (c, d) in enumerate(zip(self.clips, self.detections, strict=True)):
            found = sorted(d.found + extra(i, d.found))
            true += in_order(found, c.onsets, 0.02) is not None
            starts = self.starts(c, "heard")
            heard += starts is not None and in_order(found, starts, 0.02) is not None
        within = 0
        for i, (c, found) in enumerate(zip(self.lone, self.lone_found, strict=True)):
            after = [f - c.onsets[0] for f in found + extra(len(self.clips) + i, found)]
            within += sum(TOLERANCE < a <= 500 * MS for a in after)
        return true, heard, within / len(self.lone)


def losses(half: Half) -> None:
    print("1. each voice, as the detector leaves it")
    for yardstick in ("true", "heard"):
        pairs = [
            (starts, d)
            for c, d in zip(half.clips, half.detections, strict=True)
            if (starts := half.starts(c, yardstick)) is not None
        ]
        in_pairs = sum(in_order(d.found, starts, 0.02) is not None for starts, d in pairs)
        print(f"  against the {yardstick} onsets: pairs in order {in_pairs}/{len(pairs)}")
        for voice in (0, 1):
            kinds: Counter[str] = Counter()
            highest: list[float] = []
            for starts, d in pairs:
                kind, rise = d.loss(starts[voice])
                kinds[kind] += 1
                if kind == "under, in a sound" and rise is not None:
                    highest.append(rise)
            print(
                f"    voice {voice + 1}: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common())
            )
            if highest:
                q = np.percentile(highest, [25, 50, 75])
                print(
                    f"      under, in a sound: the rise's highest under its threshold "
                    f"p25 {q[0]:.1f}, p50 {q[1]:.1f}, p75 {q[2]:.1f} dB"
                )


Cue = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
CUES: dict[str, tuple[Cue, list[float]]] = {
    "residual": (residual, [6.0, 8.0, 10.0]),
    "cepstral": (cepstral, [26.0, 33.0, 43.0]),
}


def compare(half: Half, what: str, candidates: list[list[int]], rng: np.random.Generator) -> None:
    """A row: the pairs with candidates (a clip each, pairs' then lone voices') added within
    a sound; as many at random there; the same ones moved 40-80 ms either way."""
    counts: dict[int, int] = {}

    def added(i: int, found: list[int]) -> list[int]:
        more = within_sound(candidates[i], found)
        counts[i] = len(more)
        return more

    def moved(i: int, found: list[int]) -> list[int]:
        sides = rng.choice((-1, 1), len(candidates[i])) * rng.uniform(40, 80, len(candidates[i]))
        at = [round(c + m * MS) for c, m in zip(candidates[i], sides, strict=True)]
        more = within_sound(at, found)  # moved, fewer fall near the detector's: as many kept
        return sorted(rng.choice(more, min(len(more), counts[i]), replace=False).tolist())

    true, heard, within = half.score(added)
    randomly = np.mean(
        [half.score(lambda i, found: at_random(found, counts[i], rng)) for _ in range(10)], axis=0
    )
    shifted = np.mean([half.score(moved) for _ in range(10)], axis=0)
    print(
        f"  {what}: {true}, {heard}, {within:.2f}; at random {randomly[0]:.1f}, {randomly[1]:.1f}, "
        f"{randomly[2]:.2f}; moved {shifted[0]:.1f}, {shifted[1]:.1f}, {shifted[2]:.2f}"
    )


def cue_rows(half: Half, seed: int) -> None:
    print(
        "2. onsets added within a sound: pairs in order (true, heard), onsets within a lone "
        "voice, a voice; as many at random; the same moved 40-80 ms"
    )
    rng = np.random.default_rng([seed, 2])
    true, heard, within = half.score(lambda i, found: [])
    print(f"  the detector alone: {true}, {heard}, {within:.2f}")
    for name, (cue, thresholds) in CUES.items():
        values = [cue(c.signal) for c in [*half.clips, *half.lone]]
        for threshold in thresholds:
            candidates = [peaks(*v, threshold) for v in values]
            compare(half, f"{name} over {threshold:g}", candidates, rng)
    print("  the bands' rise over a sound under its threshold, alone or with the residual")
    detections = half.detections + [Detection(c.signal) for c in half.lone]
    residuals = [residual(c.signal) for c in [*half.clips, *half.lone]]
    for under in (2.0, 4.0):
        for least in (-np.inf, 2.0, 4.0, 6.0):
            candidates = [
                lowered(d, *r, under, least) for d, r in zip(detections, residuals, strict=True)
            ]
            with_cue = "alone" if least == -np.inf else f"the residual over {least:g}"
            compare(half, f"{under:g} dB under, {with_cue}", candidates, rng)


def lowered(
    d: Detection, moments: np.ndarray, cue: np.ndarray, under: float, least: float
) -> list[int]:
    """Where the bands' rise over the sound reaches `under` dB below its threshold, and the
    residual's highest within 15 ms reaches `least` dB (-inf: without it), 50 ms apart,
    refined as the detector does."""
    width = 15 * MS // int(moments[1] - moments[0])
    padded = np.concatenate((np.full(width, -np.inf), cue, np.full(width + 1, -np.inf)))
    highest = np.lib.stride_tricks.sliding_window_view(padded, 2 * width + 1).max(axis=1)
    near = highest[np.clip(np.searchsorted(moments, d.ends), 0, len(cue) - 1)]
    starts, last = [], -(10**9)
    for frame in np.flatnonzero((d.over_sound.max(axis=0) >= -under) & (near >= least)):
        if (frame - last) * SETTINGS.hop_s < SETTINGS.refractory_s:
            continue
        last, band = frame, int(np.argmax(d.over_sound[:, frame]))
        end = int(d.ends[frame])
        starts.append(detector._refined(d.x, 1.0, RATE, end, [d.scan.bands[band]], SETTINGS))
    return starts


def windows(half: Half) -> None:
    print("3. told a window around each start: its strongest rise (in order, within 20 ms)")
    residuals = [residual(c.signal) for c in half.clips]
    for yardstick in ("true", "heard"):
        for width in (30, 50, 100):
            band = comb = n = 0
            for c, d, (moments, cue) in zip(half.clips, half.detections, residuals, strict=True):
                starts = half.starts(c, yardstick)
                if starts is None:
                    continue
                n += 1
                by_band, by_comb = [], []
                for start in starts:
                    lo, hi = start - width * MS, start + width * MS
                    by_band.append(d.strongest(lo, hi))
                    inside = np.flatnonzero((moments >= lo) & (moments < hi))
                    by_comb.append(int(moments[inside[np.argmax(cue[inside])]]))
                band += in_order(by_band, starts, 0.02) is not None
                comb += in_order(by_comb, starts, 0.02) is not None
            chance = n * min(1.0, 20 / width) ** 2
            print(
                f"  {yardstick} onsets, +-{width} ms: the bands' strongest rise {band}/{n}, "
                f"the residual's {comb}/{n}; a random moment {chance:.0f}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="the first clip's seed")
    parser.add_argument("--real-clips", type=int, default=24, help="clips a pair case")
    args = parser.parse_args()
    if reason := voices.missing():
        print(reason)
        return 1
    header("Voice onsets: where real pairs are lost, and cues for a second voice")
    seeds = range(args.seed, args.seed + args.real_clips)
    print(f"seeds {seeds.start}-{seeds.stop - 1}, 20 dB")
    for speakers, label in ((voices.TUNED, "tuned"), (voices.HELD_OUT, "held out")):
        half = Half(speakers, seeds)
        print(f"\n== {label} ({', '.join(speakers)}): {len(half.clips)} pairs")
        losses(half)
        cue_rows(half, args.seed)
        windows(half)
    print()
    print(f"at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
