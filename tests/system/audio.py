"""The guest's sound card, heard: the tones in the wav file QEMU's `wav` audio backend writes.

QEMU writes the HDA card's output as it plays it, a chunk every audio timer tick, so the
file's growth, watched from the host (`WavClock`), says when each sample was played, on
the host's clock. Once the referee has opened the sound card it keeps the stream running
(silence between sounds), so the file is one unbroken timeline. A QEMU that was killed
never fixed its header's sizes: the samples are read from byte 44 to the end.
"""

import math
import struct
import threading
import time
from array import array
from dataclasses import dataclass
from pathlib import Path

HEADER = 44
WINDOW_S = 0.002


@dataclass(frozen=True)
class Tone:
    start_s: float  # seconds into the file
    length_s: float
    hz: float  # the strongest of the candidate notes


def read_samples(path: Path) -> tuple[int, array]:
    """The rate and the left channel of a 16-bit PCM wav file QEMU wrote."""
    data = path.read_bytes()
    channels, rate = struct.unpack_from("<HI", data, 22)
    bits = struct.unpack_from("<H", data, 34)[0]
    if bits != 16:
        raise ValueError(f"{path}: {bits}-bit samples, expected 16")
    body = data[HEADER:]
    samples = array("h")
    samples.frombytes(body[: len(body) - len(body) % 2])
    return rate, samples[::channels]


def goertzel(chunk: array, rate: int, hz: float) -> float:
    coefficient = 2 * math.cos(2 * math.pi * hz / rate)
    s1 = s2 = 0.0
    for x in chunk:
        s1, s2 = x + coefficient * s1 - s2, s1
    return s1 * s1 + s2 * s2 - coefficient * s1 * s2


def tones(path: Path, candidates: list[float], threshold: int = 300) -> list[Tone]:
    """Every stretch of sound in the file (a gap of 20 ms or more ends one), with its note."""
    rate, samples = read_samples(path)
    step = max(1, round(rate * WINDOW_S))
    loud = [
        max(abs(min(samples[i : i + step])), abs(max(samples[i : i + step]))) > threshold
        for i in range(0, len(samples) - step, step)
    ]
    found: list[Tone] = []
    start = None
    quiet = 0
    for n, is_loud in enumerate(loud + [False] * 11):
        if is_loud:
            if start is None:
                start = n
            quiet = 0
        elif start is not None:
            quiet += 1
            if quiet >= 10:
                end = n - quiet + 1
                first = start * step
                chunk = samples[first : first + min((end - start) * step, round(rate * 0.03))]
                hz = max(candidates, key=lambda f: goertzel(chunk, rate, f))
                found.append(Tone(start * WINDOW_S, (end - start) * WINDOW_S, hz))
                start = None
    return found


class WavClock:
    """Watches a wav file grow, to tell on the host's clock when a sample was played."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.marks: list[tuple[int, int]] = []  # (bytes in the file, host time_ns)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="wav-clock", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        last = -1
        while not self.stop.is_set():
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                size = -1
            if size != last:
                self.marks.append((size, time.time_ns()))
                last = size
            time.sleep(0.001)

    def host_time_ns(self, seconds_into_file: float, rate: int, frame_bytes: int = 4) -> int:
        """When the sample that far into the file was written (played), on the host."""
        offset = HEADER + round(seconds_into_file * rate) * frame_bytes
        for size, at in self.marks:
            if size > offset:
                return at
        raise ValueError(f"no mark past {seconds_into_file:.3f} s of {self.path}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
