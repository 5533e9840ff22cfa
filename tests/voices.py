"""Real recorded voices over other people talking, with their true onsets: the clips that
tests/test_onsets.py and bench/onsets.py measure the voice onset detector on besides
espeak-ng's shouts (tests/shouts.py), since a detector tuned on a synthesizer alone
missed most pairs of real voices (issue 30).

The recordings are tests/recordings/ (its README.md says whose they are, and their
licence), or wherever REFEREE_VOICES names a folder of the same shape. Without them the
tests that need them skip, saying so, and the benchmark's real-voice rows fail.

    words/{speaker}_{word}.wav  8 people, each a language, saying syllables and short
                                words, some starting with /s/ (the /s/ of "Set"):
                                0.65 s from up to 0.2 s before the word, 16 kHz
    noise/*.wav                 other people talking over one another (4 and 8 at once);
                                4 s each, 16 kHz

Each is made 48 kHz, the box's rate, by FFT interpolation: nothing over 8 kHz, so an /s/
shows in the sibilant band's 5-8 kHz only, and a white floor 20 dB under the room noise
stands for the microphone's own hiss there. A recording's own room noise before the
voice is faded out (over 50 ms, ending 20 ms before the true onset): the table's noise is
the added one, and the recording's must not start with a step of its own.

The true onset is where the clean recording's envelope (tests/shouts.py's) rises over
-40 dB of its peak, or 15 dB over its own floor (its 5th percentile) where that is higher
(a phone's own noise is not a voice), and stays over it until the envelope is within
30 dB of its peak, but for gaps shorter than 0.1 s (a stop's closure): a
click or a noise earlier is not the word.
A recording whose start so found is within 20 ms after its fade has no start that can be
told from its own noise (none of those committed), and is left out. The SNR is the power where
the envelope is over that threshold against the added noise's, as tests/shouts.py takes it.

That true onset is the clean recording's, and may be where nobody at the table can hear
it: a rumble 40 dB under the word's peak (en-GB "car": 165 ms of it before its /k/), the
voicing before a /b/ or /d/ under the others' talk, a second voice's start under the
first one's vowel. Each clip also gives each voice's HEARD onset: the first moment, from
its true onset on, that the voice is at least as loud as everything else in the clip
(the noise, the other voice) in one of HEARD_BANDS_HZ's bands, in frames of HEARD_S, for
HEARD_S running: where a listener can first hear it over the rest (energetic masking;
a judge orders what is heard), or None if it never is.

Speakers are split in two: TUNED, the people the detector's settings were chosen on, and
HELD_OUT, people it was never tuned on, whose rows say how it does on voices it has not
heard. Pairs are of two people of one half, or one person saying two words.

Every clip is made from a seed: the same seed, the same clip.
"""

import functools
import itertools
import os
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from referee.audio.onsets import Band, band_levels

from .shouts import ONSET_DB, SAMPLE_RATE, Clip, envelope

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(os.environ.get("REFEREE_VOICES") or ROOT / "tests" / "recordings")
TUNED = ("en", "fr", "ru", "es")
HELD_OUT = ("it", "pt-BR", "uk", "en-GB")
FLOOR_DB = 15.0  # a true onset's least rise over its recording's own floor
FADE_S = 0.05
LOUD_DB = -30.0  # the word's loud part: where its start is looked for before
GAP_S = 0.1  # quiet this long ends a word's sound: longer than a stop's closure
HISS_DB = -20.0  # the microphone's white floor, under the room noise's power
LEVELS_DB = (-3.0, 3.0)  # the second voice's level, over or under the first's (uniform)
# Where a voice is heard: bands about as wide as the ear's at their lowest (a few critical
# bands each), up to the recordings' 8 kHz; frames and the run they must last, 10 ms.
HEARD_BANDS_HZ = (100, 300, 700, 1500, 3000, 5000, 8000)
HEARD_S = 0.01
HEARD_HOP_S = 0.001


@dataclass(frozen=True)
class Voice:
    """A recording of one word or sentence's start at SAMPLE_RATE."""

    speaker: str
    word: str
    samples: np.ndarray
    onset: int  # its true onset, a sample of samples

    @property
    def sibilant(self) -> bool:
        return self.word.startswith("s")  # the words kept with an s all start with /s/


def missing() -> str | None:
    """Why the real voices cannot be had here, or None."""
    needed = [FOLDER / part for part in ("words", "noise")]
    if not all(path.is_dir() for path in needed):
        return f"no real voices in {FOLDER} (tests/voices.py says what they are)"
    return None


