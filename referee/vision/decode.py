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
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np

from referee.errors import PhotoFileError

MAX_FILE_BYTES = 64 << 20
MAX_PIXELS = 250_000_000  # past any camera's photo: a header that says more is a trap
MAX_PNG_PIXELS = 16_000_000  # decoded whole: 48 MB
# The decoded image's long side is brought within this (a card then some 200 px across in
# a layout of 21): enough for the stripes, and the cards' warp reads from it. A JPEG is
# decoded shrunk as far as leaves its long side at least REDUCED_PX: libjpeg then
# decodes a quarter of the pixels or fewer, several times faster.
DECODE_PX = 2048
REDUCED_PX = 1280
JPEG_SOI = b"\xff\xd8"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# JPEG markers with no length: TEM, RST0-7, SOI, EOI.
_STANDALONE = {0x01, *range(0xD0, 0xDA)}
# Start-of-frame markers (the image's size): C0-CF but DHT (C4), JPG (C8) and DAC (CC).
_SOF = set(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def read_photo(path: Path) -> np.ndarray:
    """The photo at `path`, decoded and shrunk so that its long side is at most DECODE_PX."""
    data = _read_file(path)
    return decode_photo(data, str(path))


def decode_photo(data: bytes, name: str) -> np.ndarray:
    """A photo's bytes (a file's, or a phone's upload), decoded as read_photo does; `name`
    says where they came from in the error's line."""
    if data.startswith(JPEG_SOI):
        width, height = _jpeg_size(data, name)
    elif data.startswith(PNG_SIGNATURE):
        width, height = _png_size(data, name)
        if width * height > MAX_PNG_PIXELS:
            raise PhotoFileError(
                f"{name}: a PNG of {width}x{height} pixels is too large to read (at most"
                f" {MAX_PNG_PIXELS // 1_000_000} megapixels): send a JPEG"
            )
    else:
        raise PhotoFileError(f"{name}: not a JPEG or PNG image")
    if width * height > MAX_PIXELS:
        raise PhotoFileError(f"{name}: {width}x{height} pixels is not a photo this can read")
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
    return bounded(image)


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


def _jpeg_size(data: bytes, name: str) -> tuple[int, int]:
    """The JPEG's width and height from its frame header, once every segment and the
    entropy-coded data after each scan are found whole up to the end-of-image marker."""
    size: tuple[int, int] | None = None
    pos = 2
    end = len(data)
    while True:
        if pos + 2 > end:
            raise PhotoFileError(f"{name}: a JPEG cut short")
        if data[pos] != 0xFF:
            raise PhotoFileError(f"{name}: a damaged JPEG (no marker at byte {pos})")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill bytes before a marker
            pos += 1
            continue
        if marker == 0xD9:  # EOI
            break
        if marker in _STANDALONE:
            pos += 2
            continue
        if pos + 4 > end:
            raise PhotoFileError(f"{name}: a JPEG cut short")
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if length < 2 or pos + 2 + length > end:
            raise PhotoFileError(f"{name}: a JPEG cut short")
        if marker in _SOF:
            if length < 7:
                raise PhotoFileError(f"{name}: a damaged JPEG frame header")
            height, width = struct.unpack_from(">HH", data, pos + 5)
            size = (width, height)
        pos += 2 + length
        if marker == 0xDA:  # SOS: entropy-coded data up to the next marker
            pos = _after_scan(data, pos, name)
    if size is None or size[0] == 0 or size[1] == 0:
        raise PhotoFileError(f"{name}: a JPEG without a usable frame header")
    return size


def _after_scan(data: bytes, pos: int, name: str) -> int:
    """Where the marker after a scan's entropy-coded data starts (FF 00 is a stuffed FF,
    FF D0-D7 a restart marker, both inside the data)."""
    while True:
        pos = data.find(b"\xff", pos)
        if pos < 0 or pos + 1 >= len(data):
            raise PhotoFileError(f"{name}: a JPEG cut short")
        following = data[pos + 1]
        if following == 0x00 or 0xD0 <= following <= 0xD7 or following == 0xFF:
            pos += 1 if following == 0xFF else 2
            continue
        return pos


def _png_size(data: bytes, name: str) -> tuple[int, int]:
    """The PNG's width and height, once every chunk is found whole, its checksum right,
    up to IEND."""
    pos = len(PNG_SIGNATURE)
    size: tuple[int, int] | None = None
    while True:
        if pos + 8 > len(data):
            raise PhotoFileError(f"{name}: a PNG cut short")
        length, kind = struct.unpack_from(">I4s", data, pos)
        body_end = pos + 8 + length
        if body_end + 4 > len(data):
            raise PhotoFileError(f"{name}: a PNG cut short")
        (crc,) = struct.unpack_from(">I", data, body_end)
        if zlib.crc32(data[pos + 4 : body_end]) != crc:
            raise PhotoFileError(f"{name}: a damaged PNG (chunk {kind!r} fails its checksum)")
        if kind == b"IHDR" and length >= 8:
            size = struct.unpack_from(">II", data, pos + 8)
        pos = body_end + 4
        if kind == b"IEND":
            break
    if size is None or size[0] == 0 or size[1] == 0:
        raise PhotoFileError(f"{name}: a PNG without a usable header")
    return size
