"""Synthetic "Set!" shouts over noise, with their true onsets: the clips that
tests/test_onsets.py and bench/onsets.py measure the voice onset detector on.

A shout is espeak-ng's "Set!" in one voice, pitch and speed, resampled by sox to 48 kHz
(espeak-ng speaks at 22.05 kHz: its /s/ reaches 11 kHz, sox's resampler keeps it).

The true onset of a clean shout is the first sample where its envelope (the RMS over a
centred 1 ms window) reaches -40 dB of the envelope's peak: the shout's first sound a
person could hear over a quiet room, before any noise is added.

SNR is taken over the shout's active part: the mean power of the clean shout's samples
whose envelope is within 40 dB of its peak (the same samples the true onset starts),
against the mean power of the noise over the whole clip. A clip of two shouts takes the
first shout's active power. Noise: white, pink (1/f power, shaped by FFT) or babble
(other espeak-ng voices saying other words, overlapping, at random moments).

Every clip is made from a seed: the same seed, the same clip.
"""

import functools
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np

SAMPLE_RATE = 48_000
ONSET_DB = -40.0  # below the envelope's peak: where a shout starts, and its active part
ENVELOPE_S = 0.001

# (voice, pitch 0-99, words a minute): men, women, two accents, slow to hurried.
VOICES = [
    ("en", 50, 175),
    ("en-us", 40, 200),
    ("en+f3", 70, 175),
    ("en+m3", 35, 160),
    ("de", 50, 175),
    ("en-us+f2", 80, 230),
    ("en+m7", 25, 140),
    ("de+f4", 65, 210),
    ("en-gb-x-rp", 55, 250),
    ("en+f5", 60, 150),
]
BABBLE_VOICES = ["en+m1", "en-us+f4", "en+m5", "de+m2", "en+f1", "en-us+m4"]
BABBLE_WORDS = [
    "three purple ovals",
    "wait, no",
    "that is not one",
    "green diamonds, look",
    "where is it",
    "two red squiggles",
    "your turn now",
    "I had that",
]
NOISES = ("white", "pink", "babble")


def missing_tools() -> str | None:
    """Why clips cannot be made here (espeak-ng or sox absent), or None."""
    absent = [tool for tool in ("espeak-ng", "sox") if shutil.which(tool) is None]
    if absent:
        return f"{' and '.join(absent)} not installed (apt-get install espeak-ng sox)"
    return None


