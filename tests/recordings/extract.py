"""Makes this folder's recordings from Debian's klettres-data package (KDE's KLettres,
GPL-2+: README.md here says whose and what): how they were cut, so that they can be cut
again. Not run by the tests, which read the files it wrote.

    apt-get download klettres-data && dpkg-deb -x klettres-data_*.deb /tmp/klettres
    python -m tests.recordings.extract /tmp/klettres/usr/share/klettres

needs sox (Vorbis to 16 kHz). Each word is cut to 0.65 s from 0.2 s before its true onset
(tests/voices.py's), or from the recording's start where it had less; the
babble is the other languages' speakers saying their syllables over one another.
"""

import subprocess
import sys
import wave
from pathlib import Path

import numpy as np

from tests import voices

RATE = 16_000
BEFORE_S = 0.2
WINDOW_S = 0.65
HERE = Path(__file__).resolve().parent

# speaker: its language's folder and the syllables or words kept, /s/-initial first;
# each with 0.1 s or more before it. The French ones are named ad-N (fr/sounds.xml).
WORDS = {
    "en": (
        "en",
        {"saw": "saw", "say": "say", "sit": "sit", "dog": "dog", "key": "key", "pet": "pet"},
    ),
    "fr": ("fr", {"sa": "ad-24", "su": "ad-27", "da": "ad-6", "ma": "ad-11", "pa": "ad-21"}),
    "ru": ("ru", {"sy": "sy", "russ": "russ", "ko": "ko", "pa": "pa", "ro": "ro"}),
    "es": ("es", {"ba": "ba", "be": "be", "bi": "bi", "ca": "ca", "ha": "ha"}),
    "it": ("it", {"sa": "sa", "so": "so", "gi": "gi", "go": "go", "ta": "ta"}),
    "pt-BR": ("pt_BR", {"sa": "sa", "se": "se", "so": "so", "ba": "ba", "da": "da", "ma": "ma"}),
    "uk": ("uk", {"so": "so", "sya": "sya", "syt": "syt", "ba": "ba", "do": "do", "bo": "bo"}),
    "en-GB": (
        "en_GB",
        {"sit": "sit", "ball": "ball", "car": "car", "dog": "dog", "jet": "jet", "pet": "pet"},
    ),
}
BABBLE = ("de", "nl", "da", "hu", "lt", "nds", "tn", "cs")  # speakers in no clip's voice
BABBLES = {"babble-8": 8, "babble-16": 16}  # name: how many talk at once (two each past 8)
BABBLE_S = 4.0


def decoded(path: Path) -> np.ndarray:
    raw = subprocess.run(
        [
            "sox",
            str(path),
            "-t",
            "raw",
            "-e",
            "floating-point",
            "-b",
            "32",
            "-c",
            "1",
            "-r",
            str(RATE),
            "-",
        ],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(raw, dtype="<f4").astype(float)


def write(path: Path, x: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(RATE)
        file.writeframes(np.round(np.clip(x, -1, 32767 / 32768) * 32768).astype("<i2").tobytes())


def cut(x: np.ndarray) -> np.ndarray:
    """x from BEFORE_S before its true onset, or from its start where it was cut closer
    (tests/voices.py needs 70 ms: every word kept has 0.1 s), WINDOW_S long."""
    start = voices.onset(voices.resampled(x, RATE)) * RATE // voices.SAMPLE_RATE
    n = round(WINDOW_S * RATE)
    return np.concatenate((x[max(0, start - round(BEFORE_S * RATE)) :], np.zeros(n)))[:n]


def babble(root: Path, talkers: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = round(BABBLE_S * RATE)
    mix = np.zeros(n)
    for language in np.resize(rng.permutation(BABBLE), talkers):
        sounds = sorted((root / language).glob("*/*.ogg"))
        at = int(rng.integers(0, RATE // 2))
        while at < n:
            x = decoded(sounds[rng.integers(len(sounds))])
            x = x / (np.sqrt(np.mean(x**2)) + 1e-12) * 10 ** (rng.uniform(-3, 3) / 20)
            piece = x[: n - at]
            mix[at : at + len(piece)] += piece
            at += len(x) // 2 + int(rng.integers(0, RATE // 4))
    return 0.1 * mix / np.sqrt(np.mean(mix**2))


def main(root: Path) -> None:
    for speaker, (language, words) in WORDS.items():
        for word, name in words.items():
            write(
                HERE / "words" / f"{speaker}_{word}.wav",
                cut(decoded(root / language / "syllab" / f"{name}.ogg")),
            )
    for seed, (name, talkers) in enumerate(BABBLES.items()):
        write(HERE / "noise" / f"{name}.wav", babble(root, talkers, seed))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
