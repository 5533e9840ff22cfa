"""The one reader of WAV files (referee/audio/wavfile.py): its header checked against the
file's size, regular files only, never an exception but its own AudioFileError."""

import io
import os
import struct
import threading
import wave

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.audio.wavfile import MAX_RATE, MIN_RATE, WavFile
from referee.errors import AudioFileError

from .conftest import also_suppressed

RATE = 48_000
SETTINGS = settings(
    max_examples=300, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)


def box_wav(frames: int = 4800, rate: int = RATE) -> bytes:
    """A clip's WAV as the box writes it (mono, 16 bits, `wave`'s 44-byte header)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(bytes(range(256)) * (2 * frames // 256) + b"\0" * (2 * frames % 256))
    return out.getvalue()


def read(path, **limits):
    """What the reader makes of the file: its format and all its frames, or its error."""
    try:
        with WavFile(path, **limits) as wav:
            return wav.format, wav.read(0, wav.format.frames)
    except AudioFileError as err:
        return err


def test_the_boxs_wav_is_read_as_wave_wrote_it(tmp_path):
    path = tmp_path / "clip.wav"
    path.write_bytes(data := box_wav())
    fmt, frames = read(path)
    assert (fmt.channels, fmt.width, fmt.rate, fmt.frames, fmt.data_at) == (1, 2, RATE, 4800, 44)
    assert frames == data[44:]


def test_a_flipped_bit_of_the_fmt_chunks_size_is_an_audio_file_error(tmp_path):
    """14 of its 32 bits made `wave` raise RuntimeError, which crashed the box at REPLAY."""
    data = box_wav()
    path = tmp_path / "clip.wav"
    for bit in range(32):
        flipped = bytearray(data)
        flipped[16 + bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(flipped))
        assert isinstance(read(path), AudioFileError), bit


@SETTINGS
@given(
    at=st.integers(0, 200),
    bit=st.integers(0, 7),
    cut=st.one_of(st.none(), st.integers(0, 9644)),
    junk=st.binary(max_size=64),
)
def test_any_flip_cut_or_junk_is_a_format_that_fits_or_an_audio_file_error(
    tmp_path, at, bit, cut, junk
):
    """Every bit of the header and past it, the file cut anywhere, junk appended."""
    data = bytearray(box_wav())
    data[at] ^= 1 << bit
    path = tmp_path / "clip.wav"
    path.write_bytes(bytes(data[:cut]) + junk)
    got = read(path)
    if not isinstance(got, AudioFileError):
        fmt, frames = got
        assert fmt.data_at + fmt.frames * fmt.block <= path.stat().st_size
        assert len(frames) == fmt.frames * fmt.block
        assert MIN_RATE <= fmt.rate <= MAX_RATE


@SETTINGS
@given(st.binary(max_size=2000))
def test_any_bytes_after_a_riff_header_are_a_format_or_an_audio_file_error(tmp_path, body):
    path = tmp_path / "junk.wav"
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body) + 4) + b"WAVE" + body)
    got = read(path)
    assert isinstance(got, AudioFileError) or len(got[1]) == got[0].frames * got[0].block


@pytest.mark.parametrize(
    ("claims", "says"),
    [
        (2**32 - 1, "claims 4294967295 bytes"),
        (10**6, "past the file's end"),
    ],
)
def test_a_data_chunk_that_claims_more_than_the_file_holds_is_refused(tmp_path, claims, says):
    data = bytearray(box_wav()[:1024])
    data[40:44] = struct.pack("<I", claims)
    path = tmp_path / "liar.wav"
    path.write_bytes(bytes(data))
    assert says in str(read(path))


def test_a_larger_file_than_allowed_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.wav"
    with path.open("wb") as f:
        f.truncate(2**40)  # a terabyte of holes: nothing of it is read
    assert str(read(path, max_bytes=10**6)) == f"{path}: {2**40} bytes, more than 1000000"


def test_what_is_not_a_regular_file_is_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo.wav"
    os.mkfifo(fifo)
    got: list[object] = []
    reading = threading.Thread(target=lambda: got.append(read(fifo)))
    reading.start()
    reading.join(10)
    if reading.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reading.join()
        pytest.fail("the reader waited on a FIFO")
    assert str(got[0]) == f"{fifo}: not a regular file (a FIFO)"
    assert str(read(tmp_path)) == f"{tmp_path}: a folder, not a WAV file"
    assert str(read(tmp_path / "none.wav")) == f"{tmp_path / 'none.wav'}: no such file"


def test_a_link_is_refused_where_links_are_not_followed(tmp_path):
    real = tmp_path / "real.wav"
    real.write_bytes(box_wav())
    link = tmp_path / "link.wav"
    link.symlink_to(real)
    assert not isinstance(read(link), AudioFileError)
    assert str(read(link, follow_links=False)) == f"{link}: a link, not a file the box wrote"