def _read(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as file:
        if file.getnchannels() != 1 or file.getsampwidth() != 2:
            raise ValueError(f"{path}: not 16-bit mono")
        raw = file.readframes(file.getnframes())
        return np.frombuffer(raw, dtype="<i2") / 32768.0, file.getframerate()


def resampled(x: np.ndarray, rate: int) -> np.ndarray:
    """x at SAMPLE_RATE: its spectrum zero-padded (rate divides SAMPLE_RATE)."""
    factor = SAMPLE_RATE // rate
    spectrum = np.fft.rfft(x)
    padded = np.zeros(len(x) * factor // 2 + 1, dtype=complex)
    padded[: len(spectrum)] = spectrum
    return np.fft.irfft(padded, len(x) * factor) * factor


def _sounding(clean: np.ndarray) -> np.ndarray:
    """Where a clean recording's envelope is over its threshold (the module's docstring)."""
    env = envelope(clean)
    faded = round(FADE_S * SAMPLE_RATE)
    floor = np.percentile(env[faded:], 5) * 10 ** (FLOOR_DB / 20)
    sounding: np.ndarray = env >= max(env.max() * 10 ** (ONSET_DB / 20), floor)
    sounding[:faded] = False
    return sounding


def onset(clean: np.ndarray) -> int:
    """Where a clean recording's voice starts: the first sample over the threshold from
    which it is not under it for GAP_S or longer up to where it is first LOUD_DB of its
    peak."""
    sounding = _sounding(clean)
    env = envelope(clean)
    loud = int(np.argmax(env >= env.max() * 10 ** (LOUD_DB / 20)))
    quiet = np.flatnonzero(~sounding[:loud])
    if not len(quiet):
        return 0
    # The runs of quiet samples before the loudest; the last one GAP_S long ends the search.
    breaks = np.flatnonzero(np.diff(quiet) > 1)
    starts = np.concatenate(([quiet[0]], quiet[breaks + 1]))
    ends = np.concatenate((quiet[breaks], [quiet[-1]])) + 1
    long = np.flatnonzero(ends - starts >= round(GAP_S * SAMPLE_RATE))
    after = ends[long[-1]] if len(long) else 0
    return int(after + np.argmax(sounding[after:]))


def active_power(clean: np.ndarray) -> float:
    """The mean power of a clean recording where its voice sounds."""
    return float(np.mean(clean[_sounding(clean)] ** 2))


def prepared(x: np.ndarray, rate: int, speaker: str, word: str) -> Voice | None:
    """A recording (floats at `rate`) at SAMPLE_RATE with its true onset and its own room
    faded out before it (the module's docstring); None if its start cannot be told."""
    fade = min(len(x), round(FADE_S * rate))
    x = x.copy()
    x[:fade] *= np.linspace(0.0, 1.0, fade)
    samples = resampled(x, rate)
    start = onset(samples)
    # A start right where the fade ends is the recording's own noise or breath, not a
    # voice's start that can be told: such a recording has no truth to measure with.
    if start < round((FADE_S + 0.02) * SAMPLE_RATE):
        return None
    # The recording's own room before the voice is not the table's: faded out, up to
    # 20 ms before the voice's start (a fade of 50 ms, too slow to be an onset).
    gate = start - round(0.02 * SAMPLE_RATE)
    ramp = round(FADE_S * SAMPLE_RATE)
    samples[: gate - ramp] = 0.0
    samples[gate - ramp : gate] *= np.linspace(0.0, 1.0, ramp)
    return Voice(speaker, word, samples, start)


@functools.cache
def voices() -> tuple[Voice, ...]:
    """Every recording of the folder, sorted by name."""
    found = []
    for path in sorted((FOLDER / "words").glob("*.wav")):
        speaker, word = path.stem.split("_", 1)
        voice = prepared(*_read(path), speaker, word)
        if voice is not None:
            found.append(voice)
    return tuple(found)


@dataclass(frozen=True)
class VoiceClip(Clip):
    """A clip of real voices: `onsets` the true ones, `heard` where each is first heard."""

    heard: list[int | None]


def heard(voice: np.ndarray, rest: np.ndarray, onset: int) -> int | None:
    """Where a voice (its samples in a clip) is first heard over the rest of the clip, at
    or after its true onset (the module's docstring); None if it never is."""
    bands = [Band(f"{lo}", lo, hi, True, 0.0) for lo, hi in itertools.pairwise(HEARD_BANDS_HZ)]
    frame, hop = round(HEARD_S * SAMPLE_RATE), round(HEARD_HOP_S * SAMPLE_RATE)
    over = band_levels(voice, SAMPLE_RATE, frame, hop, bands) >= band_levels(
        rest, SAMPLE_RATE, frame, hop, bands
    )
    run = round(HEARD_S / HEARD_HOP_S)
    heard_in = over.any(axis=0)
    lasting = np.convolve(heard_in, np.ones(run, dtype=int), mode="full")[run - 1 :] == run
    first = max(0, (onset - frame // 2 + hop - 1) // hop)  # frames centred at the onset on
    frames = np.flatnonzero(lasting[first:])
    return None if not len(frames) else max(onset, (first + int(frames[0])) * hop + frame // 2)


@functools.cache
def _noises() -> tuple[np.ndarray, ...]:
    return tuple(resampled(*_read(path)) for path in sorted((FOLDER / "noise").glob("*.wav")))


def noise_names() -> list[str]:
    return [path.stem for path in sorted((FOLDER / "noise").glob("*.wav"))]


NOISE_ALONE_S = 4.0  # each room noise's whole length


def noise_alone(index: int, seed: int) -> np.ndarray:
    """The index-th room noise whole (NOISE_ALONE_S), with the hiss, and nothing else, at
    the level of a 20 dB clip's noise (any level would do: the detector's floor follows
    it)."""
    source = _noises()[index]
    rng = np.random.default_rng([seed, index, 99])
    hiss = rng.standard_normal(len(source)) * 10 ** (HISS_DB / 20)
    return 0.01 * (source / np.sqrt(np.mean(source**2)) + hiss)


def room_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """n samples of a room noise (a random one, from a random moment) with the
    microphone's hiss, unit RMS."""
    noises = _noises()
    source = noises[rng.integers(len(noises))]
    at = int(rng.integers(0, len(source) - n)) if len(source) > n else 0
    piece = np.resize(source[at:], n)
    piece = piece / np.sqrt(np.mean(piece**2))
    hiss = rng.standard_normal(n) * 10 ** (HISS_DB / 20)
    mixed: np.ndarray = (piece + hiss) / np.sqrt(1 + 10 ** (HISS_DB / 10))
    return mixed


def speakers(half: tuple[str, ...]) -> list[Voice]:
    return [v for v in voices() if v.speaker in half]


def clip(
    half: tuple[str, ...],
    snr_db: float,
    seed: int,
    *,
    pair: str = "",
    sibilant: bool = False,
    seconds: float = 2.0,
) -> VoiceClip:
    """A clip of `seconds` of room noise with a voice of `half`'s speakers at a random
    moment in its first half; with `pair` "two people" or "same voice", a second voice
    80-200 ms after the first (onset to onset: over its vowel), at LEVELS_DB from it.
    `sibilant`: words that start with /s/ only."""
    rng = np.random.default_rng([seed, int(snr_db * 10), len(pair), sibilant, len(half)])
    pool = [v for v in speakers(half) if v.sibilant or not sibilant]
    same = pair == "same voice"

    def partners(first: Voice) -> list[Voice]:
        return [v for v in pool if (v.speaker == first.speaker) == same and v != first]

    firsts = [v for v in pool if partners(v)] if pair else pool
    first = firsts[rng.integers(len(firsts))]
    chosen = [first]
    if pair:
        others = partners(first)
        chosen.append(others[rng.integers(len(others))])
    n = round(seconds * SAMPLE_RATE)
    pieces = []
    at = int(rng.integers(round(0.3 * n), round(0.5 * n)))
    onsets = []
    for number, voice in enumerate(chosen):
        if number:
            at += round(rng.uniform(0.08, 0.2) * SAMPLE_RATE)
        gain = 1.0 if not number else 10 ** (rng.uniform(*LEVELS_DB) / 20)
        start = at - voice.onset
        piece = voice.samples[max(0, -start) : n - start] * gain
        pieces.append(np.zeros(n))
        pieces[-1][max(0, start) : max(0, start) + len(piece)] = piece
        onsets.append(at)
    power = active_power(first.samples)
    scale = np.sqrt(power / 10 ** (snr_db / 10))
    names = " + ".join(f"{v.speaker} {v.word}" for v in chosen)
    gap = f", {(onsets[1] - onsets[0]) * 1000 / SAMPLE_RATE:.0f} ms" if pair else ""
    label = f"{names}{gap}, {snr_db:g} dB, seed {seed}"
    signal = np.sum(pieces, axis=0) + scale * room_noise(n, rng)
    found = [heard(p, signal - p, at) for p, at in zip(pieces, onsets, strict=True)]
    return VoiceClip(signal, onsets, label, found)
