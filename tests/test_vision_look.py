"""`referee look` on files that are not photos it can read: exit status 2 and one line
naming the file and what is wrong, never a traceback, and never a memory spent on a
header's promise."""

import json
import os
import struct
import subprocess
import sys
import zlib

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from referee.cli import main
from referee.photo_header import PNG_SIGNATURE
from referee.vision import decode
from referee.vision.card import all_faces
from tools.vision.render import Table, render_table

from .conftest import also_suppressed


def _table() -> Table:
    """A table of 12 cards, rendered as a camera would see it, 960 x 720: the real photos
    are not in the repository (tests/test_vision_photos.py)."""
    rng = np.random.default_rng(7)
    faces = [all_faces()[i] for i in rng.choice(81, 12, replace=False)]
    return render_table(faces, rng, size=(960, 720))


def _jpeg(image: np.ndarray) -> bytes:
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()


TABLE = _table()
JPEG = _jpeg(TABLE.image)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _refused(path, capsys) -> str:
    assert main(["look", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert str(path) in lines[0]
    return lines[0]


def test_a_missing_file(tmp_path, capsys):
    assert "No such file" in _refused(tmp_path / "gone.jpg", capsys)


def test_a_folder(tmp_path, capsys):
    assert "folder" in _refused(tmp_path, capsys)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "camera.jpg"
    os.mkfifo(fifo)
    assert "not a regular file" in _refused(fifo, capsys)


def test_an_empty_file(tmp_path, capsys):
    (tmp_path / "empty.jpg").write_bytes(b"")
    assert "empty" in _refused(tmp_path / "empty.jpg", capsys)


def test_text_is_not_an_image(tmp_path, capsys):
    (tmp_path / "notes.jpg").write_text("three red ovals\n")
    assert "not a JPEG or PNG" in _refused(tmp_path / "notes.jpg", capsys)


def test_a_jpeg_whose_header_claims_a_billion_pixels_is_refused_before_decoding(tmp_path, capsys):
    # The frame header of the real JPEG, rewritten to 60000 x 60000: libjpeg would try.
    at = JPEG.index(b"\xff\xc0")
    huge = JPEG[: at + 5] + struct.pack(">HH", 60000, 60000) + JPEG[at + 9 :]
    (tmp_path / "huge.jpg").write_bytes(huge)
    assert "60000x60000" in _refused(tmp_path / "huge.jpg", capsys)


def test_a_large_png_is_refused_from_its_header(tmp_path, capsys):
    header = struct.pack(">IIBBBBB", 8000, 6000, 8, 2, 0, 0, 0)
    body = zlib.compress(b"\0" * 100)
    png = PNG_SIGNATURE + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", body)
    (tmp_path / "big.png").write_bytes(png + _png_chunk(b"IEND", b""))
    assert "too large" in _refused(tmp_path / "big.png", capsys)


def test_a_file_larger_than_any_photo(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(decode, "MAX_FILE_BYTES", len(JPEG) - 1)
    (tmp_path / "big.jpg").write_bytes(JPEG)
    assert "too large" in _refused(tmp_path / "big.jpg", capsys)


def test_the_whole_jpeg_is_read(tmp_path):
    (tmp_path / "table.jpg").write_bytes(JPEG)
    assert decode.read_photo(tmp_path / "table.jpg").image.shape == (720, 960, 3)


def test_a_huge_jpeg_is_decoded_already_shrunk():
    picture = np.full((4000, 6000, 3), 200, np.uint8)
    _, data = cv2.imencode(".jpg", picture)
    photo = decode.decode_photo(data.tobytes(), "phone")
    assert decode.REDUCED_PX <= max(photo.image.shape[:2]) <= decode.DECODE_PX
    assert (photo.width, photo.height) == (6000, 4000)


def _exif_turned(jpeg: bytes, orientation: int) -> bytes:
    """The JPEG with an EXIF segment saying how to turn it to show it (a phone's photo
    stored as its sensor took it): Orientation, tag 0x0112, alone in the first IFD."""
    ifd = struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0)
    tiff = b"MM\x00\x2a" + struct.pack(">I", 8) + ifd + struct.pack(">I", 0)
    body = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + jpeg[2:]


# How a camera stores a photo that EXIF's Orientation (1 to 8) says to show upright: the
# upright picture turned back (transposed for 5, turned and transposed for 7).
STORED = {
    1: lambda image: image,
    2: lambda image: cv2.flip(image, 1),
    3: lambda image: cv2.rotate(image, cv2.ROTATE_180),
    4: lambda image: cv2.flip(image, 0),
    5: lambda image: cv2.transpose(image),
    6: lambda image: cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE),
    7: lambda image: cv2.rotate(cv2.transpose(image), cv2.ROTATE_180),
    8: lambda image: cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE),
}


