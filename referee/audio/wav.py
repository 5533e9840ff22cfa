"""A WAV file's sound as one mono float signal, with the standard library's `wave`."""

import struct
import wave
from pathlib import Path

import numpy as np

from referee.errors import AudioFileError

_WIDTHS = {1: "8", 2: "16", 3: "24", 4: "32"}
_EXTENSIBLE = 0xFFFE
_PCM = 1


def read_mono(path: Path) -> tuple[np.ndarray, int]:
    """(samples at full scale +-1, the channels' mean; the sample rate). PCM of 8, 16, 24
    or 32 bits, any number of channels. AudioFileError names the file and what is wrong."""
    try:
        try:
            with wave.open(str(path), "rb") as wav:
                width = wav.getsampwidth()
                channels = wav.getnchannels()
                rate = wav.getframerate()
                raw = wav.readframes(wav.getnframes())
        except wave.Error as err:
            if str(err) != f"unknown format: {_EXTENSIBLE}":
                raise
            width, channels, rate, raw = _extensible(path)
    except FileNotFoundError:
        raise AudioFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AudioFileError(f"{path}: a folder, not a WAV file") from None
    except OSError as err:
        raise AudioFileError(f"{path}: cannot read it ({err.strerror or err})") from None
    except (wave.Error, EOFError) as err:
        # wave names the format it cannot read: "unknown format: 3" is floating point.
        raise AudioFileError(f"{path}: not a PCM WAV file that can be read ({err})") from None
    if width not in _WIDTHS or channels < 1 or rate <= 0:
        raise AudioFileError(f"{path}: {width * 8}-bit samples; 8, 16, 24 or 32-bit PCM only")
    frames = len(raw) // (width * channels)
    data = np.frombuffer(raw[: frames * width * channels], dtype=np.uint8)
    samples = _decoded(data, width).reshape(frames, channels)
    mono: np.ndarray = samples.mean(axis=1)
    return mono, rate


def _extensible(path: Path) -> tuple[int, int, int, bytes]:
    """(width, channels, rate, data) of a WAVE_FORMAT_EXTENSIBLE file of PCM samples, as
    sox writes 24 and 32 bits and more than two channels: Python 3.11's wave refuses it."""
    with path.open("rb") as file:
        riff = file.read(12)
        fmt: tuple[int, ...] = ()
        while header := file.read(8):
            if len(header) < 8:
                break
            name, size = struct.unpack("<4sI", header)
            body = file.read(size + size % 2)
            if name == b"fmt " and size >= 26:
                fmt = struct.unpack("<HHIIHHHHIH", body[:26])
            elif name == b"data" and fmt and riff[8:12] == b"WAVE":
                if fmt[9] != _PCM:
                    raise wave.Error(f"sub-format {fmt[9]} is not PCM")
                return fmt[5] // 8, fmt[1], fmt[2], body[:size]
    raise wave.Error("no PCM format and data chunk")


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
