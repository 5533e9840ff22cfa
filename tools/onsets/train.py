"""Train the learned voice onset detector (tools/onsets/learned.py) and write its
weights, tools/onsets/onsets.npz: `make onset-model`.

    .venv/bin/python -m tools.onsets.train [--klettres build/klettres] [--clips 4000]

Needs the development extra (`pip install -e '.[train]'`: torch, CPU build), sox, and
Debian's klettres-data package unpacked (`make onset-model` does it:
`apt-get download klettres-data`, `dpkg-deb -x`): KDE's alphabet tutor's recordings,
one person a language saying letters and syllables (GPL-2+; tests/recordings/README.md).
Every language's speaker but tests/voices.py's HELD_OUT ones (it, pt-BR, uk, en-GB) is
trained on, the tuned ones among them; the held-out ones are never read.

Each example is 1.6 s at 48 kHz: talk around (4 to 16 of the training speakers'
recordings over one another), white or pink noise, or the hiss alone; a voice at 5 to
30 dB over it (tests/voices.py's SNR), and half the time a second 60 to 250 ms later
(the same person or another, 6 dB over or under), or none in one of ten; a white floor
20 dB under the noise (the microphone's hiss). Its targets: the frames whose centres are
within TARGET_S of where a voice is first heard over the rest of the clip
(tests/voices.py's `heard`; none for a voice never heard). 21 minutes on two
shared cores at a load of 6 to 10 (11 of them making the examples; `--cache FILE` keeps
them); MODEL.md here says what it scored.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from tests import shouts, voices
from tests.recordings.extract import decoded
from tools.onsets import learned

ROOT = Path(__file__).resolve().parents[2]
RATE = shouts.SAMPLE_RATE
# KLettres' folder for each held-out speaker: never read here.
HELD_OUT_FOLDERS = {"it", "pt_BR", "uk", "en_GB"}
ROOTED = "usr/share/klettres"  # in the unpacked package
CLIP_S = 1.6
TARGET_S = 0.01
KEEP_S = 0.7  # of each recording from its true onset on: a word's start and vowel
VALIDATION = ("en", "ru")  # speakers whose examples choose the threshold, not trained on


def recordings(root: Path) -> dict[str, list[voices.Voice]]:
    """Each training speaker's recordings, prepared as the benchmark's (true onset, its
    own room faded out), at RATE, KEEP_S from the onset, at unit power where they sound."""
    found: dict[str, list[voices.Voice]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name in HELD_OUT_FOLDERS:
            continue
        for path in sorted(folder.glob("*/*.ogg")):
            voice = voices.prepared(decoded(path), 16_000, folder.name, path.stem)
            if voice is None:
                continue
            end = voice.onset + round(KEEP_S * RATE)
            # At unit power where it sounds (the SNR's measure): each mix scales it.
            unit = voice.samples[:end] / np.sqrt(voices.active_power(voice.samples))
            found.setdefault(folder.name, []).append(
                voices.Voice(voice.speaker, voice.word, unit, voice.onset)
            )
    return found


def talk(pool: list[voices.Voice], n: int, rng: np.random.Generator) -> np.ndarray:
    """n samples of 4 to 16 recordings over one another at random moments, unit RMS."""
    mix = np.zeros(n)
    for _ in range(int(rng.integers(4, 17))):
        at = int(rng.integers(-n // 2, n))
        while at < n:
            x = pool[rng.integers(len(pool))].samples * 10 ** (rng.uniform(-3, 3) / 20)
            lo = max(0, -at)
            piece = x[lo : n - at]
            mix[max(0, at) : max(0, at) + len(piece)] += piece
            at += len(x) + int(rng.integers(0, RATE // 4))
    unit: np.ndarray = mix / np.sqrt(np.mean(mix**2) + 1e-20)
    return unit


def noise(pool: list[voices.Voice], n: int, rng: np.random.Generator) -> np.ndarray:
    kind = rng.choice(["talk", "white", "pink", "hiss"], p=[0.6, 0.15, 0.15, 0.1])
    if kind == "talk":
        base = talk(pool, n, rng)
    elif kind == "white":
        base = rng.standard_normal(n)
    elif kind == "pink":
        spectrum = np.fft.rfft(rng.standard_normal(n))
        spectrum[1:] /= np.sqrt(np.arange(1, len(spectrum)))
        spectrum[0] = 0
        base = np.fft.irfft(spectrum, n)
        base /= np.sqrt(np.mean(base**2))
    else:
        base = np.zeros(n)
    hiss = rng.standard_normal(n) * 10 ** (voices.HISS_DB / 20)
    mixed: np.ndarray = base + hiss
    unit: np.ndarray = mixed / np.sqrt(np.mean(mixed**2))
    return unit


def example(
    speakers: dict[str, list[voices.Voice]], pool: list[voices.Voice], rng: np.random.Generator
) -> tuple[np.ndarray, list[int]]:
    """A clip and its voices' true onsets (the module's docstring)."""
    n = round(CLIP_S * RATE)
    names = sorted(speakers)
    count = rng.choice([0, 1, 2], p=[0.1, 0.4, 0.5])
    pieces: list[np.ndarray] = []
    onsets: list[int] = []
    at = int(rng.integers(round(0.55 * RATE), round(1.05 * RATE)))
    speaker = names[rng.integers(len(names))]
    for number in range(count):
        if number:
            at += round(rng.uniform(0.06, 0.25) * RATE)
            if rng.random() < 0.5:
                speaker = names[rng.integers(len(names))]
        own = speakers[speaker]
        v = own[rng.integers(len(own))]
        x = v.samples
        if number:
            x = x * 10 ** (rng.uniform(-6, 6) / 20)
        start = at - v.onset
        piece = x[max(0, -start) : n - start]
        pieces.append(np.zeros(n))
        pieces[-1][max(0, start) : max(0, start) + len(piece)] = piece
        onsets.append(at)
    snr = rng.uniform(5, 30)
    signal = np.sum([np.zeros(n), *pieces], axis=0) + noise(pool, n, rng) * np.sqrt(
        1 / 10 ** (snr / 10)
    )
    # Where each voice is first heard over the rest (the benchmark's second yardstick):
    # a true onset under the rest is no one's to find; one never heard is no target.
    heard = [voices.heard(p, signal - p, t) for p, t in zip(pieces, onsets, strict=True)]
    onsets = [t for t in heard if t is not None]
    signal *= 10 ** (rng.uniform(-30, -1) / 20) / max(float(np.abs(signal).max()), 1e-9)
    return signal, onsets


def targets(frames: int, onsets: list[int]) -> np.ndarray:
    frame, hop = round(learned.FRAME_S * RATE), round(learned.HOP_S * RATE)
    centres = np.arange(frames) * hop + frame // 2
    y = np.zeros(frames, dtype=np.float32)
    for t in onsets:
        y[np.abs(centres - t) <= TARGET_S * RATE] = 1.0
    return y


def dataset(
    speakers: dict[str, list[voices.Voice]], clips: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    pool = [v for own in speakers.values() for v in own]
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for _ in range(clips):
        signal, onsets = example(speakers, pool, rng)
        f = learned.features(signal, RATE)
        # The frames before the first voice can be are there for the floor only.
        first = round(0.4 / learned.HOP_S)
        xs.append(f[:, :, first:])
        ys.append(targets(f.shape[2], onsets)[first:])
    return np.stack(xs), np.stack(ys)


class OnsetNet(nn.Module):  # type: ignore[misc,unused-ignore]  # torch: the train extra
    """learned.py's network, in torch: the shapes learned.py finds in its weights."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(2, 8, (5, 7))
        self.c2 = nn.Conv2d(8, 16, (3, 7))
        self.c3 = nn.Conv2d(16, 32, (8, 9), dilation=(1, learned.DILATION))
        self.out = nn.Conv2d(32, 1, 1)
        self.pool = nn.MaxPool2d((2, 1))
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.c1(x)))
        x = self.pool(torch.relu(self.c2(x)))
        x = self.drop(torch.relu(self.c3(x)))
        logits: torch.Tensor = self.out(x)[:, 0, 0]
        return logits

    def weights(self, threshold: float) -> dict[str, np.ndarray]:
        params = dict(self.named_parameters())
        named: dict[str, torch.Tensor] = {
            f"{short}{kind[0]}": params[f"{layer}.{kind}"]
            for layer, short in (("c1", "c1"), ("c2", "c2"), ("c3", "c3"), ("out", "o"))
            for kind in ("weight", "bias")
        }
        named["ow"] = named["ow"][:, :, 0, 0]
        saved = {k: v.detach().numpy().astype(np.float32) for k, v in named.items()}
        saved["threshold"] = np.array(threshold, dtype=np.float32)
        return saved