@settings(
    max_examples=8, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)
@example(orientation=6, width=3840)
@example(orientation=1, width=3840)
@given(st.sampled_from(sorted(STORED)), st.integers(960, 4800))
def test_look_says_where_the_cards_lie_in_the_photos_own_pixels(
    tmp_path, capsys, orientation, width
):
    """A phone's photo is read shrunk (12 megapixels to a quarter); its cards' boxes are in
    its own pixels, as it is shown: many are stored on their side, or mirrored, with an
    EXIF tag that turns them."""
    height = width * 3 // 4
    upright = cv2.resize(TABLE.image, (width, height), interpolation=cv2.INTER_CUBIC)
    data = _exif_turned(_jpeg(STORED[orientation](upright)), orientation)
    (tmp_path / "phone.jpg").write_bytes(data)
    assert main(["look", "--json", str(tmp_path / "phone.jpg")]) == 0
    cards = json.loads(capsys.readouterr().out)["cards"]
    truth = np.array([p.corners.mean(axis=0) * width / 960 for p in TABLE.cards])
    seen = np.array([[x + w / 2, y + h / 2] for x, y, w, h in (c["box"] for c in cards)])
    # Each card read where a card lies, within 1 % of the photo's width (the finder's own
    # misses are test_vision_tables.py's: two cards nearly touching are lost now and then).
    nearest = np.linalg.norm(seen[:, None] - truth[None], axis=2).min(axis=1)
    assert len(seen) >= 10 and nearest.max() < width * 0.01, (len(seen), nearest.max())
    assert all(
        x >= 0 and y >= 0 and x + w <= width and y + h <= height
        for x, y, w, h in (c["box"] for c in cards)
    )


@settings(
    max_examples=25, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)
@given(st.integers(0, len(JPEG) - 1))
def test_a_jpeg_cut_anywhere_is_refused(tmp_path, capsys, cut):
    path = tmp_path / "cut.jpg"
    path.write_bytes(JPEG[:cut])
    _refused(path, capsys)


@settings(
    max_examples=25, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)
@given(st.binary(max_size=2000), st.sampled_from([b"", b"\xff\xd8", PNG_SIGNATURE]))
def test_random_bytes_are_refused(tmp_path, capsys, noise, start):
    path = tmp_path / "noise.jpg"
    path.write_bytes(start + noise)
    _refused(path, capsys)


@pytest.mark.parametrize("at", [1000, 10000, 30000])
def test_a_jpeg_with_a_damaged_byte_is_read_or_refused_in_one_line(tmp_path, capsys, at):
    damaged = bytearray(JPEG)
    damaged[at] ^= 0xFF
    path = tmp_path / "damaged.jpg"
    path.write_bytes(bytes(damaged))
    code = main(["look", "--json", str(path)])
    captured = capsys.readouterr()
    assert code in (0, 2)
    assert len((captured.out + captured.err).splitlines()) == 1


def test_a_reader_that_stops_reading_ends_it_quietly(tmp_path):
    """`referee look *.jpg | head -1`: once the pipe's reader is gone, no traceback."""
    photos = []
    for i in range(30):
        photos.append(str(tmp_path / f"{i}.jpg"))
        (tmp_path / f"{i}.jpg").write_bytes(JPEG)
    look = subprocess.Popen(
        [sys.executable, "-m", "referee", "look", *photos],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert look.stdout is not None and look.stderr is not None
    assert look.stdout.readline().startswith(photos[0].encode())
    look.stdout.close()  # as head does after its line
    err = look.stderr.read().decode()
    assert look.wait(timeout=120) == 0
    assert err == ""


def test_a_jpeg_whose_data_is_damaged_is_refused_in_one_line(tmp_path, capfd):
    """Whole to its last marker, but its coded data damaged: libjpeg decodes what it can
    and complains on the process's stderr, past Python; the complaint becomes the line."""
    damaged = bytearray(JPEG)
    at = JPEG.index(b"\xff\xda") + 2000  # inside the scan's coded data
    damaged[at : at + 4] = b"\xff\xd0\xff\xd1"  # restart markers where none belong
    path = tmp_path / "damaged.jpg"
    path.write_bytes(bytes(damaged))
    assert main(["look", str(path)]) == 2
    out, err = capfd.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert str(path) in err and "damaged" in err
