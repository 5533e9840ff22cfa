"""A photo from the disk, or from a phone, as a BGR image of a bounded size.

The file is checked before it is decoded: a regular file (not a FIFO that would block, not
a folder), at most MAX_FILE_BYTES, a JPEG or a PNG whole to its last marker (a truncated
file would decode into grey rows that look like a table), its dimensions read from its
header. A JPEG is decoded already shrunk by libjpeg (1/2, 1/4 or 1/8: IMREAD_REDUCED_*),
so a 100-megapixel photo costs the memory of a 2-megapixel one; a PNG cannot be, and is
refused above MAX_PNG_PIXELS. Every failure is a PhotoFileError naming the file and what
is wrong, in one line.
"""

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from referee.errors import PhotoFileError
from referee.photo_header import JPEG_SOI, photo_size

MAX_FILE_BYTES = 64 << 20
# The decoded image's long side is brought within this (a card then some 200 px across in
# a layout of 21): enough for the stripes, and the cards' warp reads from it. A JPEG is
# decoded shrunk as far as leaves its long side at least REDUCED_PX: libjpeg then
# decodes a quarter of the pixels or fewer, several times faster.
DECODE_PX = 2048
REDUCED_PX = 1280


@dataclass(frozen=True)
class Photo:
    """A photo decoded to be read: `image` (BGR, its long side at most DECODE_PX), and the
    photo's own width and height as it is shown, turned as its EXIF orientation says (as
    OpenCV turns the image), in whose pixels `referee look` says where each card lies."""

    image: np.ndarray
    width: int
    height: int

    @property
    def scale(self) -> tuple[float, float]:
        """The photo's own pixels to one of the image's, across and down."""
        height, width = self.image.shape[:2]
        return self.width / width, self.height / height


def read_photo(path: Path) -> Photo:
    """The photo at `path`, decoded and shrunk so that its long side is at most DECODE_PX."""
    data = _read_file(path)
    return decode_photo(data, str(path))


def decode_photo(data: bytes, name: str) -> Photo:
    """A photo's bytes (a file's, or a phone's upload), decoded as read_photo does; `name`
    says where they came from in the error's line."""
    width, height = photo_size(data, name)
    flag = cv2.IMREAD_COLOR
    if data.startswith(JPEG_SOI):
        for factor, reduced in (
            (8, cv2.IMREAD_REDUCED_COLOR_8),
            (4, cv2.IMREAD_REDUCED_COLOR_4),
            (2, cv2.IMREAD_REDUCED_COLOR_2),
        ):
            if max(width, height) / factor >= REDUCED_PX:
                flag = reduced
                break
    image = cv2.imdecode(np.frombuffer(data, np.uint8), flag)
    if image is None or image.ndim != 3 or image.size == 0:
        raise PhotoFileError(f"{name}: the image inside cannot be decoded")
    if (image.shape[1] >= image.shape[0]) != (width >= height):
        width, height = height, width  # stored on its side, shown upright (EXIF)
    return Photo(bounded(image), width, height)


def bounded(image: np.ndarray, long_side: int = DECODE_PX) -> np.ndarray:
    """The image shrunk (area-averaged) so that its long side is at most `long_side`."""
    height, width = image.shape[:2]
    if max(height, width) <= long_side:
        return image
    scale = long_side / max(height, width)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def _read_file(path: Path) -> bytes:
    try:
        # O_NONBLOCK: a FIFO opens at once instead of waiting for a writer; fstat then
        # refuses it, as a folder or a device, before a byte is read.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise PhotoFileError(f"{path}: {err.strerror or err}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise PhotoFileError(f"{path}: a folder, not a photo")
        if not stat.S_ISREG(info.st_mode):
            raise PhotoFileError(f"{path}: not a regular file (a pipe or a device)")
        if info.st_size > MAX_FILE_BYTES:
            raise PhotoFileError(
                f"{path}: {info.st_size / (1 << 20):.0f} MB is too large for a photo"
                f" (at most {MAX_FILE_BYTES >> 20} MB)"
            )
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise PhotoFileError(f"{path}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:  # it grew while it was read
        raise PhotoFileError(f"{path}: too large for a photo (at most {MAX_FILE_BYTES >> 20} MB)")
    if not data:
        raise PhotoFileError(f"{path}: an empty file")
    return data
