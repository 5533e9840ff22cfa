"""A WAV file's sound as one mono float signal, read by wavfile.py (which trusts no header).

samples, rate = read_mono(path)             # the whole file
for piece in mono_pieces(wav):              # or a piece at a time, in bounded memory
"""

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .wavfile import WavFile

# Bytes of the file read and decoded at a time: 1 MB, 8 MB of floats at most (8-bit).
PIECE_BYTES = 1 << 20


def read_mono(path: Path, *, max_bytes: int | None = None) -> tuple[np.ndarray, int]:
    """(samples at full scale +-1, the channels' mean; the sample rate). PCM of 8, 16, 24
    or 32 bits, any number of channels. AudioFileError names the file and what is wrong."""
    with WavFile(path, max_bytes=max_bytes) as wav:
        mono = np.empty(wav.format.frames)
        at = 0
        for piece in mono_pieces(wav):
            mono[at : at + len(piece)] = piece
            at += len(piece)
        return mono, wav.format.rate


def mono_pieces(wav: WavFile) -> Iterator[np.ndarray]:
    """The file's samples, PIECE_BYTES of the file at a time: each piece at full scale
    +-1, the channels' mean (float64), so that a file of any length is read in the memory
    of one piece."""
    fmt = wav.format
    frames = max(1, PIECE_BYTES // fmt.block)
    for first in range(0, fmt.frames, frames):
        data = np.frombuffer(wav.read(first, frames), dtype=np.uint8)
        samples = _decoded(data, fmt.width).reshape(-1, fmt.channels)
        yield samples[:, 0] if fmt.channels == 1 else samples.mean(axis=1)


def _decoded(data: np.ndarray, width: int) -> np.ndarray:
    """Little-endian PCM bytes as floats at full scale +-1 (8-bit WAV is unsigned)."""
    if width == 1:
        return (data.astype(np.float64) - 128) / 128
    if width == 3:
        # Each 3-byte sample into the top of an int32: its sign comes with it.
        padded = np.zeros((len(data) // 3, 4), dtype=np.uint8)
        padded[:, 1:] = data.reshape(-1, 3)
        return padded.view("<i4").ravel().astype(np.float64) / 2.0**31
    kind = {2: "<i2", 4: "<i4"}[width]
    scaled: np.ndarray = data.view(kind).astype(np.float64) / 2.0 ** (8 * width - 1)
    return scaled
