"""The voice onset detector (referee/audio/onsets.py) against issue 17's targets, on
espeak-ng's "Set!" shouts over noise (tests/shouts.py says how clips, true onsets and
SNR are made), beside a plain broadband energy detector on the same clips.

    .venv/bin/python bench/onsets.py [--clips 60] [--minutes 3] [--seed 0]

Cases (each seeded: every run measures the same clips; --seed S measures clips S to
S + clips - 1 and noise of seed S + 1 instead, so that a change is checked on clips it
was not tuned on):
  first onset  white and pink at 20 and 10 dB: the detector's first onset in the clip
               against the shout's true onset (a false onset before it is a miss);
               target p95 <= 3 ms at 20 dB, <= 10 ms at 10 dB.
  babble       other voices talking at 20 dB: the onset nearest the truth (the voices
               have onsets of their own); target p95 <= 10 ms.
  pairs        two shouts 80-200 ms apart (uniform), white noise, 20 dB: both found,
               each within 10 ms, in >= 80 % of clips.
  noise alone  --minutes of white and of pink noise: <= 1 onset a minute.
  cost         CPU seconds a second of 48 kHz audio, over the noise alone.

Every case is a row, the baseline's too; the verdict counts the detector's rows only.
The exit status is 1 when a target is missed.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from machine import header, load, percentile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests/

from referee.audio.onsets import BROADBAND, DEFAULT, Settings, find_onsets
from tests import shouts

RATE = shouts.SAMPLE_RATE
BASELINE = Settings(bands=(BROADBAND,))
DETECTORS = [("bands", DEFAULT), ("broadband", BASELINE)]


def first_errors_ms(kind: str, snr: float, seeds: range, settings: Settings, nearest: bool):
    errors = []
    for seed in seeds:
        clip = shouts.clip(kind, snr, seed)
        found = [o.sample for o in find_onsets(clip.signal, RATE, settings)]
        truth = clip.onsets[0]
        if not found:
            errors.append(float("inf"))
        elif nearest:
            errors.append(min(abs(f - truth) for f in found) * 1000 / RATE)
        else:
            errors.append(abs(found[0] - truth) * 1000 / RATE)
    return errors


def pairs_found(seeds: range, settings: Settings) -> int:
    hits = 0
    for seed in seeds:
        gap = float(np.random.default_rng([seed, 7]).uniform(0.08, 0.2))
        clip = shouts.clip("white", 20, seed, gaps_s=(gap,))
        found = [o.sample for o in find_onsets(clip.signal, RATE, settings)]
        hits += bool(found) and all(
            min(abs(f - t) for f in found) <= 0.01 * RATE for t in clip.onsets
        )
    return hits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips", type=int, default=60, help="clips a case")
    parser.add_argument("--minutes", type=float, default=3.0, help="of each noise alone")
    parser.add_argument("--seed", type=int, default=0, help="the first clip's seed")
    args = parser.parse_args()
    if reason := shouts.missing_tools():
        print(f"bench/onsets.py: {reason}")
        return 1
    header("Voice onsets: issue 17's detector targets")
    seeds = range(args.seed, args.seed + args.clips)
    print(
        f"clips a case: {args.clips}, seeds {seeds.start}-{seeds.stop - 1}; "
        f"noise alone: {args.minutes:g} min of each, seed {args.seed + 1}"
    )
    print()
    title = f"{'case':<34} {'detector':<10} {'p50':>8} {'p95':>8} {'max':>8}  result / met?"
    print(title)
    print("-" * len(title))
    missed: list[str] = []

    def row(case: str, name: str, cells: str, result: str, ok: bool) -> None:
        verdict = ("yes" if ok else "NO") if name == "bands" else "(baseline)"
        print(f"{case:<34} {name:<10} {cells}  {result} {verdict}")
        if name == "bands" and not ok:
            missed.append(case)

    cases = [("white", 20, 3.0), ("pink", 20, 3.0), ("white", 10, 10.0), ("pink", 10, 10.0)]
    for kind, snr, target in [*cases, ("babble", 20, 10.0)]:
        case = f"{'first' if kind != 'babble' else 'nearest'} onset, {kind} {snr} dB"
        for name, settings in DETECTORS:
            errors = first_errors_ms(kind, snr, seeds, settings, kind == "babble")
            p95 = percentile(errors, 95)
            cells = f"{percentile(errors, 50):>8.2f} {p95:>8.2f} {max(errors):>8.2f}"
            row(f"{case} (ms)", name, cells, f"p95 <= {target:g} ms:", p95 <= target)
    for name, settings in DETECTORS:
        hits = pairs_found(seeds, settings)
        share = 100 * hits / args.clips
        cells = f"{'':>8} {'':>8} {'':>8}"
        row(
            "pairs 80-200 ms, white 20 dB",
            name,
            cells,
            f"{hits}/{args.clips} = {share:.0f} % >= 80 %:",
            share >= 80,
        )
    seconds = args.minutes * 60
    for kind in ("white", "pink"):
        noise = shouts.noise_alone(kind, seconds, args.seed + 1)
        for name, settings in DETECTORS:
            start = time.process_time()
            found = find_onsets(noise, RATE, settings)
            cpu = time.process_time() - start
            per_minute = len(found) / args.minutes
            cells = f"{'':>8} {'':>8} {'':>8}"
            row(
                f"noise alone, {kind}",
                name,
                cells,
                f"{len(found)} onsets, {per_minute:.2f}/min <= 1:",
                per_minute <= 1,
            )
            print(f"{'  cost':<34} {name:<10} {'':>26}  {cpu / seconds:.4f} CPU s per s of audio")
    print()
    print(f"at the end: {load()}")
    print("targets met" if not missed else "MISSED: " + "; ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
