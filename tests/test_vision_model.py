"""The card classifier's file from a worn SD card: a flipped bit in a weight still loads and
would read cards wrong and surely, so the model is loaded only with the SHA-256 it was made
with (classify.checked_model). Damaged, it is one line naming the file: `referee look`
exits with it, and the camera's process reads no card, says so once and goes on keeping
the frames for the calls' snapshots."""

import io
import json
import logging
import re
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.camera.sources import Frame, SourceLost
from referee.camera.watch import Watch
from referee.cli import main
from referee.errors import ModelDamaged
from referee.vision import classify

from .camera_frames import set_table, show

MODEL = classify.MODEL.read_bytes()
DIGEST = classify.digest_path(classify.MODEL).read_bytes()


def _model(folder, data: bytes, digest: bytes | None = DIGEST):
    path = folder / "cards.onnx"
    path.write_bytes(data)
    if digest is not None:
        classify.digest_path(path).write_bytes(digest)
    return path


@pytest.fixture
def damaged(tmp_path, monkeypatch):
    """The box's model with one bit flipped in its middle (a weight), its digest as made."""
    data = bytearray(MODEL)
    data[len(data) // 2] ^= 0x10
    path = _model(tmp_path, bytes(data))
    monkeypatch.setattr(classify, "MODEL", path)
    classify._network.cache_clear()  # loaded from the damaged file, not the cached one
    yield path
    classify._network.cache_clear()


def test_the_model_shipped_is_the_one_its_digest_names():
    assert classify.checked_model(classify.MODEL) == MODEL
    name = DIGEST.decode("ascii").split()[1]
    assert name == classify.MODEL.name  # `sha256sum -c` checks it beside the model


@settings(max_examples=40, deadline=None)
@given(st.integers(0, len(MODEL) * 8 - 1))
def test_any_flipped_bit_is_refused_in_one_line_naming_the_file(tmp_path_factory, bit):
    data = bytearray(MODEL)
    data[bit // 8] ^= 1 << bit % 8
    path = _model(tmp_path_factory.mktemp("model"), bytes(data))
    with pytest.raises(ModelDamaged) as refused:
        classify.checked_model(path)
    said = str(refused.value)
    assert said.startswith(f"{path}: damaged") and "\n" not in said


@pytest.mark.parametrize(
    ("data", "digest", "said"),
    [
        (MODEL, None, "cannot be read whole"),  # its digest lost
        (MODEL, b"", "damaged"),
        (MODEL, b"\xff\xfe not ascii", "cannot be read whole"),
        (MODEL, DIGEST[:-20], "damaged"),
        (MODEL[:-1], DIGEST, "damaged"),  # cut short
        (b"", DIGEST, "damaged"),
    ],
)
def test_a_model_or_digest_missing_cut_or_garbled_is_refused(tmp_path, data, digest, said):
    path = _model(tmp_path, data, digest)
    with pytest.raises(ModelDamaged, match=f"^{re.escape(str(path))}: {said}") as refused:
        classify.checked_model(path)
    assert "\n" not in str(refused.value)


def test_a_missing_model_is_refused_in_one_line(tmp_path):
    with pytest.raises(ModelDamaged, match=r"cannot be read whole \(.*No such file"):
        classify.checked_model(tmp_path / "cards.onnx")


def test_look_with_a_damaged_model_exits_with_one_line(damaged, tmp_path, capsys):
    photo = tmp_path / "table.jpg"
    photo.write_bytes(set_table())
    assert main(["look", str(photo)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{damaged}: damaged (its SHA-256 is not the one in cards.onnx.sha256): reinstall referee"
    ]


class _Kept:
    """The snapshots' side of the camera's process: the frames it was given."""

    def __init__(self) -> None:
        self.frames: list[int] = []

    def frame(self, t_ns: int, image: np.ndarray) -> None:
        self.frames.append(t_ns)

    def lost(self) -> None:
        pass


def test_the_camera_with_a_damaged_model_reads_no_card_says_so_once_and_keeps_frames(
    damaged, tmp_path, caplog
):
    folder = tmp_path / "frames"
    folder.mkdir()
    show(folder, "table.jpg", set_table())
    out, kept = io.BytesIO(), _Kept()
    watch = Watch(str(folder), out, clock=lambda: 0, snapshots=kept)  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, "referee.camera.watch"):
        steps = [watch.step()]
        for n in range(3):  # new frames come, the process goes on
            show(folder, f"table{n}.jpg", set_table(), mtime_ns=time.time_ns() + n)
            steps.append(watch.step())
    assert steps == [0.5] * 4
    said = [json.loads(line) for line in out.getvalue().splitlines()]
    assert said == [  # and no reading: short enough for a 3.5" screen to show whole
        {"status": f"camera {folder} watching", "ok": True},
        {
            "status": "the camera's card model is damaged: no card read; reinstall referee",
            "ok": False,
        },
    ]
    # The file is named in the log, once, for whoever mends it.
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert logged == [
        f"camera {folder}: {damaged}: damaged (its SHA-256 is not the one in"
        " cards.onnx.sha256): reinstall referee"
    ]
    assert len(kept.frames) == 4  # the calls' snapshots still show the table


def test_a_camera_back_with_a_damaged_model_is_not_said_to_watch(damaged):
    """Unplugged and plugged in again, the camera still reads no card: the daemon is not
    told that it watches."""
    reads = iter([True, False, True])  # a frame, unplugged, a frame

    class Camera:
        name = "cam"

        def read(self) -> Frame:
            if not next(reads):
                raise SourceLost("unplugged")
            return Frame(np.zeros((60, 80, 3), np.uint8), 0)

        def close(self) -> None:
            pass

    out = io.BytesIO()
    watch = Watch("cam", out, clock=lambda: 0, opener=lambda spec: Camera())
    for _ in range(3):  # read, lost, opened again and read
        watch.step()
    said = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [s["ok"] for s in said] == [True, False], said  # watching, then no card: once
