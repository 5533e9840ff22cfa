"""A fake camera: a folder of frames (camera/sources.py's FolderSource), and the frames it
shows: a real photo of a known layout, and a rendered table of twelve with no SET."""

import functools
import os
from pathlib import Path

import cv2
import numpy as np

from referee.vision.card import all_faces
from tools.vision.render import render_table

from .conftest import ROOT

# tests/photos/README.md: 12 cards, two SETs among them, every card read surely.
BOARD = ROOT / "tests" / "photos" / "test_board.jpg"
# Twelve cards among which there is no SET, drawn where each is read surely (checked by
# tests/test_camera_sources.py): the table that must be dealt three more.
NO_SET_FACES = [52, 72, 59, 11, 1, 47, 43, 41, 12, 40, 62, 32]


@functools.cache
def no_set_table() -> bytes:
    deck = all_faces()
    faces = [deck[i] for i in NO_SET_FACES]
    table = render_table(faces, np.random.default_rng(0), size=(960, 720), top="cloth", light="day")
    ok, jpeg = cv2.imencode(".jpg", table.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return jpeg.tobytes()


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
