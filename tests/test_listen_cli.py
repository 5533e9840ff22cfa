"""`referee listen FILE [--json]`: the voice onsets in a WAV file, and one line for a file
it cannot read."""

import json
import os
import struct
import threading
import tracemalloc
import wave

import numpy as np
import pytest

from referee.cli import main

RATE = 48_000


def write_wav(path, samples: np.ndarray, width: int = 2, channels: int = 1, rate: int = RATE):
    full = np.clip(samples, -1, 1)
    scaled = np.round(np.repeat(full[:, None], channels, axis=1) * (2 ** (8 * width - 1) - 1))
    if width == 1:
        data = (scaled + 128).astype(np.uint8).tobytes()
    elif width == 3:
        data = b"".join(int(v).to_bytes(3, "little", signed=True) for v in scaled.ravel())
    else:
        data = scaled.astype(f"<i{width}").tobytes()
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(width)
        wav.setframerate(rate)
        wav.writeframes(data)


def hiss_at(start_s: float, seconds: float = 1.0) -> np.ndarray:
    """Quiet noise with a loud hiss (a /s/ without the rest) from start_s on, for 100 ms."""
    rng = np.random.default_rng(5)
    signal = 0.01 * rng.standard_normal(round(seconds * RATE))
    at = round(start_s * RATE)
    signal[at : at + RATE // 10] += 0.3 * rng.standard_normal(RATE // 10)
    return signal


@pytest.mark.parametrize(("width", "channels"), [(1, 1), (2, 1), (2, 2), (3, 1), (4, 2)])
def test_json_gives_the_rate_and_the_onsets_sorted(tmp_path, capsys, width, channels):
    path = tmp_path / "table.wav"
    write_wav(path, hiss_at(0.4), width, channels)
    assert main(["listen", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["sample_rate"] == RATE
    times = [onset["t"] for onset in printed["onsets"]]
    assert times == sorted(times)
    assert times and abs(times[0] - 0.4) < 0.002


def test_without_json_one_line_an_onset(tmp_path, capsys):
    path = tmp_path / "table.wav"
    write_wav(path, hiss_at(0.25))
    assert main(["listen", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{path}: 1.000 s at {RATE} Hz"
    assert abs(float(lines[1].split()[0]) - 0.25) < 0.002
    assert lines[2:] == ["1 voice onset(s)"]  # counted once all are printed


def test_silence_has_no_onsets(tmp_path, capsys):
    path = tmp_path / "quiet.wav"
    write_wav(path, np.zeros(RATE))
    assert main(["listen", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"sample_rate": RATE, "onsets": []}


def _text(path):
    path.write_text("not a recording\n")


def _cut_short(path):
    write_wav(path, hiss_at(0.1))
    path.write_bytes(path.read_bytes()[:30])


def _float_wav(path):
    # sox and many recorders write 32-bit floats: format 3, not PCM.
    write_wav(path, hiss_at(0.1))
    data = bytearray(path.read_bytes())
    data[20:22] = (3).to_bytes(2, "little")
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (None, "no such file"),
        (_text, "not a PCM WAV file"),
        (_cut_short, "not a PCM WAV file"),
        (_float_wav, "not a PCM WAV file"),
        ("folder", "a folder"),
    ],
)
def test_a_file_it_cannot_read_is_one_line_naming_it(tmp_path, capsys, make, says):
    path = tmp_path / "take.wav"
    if make == "folder":
        path.mkdir()
    elif make is not None:
        make(path)
    assert main(["listen", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"{path}: ") and says in captured.err


def _chunk_past_the_end(path):
    """A LIST chunk before the data that claims more than the file holds."""
    write_wav(path, hiss_at(0.1))
    data = path.read_bytes()
    path.write_bytes(data[:36] + b"LIST" + struct.pack("<I", 10**6) + b"INFOjunk" + data[36:])


def _claims_4_gb(path):
    """1 kB that says its data is 4 GB: read as such, it was a traceback (issue 29)."""
    write_wav(path, hiss_at(0.1))
    data = bytearray(path.read_bytes()[:1024])
    data[40:44] = struct.pack("<I", 2**32 - 1)
    path.write_bytes(bytes(data))


def _fmt_size_flipped(path):
    """One flipped bit of the fmt chunk's size: `wave` raised RuntimeError."""
    write_wav(path, hiss_at(0.1))
    data = bytearray(path.read_bytes())
    data[18] ^= 0x08
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_chunk_past_the_end, "past the file's end"),
        (_claims_4_gb, "claims 4294967295 bytes"),
        (_fmt_size_flipped, "not a PCM WAV file"),
    ],
)
def test_a_header_that_lies_about_its_sizes_is_one_line(tmp_path, capsys, make, says):
    path = tmp_path / "take.wav"
    make(path)
    assert main(["listen", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"{path}: ") and says in captured.err


@pytest.mark.parametrize("rate", [1, 2, 8, 62, 999, 768_001, 2**32 - 1])
def test_a_rate_no_card_records_at_is_one_line(tmp_path, capsys, rate):
    """1 to 62 Hz: the detector's frame was no sample, a traceback (issue 29)."""
    path = tmp_path / "slow.wav"
    write_wav(path, hiss_at(0.1))
    data = bytearray(path.read_bytes())
    data[24:28] = struct.pack("<I", rate)
    path.write_bytes(bytes(data))
    assert main(["listen", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"a rate of {rate} Hz" in captured.err


def test_a_fifo_is_one_line_at_once(tmp_path, capsys):
    """Opened to read, a FIFO waited for a writer for ever: `referee listen` hung."""
    fifo = tmp_path / "take.wav"
    os.mkfifo(fifo)
    told: list[int] = []
    listening = threading.Thread(target=lambda: told.append(main(["listen", str(fifo)])))
    listening.start()
    listening.join(10)
    if listening.is_alive():  # let it go: something opens the FIFO to write, and closes it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        listening.join()
        pytest.fail("referee listen waited on a FIFO")
    assert told == [2]
    assert capsys.readouterr().err == f"{fifo}: not a regular file (a FIFO)\n"


def test_a_long_recording_is_read_in_pieces_in_the_memory_of_one(tmp_path, capsys, monkeypatch):
    """Read whole, a file took 9 times its size at once (a 2 GB one asked for 8 GB): in
    pieces, a recording four times as long takes no more memory at its highest."""
    # The pieces read and the detector's blocks made 1 and 2 s long (at 48 kHz: 10 s
    # each), so that a few seconds of sound are many of them.
    monkeypatch.setattr("referee.audio.wav.PIECE_BYTES", 16_000, raising=False)
    monkeypatch.setattr("referee.audio.onsets.BLOCK_SAMPLES", 16_000, raising=False)

    def highest(seconds: int) -> int:
        path = tmp_path / f"{seconds}.wav"
        rate = 8000  # the detector's cost is in frames: 48 kHz would be seconds of CPU
        write_wav(
            path, 0.01 * np.random.default_rng(seconds).standard_normal(seconds * rate), rate=rate
        )
        tracemalloc.start()
        try:
            assert main(["listen", str(path), "--json"]) == 0
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            capsys.readouterr()

    short, long = highest(10), highest(40)
    assert long < 1.1 * short, (short, long)