@functools.cache
def speak(text: str, voice: str, pitch: int, speed: int) -> np.ndarray:
    """espeak-ng's speech at 48 kHz, float64, silence trimmed to 10 ms either side.
    Cached: a test session or a benchmark speaks each once."""
    espeak = subprocess.run(
        ["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed), "--stdout", text],
        capture_output=True,
        check=True,
    )
    to_floats = ["-t", "raw", "-e", "floating-point", "-b", "32", "-c", "1", "-r", str(SAMPLE_RATE)]
    sox = subprocess.run(
        ["sox", "-t", "wav", "-", *to_floats, "-"],
        input=espeak.stdout,
        capture_output=True,
        check=True,
    )
    samples = np.frombuffer(sox.stdout, dtype=np.float32).astype(np.float64)
    sounding = np.flatnonzero(np.abs(samples) > 1e-4)
    margin = SAMPLE_RATE // 100
    return samples[max(0, sounding[0] - margin) : sounding[-1] + margin]


def shout(index: int) -> np.ndarray:
    """The index-th "Set!" of VOICES (modulo their number)."""
    voice, pitch, speed = VOICES[index % len(VOICES)]
    return speak("Set!", voice, pitch, speed)


def envelope(clean: np.ndarray) -> np.ndarray:
    width = round(ENVELOPE_S * SAMPLE_RATE)
    return np.sqrt(np.convolve(clean**2, np.ones(width) / width, mode="same"))


def true_onset(clean: np.ndarray) -> int:
    """The sample where the clean shout starts (the module's docstring says how)."""
    env = envelope(clean)
    return int(np.argmax(env >= env.max() * 10 ** (ONSET_DB / 20)))


def active_power(clean: np.ndarray) -> float:
    env = envelope(clean)
    return float(np.mean(clean[env >= env.max() * 10 ** (ONSET_DB / 20)] ** 2))


def white_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal(n)


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise whose power falls as 1/f (3 dB an octave) from 20 Hz up, unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    hz = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
    spectrum /= np.sqrt(np.maximum(hz, 20.0))
    pink = np.fft.irfft(spectrum, n)
    return pink / np.sqrt(np.mean(pink**2))


def babble(n: int, rng: np.random.Generator) -> np.ndarray:
    """Other voices talking: about three phrases at a time, each at a random moment, at
    levels 6 dB apart at most, unit RMS over the clip."""
    mix = np.zeros(n)
    phrases = max(3, round(3 * n / SAMPLE_RATE))
    for _ in range(phrases):
        voice = BABBLE_VOICES[rng.integers(len(BABBLE_VOICES))]
        words = BABBLE_WORDS[rng.integers(len(BABBLE_WORDS))]
        pitch, speed = (30, 50, 70)[rng.integers(3)], (150, 180, 210)[rng.integers(3)]
        speech = speak(words, voice, pitch, speed)
        start = int(rng.integers(-len(speech) // 2, n))
        piece = speech[max(0, -start) : n - start]
        at = max(0, start)
        mix[at : at + len(piece)] += piece * 10 ** (rng.uniform(-6, 0) / 20)
    return mix / np.sqrt(np.mean(mix**2))


def noise(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS noise of a kind of NOISES."""
    makers = {"white": white_noise, "pink": pink_noise, "babble": babble}
    return makers[kind](n, rng)


@dataclass(frozen=True)
class Clip:
    """A mono recording at SAMPLE_RATE and the sample offsets of its shouts' true onsets."""

    signal: np.ndarray
    onsets: list[int]
    label: str


def clip(
    kind: str,
    snr_db: float,
    seed: int,
    *,
    gaps_s: tuple[float, ...] = (),
    seconds: float = 2.0,
    voice: int | None = None,
) -> Clip:
    """A clip of `seconds` of noise with a shout at a random moment in its first half,
    and one more shout after each of `gaps_s` (onset to onset, other voices). The first
    shout's voice is VOICES[voice], or a random one."""
    rng = np.random.default_rng([seed, int(snr_db * 10), NOISES.index(kind), len(gaps_s)])
    n = round(seconds * SAMPLE_RATE)
    signal = np.zeros(n)
    drawn = int(rng.integers(len(VOICES)))  # drawn even when chosen: the rest stays the same
    first = drawn if voice is None else voice
    at = int(rng.integers(round(0.3 * n), round(0.5 * n)))
    onsets: list[int] = []
    power = 0.0
    for number, gap in enumerate((0.0, *gaps_s)):
        clean = shout(first + 3 * number)
        # The true onset lands where asked: the shout's leading silence goes before it.
        onset_at = at + round(gap * SAMPLE_RATE)
        start = onset_at - true_onset(clean)
        signal[start : start + len(clean)] += clean[: n - start]
        onsets.append(onset_at)
        at = onset_at
        power = power or active_power(clean)
    scale = np.sqrt(power / 10 ** (snr_db / 10))
    voices = "+".join(VOICES[(first + 3 * k) % len(VOICES)][0] for k in range(len(onsets)))
    label = f"{kind} {snr_db:g} dB {voices} seed {seed}"
    return Clip(signal + scale * noise(kind, n, rng), onsets, label)


def noise_alone(kind: str, seconds: float, seed: int) -> np.ndarray:
    """Noise and nothing else, at the level of a 20 dB clip's noise (any level would do:
    the detector's floor follows it)."""
    rng = np.random.default_rng([seed, NOISES.index(kind), 99])
    return 0.01 * noise(kind, round(seconds * SAMPLE_RATE), rng)
