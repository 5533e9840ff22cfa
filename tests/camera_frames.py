"""A fake camera: a folder of frames (camera/sources.py's FolderSource), and the frames it
shows: rendered tables of twelve known cards (tools/vision/render.py), one with three SETs
and one with none, each drawn where every card is read surely (tests/test_camera_sources.py
checks it). Rendered, not photographed: the real photos are not in the repository."""

import functools
import os
from pathlib import Path

import cv2
import numpy as np

from referee.vision.card import all_faces
from tools.vision.render import render_table, table_top

# Twelve cards with three SETs among them, on wood, 1024 x 768.
SETS_FACES = [58, 1, 4, 38, 79, 31, 22, 76, 46, 57, 34, 47]
# Twelve cards among which there is no SET, on cloth, 960 x 720: three more are due.
NO_SET_FACES = [52, 72, 59, 11, 1, 47, 43, 41, 12, 40, 62, 32]


def _jpeg(
    faces: list[int],
    seed: int,
    size: tuple[int, int],
    top: str,
    *,
    taken: tuple[int, ...] = (),
    smudged: tuple[int, ...] = (),
) -> bytes:
    """The table; `taken` (indices into faces): those cards picked up, the table's top
    where they lay, every other card as it was; `smudged`: those cards half covered by a
    dark blot (a hand's shadow, a coffee cup), which the camera cannot read surely."""
    deck = all_faces()
    rng = np.random.default_rng(seed)
    table = render_table([deck[i] for i in faces], rng, size=size, top=top, light="day")
    image = table.image
    if taken:
        # The same seed draws the same top first (render_table begins with it).
        top_only = table_top(np.random.default_rng(seed), size, top)
        gone = np.zeros(image.shape[:2], np.uint8)
        for i in taken:
            cv2.fillConvexPoly(gone, table.cards[i].corners.astype(np.int32), 255)
        gone = cv2.dilate(gone, np.ones((41, 41), np.uint8)) > 0  # and its shadow
        image[gone] = top_only[gone]
    for i in smudged:
        corners = table.cards[i].corners
        centre = corners.mean(axis=0)
        half = (corners[:2] * 0.5 + centre * 0.5).astype(np.int32)
        cv2.fillConvexPoly(image, np.array([*half, centre.astype(np.int32)]), (40, 30, 20))
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return jpeg.tobytes()


@functools.cache
def set_table() -> bytes:
    return _jpeg(SETS_FACES, 1, (1024, 768), "wood")


@functools.cache
def set_table_taken(taken: tuple[int, ...], smudged: tuple[int, ...] = ()) -> bytes:
    """set_table() with those cards (indices into SETS_FACES) picked up; `smudged` half
    covered before, as set_table_smudged shows them."""
    return _jpeg(SETS_FACES, 1, (1024, 768), "wood", taken=taken, smudged=smudged)


@functools.cache
def set_table_smudged(smudged: tuple[int, ...]) -> bytes:
    return _jpeg(SETS_FACES, 1, (1024, 768), "wood", smudged=smudged)


@functools.cache
def no_set_table() -> bytes:
    return _jpeg(NO_SET_FACES, 0, (960, 720), "cloth")


def show(folder: Path, name: str, data: bytes, *, mtime_ns: int | None = None) -> Path:
    """A frame put in the folder as a camera's writer would: written aside, renamed in,
    and (mtime_ns) stamped so that it is the newest whatever the file system's clock."""
    path = folder / name
    aside = folder / f".{name}.part"
    aside.write_bytes(data)
    if mtime_ns is not None:
        os.utime(aside, ns=(mtime_ns, mtime_ns))
    aside.rename(path)
    return path


# The camera's process starts (Python, OpenCV, the model) slowly on a loaded machine.
WAIT_S = 30.0


def flat(text: str) -> str:
    """A screen's text on one line: a notice may wrap."""
    return " ".join(text.split())


def damaged_inside(data: bytes) -> bytes:
    """A JPEG whose markers are whole (its header checks: photo_header.py) but whose
    entropy-coded data is damaged half way through the scan: what OpenCV cannot read."""
    out = bytearray(data)
    scan = out.find(b"\xff\xda")
    middle = (scan + len(out)) // 2
    for i in range(middle, middle + 2000):
        if out[i] != 0xFF and out[i - 1] != 0xFF:  # no marker made or broken
            out[i] = (out[i] * 7 + 13) & 0x7F
    return bytes(out)
