"""`referee listen FILE [--json]`: the voice onsets in a WAV file, and one line for a file
it cannot read."""

import json
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
    assert "1 voice onset" in lines[0]
    assert abs(float(lines[1].split()[0]) - 0.25) < 0.002


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