def padded(x: np.ndarray, before: int, after: int) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), (0, 0), (before, after)), mode="edge")


def choose_threshold(p: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, int]]:
    """The threshold on the validation clips that finds the most voices (a peak within
    20 ms) less the peaks that are no voice's, each counted once."""
    hop = learned.HOP_S
    best: tuple[float, float, dict[str, int]] = (-np.inf, 0.5, {})
    for threshold in np.arange(0.2, 0.96, 0.05):
        found = false = voices_total = 0
        for pi, yi in zip(p, y, strict=True):
            truth = np.flatnonzero(np.diff(np.concatenate(([0], yi))) > 0)
            truth = truth + round(TARGET_S / hop)  # the first target frame to the onset
            peaks = learned.peaks(pi, float(threshold))
            voices_total += len(truth)
            near = round(0.02 / hop)
            found += sum(any(abs(k - t) <= near for k in peaks) for t in truth)
            false += sum(all(abs(k - t) > near for t in truth) for k in peaks)
        score = float(found - false)
        if score > best[0]:
            stats = {"found": found, "voices": voices_total, "false": false}
            best = (score, float(threshold), stats)
    return best[1], best[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--klettres", type=Path, default=ROOT / "build/klettres")
    parser.add_argument("--clips", type=int, default=4000)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=learned.MODEL)
    parser.add_argument("--cache", type=Path, help="keeps the examples for a second run")
    args = parser.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)
    began = time.monotonic()
    every = {} if args.cache and args.cache.exists() else recordings(args.klettres / ROOTED)
    train = {s: v for s, v in every.items() if s not in VALIDATION}
    check = {s: v for s, v in every.items() if s in VALIDATION}
    print(
        f"speakers: {', '.join(f'{s} {len(v)}' for s, v in every.items())}; "
        f"checked on {', '.join(VALIDATION)} ({time.monotonic() - began:.0f} s)"
    )
    if args.cache and args.cache.exists():
        with np.load(args.cache) as cached:
            x, y, vx, vy = (cached[k] for k in ("x", "y", "vx", "vy"))
    else:
        x, y = dataset(train, args.clips, args.seed)
        vx, vy = dataset(check, max(200, args.clips // 10), args.seed + 1)
        if args.cache:
            np.savez(args.cache, x=x, y=y, vx=vx, vy=vy)
    print(f"examples: {len(x)} and {len(vx)} to check ({time.monotonic() - began:.0f} s)")
    net = OnsetNet()
    before, after = learned.context(net.weights(0.5))
    xt = torch.from_numpy(padded(x, before, after))
    yt = torch.from_numpy(y)
    vxt = torch.from_numpy(padded(vx, before, after))
    optimiser = torch.optim.Adam(net.parameters(), lr=2e-3)
    steps = max(1, args.epochs * (len(x) // 64))
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, 3e-3, total_steps=steps)
    loss_of = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(4.0))
    for epoch in range(args.epochs):
        net.train()
        order = torch.randperm(len(x))
        total = 0.0
        for i in range(0, len(x) - 63, 64):
            batch = order[i : i + 64]
            loss = loss_of(net(xt[batch]), yt[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(batch)
        net.eval()
        with torch.no_grad():
            vp = torch.sigmoid(net(vxt)).numpy()
        vloss = float(
            loss_of(torch.logit(torch.from_numpy(vp).clamp(1e-6, 1 - 1e-6)), torch.from_numpy(vy))
        )
        print(
            f"epoch {epoch + 1}: loss {total / len(x):.4f}, checked {vloss:.4f} "
            f"({time.monotonic() - began:.0f} s)",
            flush=True,
        )
    threshold, stats = choose_threshold(vp, vy)
    print(f"threshold {threshold:.2f}: {json.dumps(stats)}")
    weights = net.weights(threshold)
    with args.out.open("wb") as file:
        np.savez(file, allow_pickle=False, **weights)
    # The numpy network is the one the box runs: it must give what torch gave.
    mine = learned.probabilities(vx[0], learned.model.__wrapped__(args.out))
    assert np.allclose(mine, vp[0], atol=1e-4), np.abs(mine - vp[0]).max()
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size / 1000:.0f} kB) in {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
