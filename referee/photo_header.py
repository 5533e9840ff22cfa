"""A photo's header read without decoding it: a JPEG or a PNG, whole to its last marker,
and its width and height, checked against what can be read (vision/decode.py decodes it after).

Neither OpenCV nor numpy: the page's process checks a phone's upload with it, within its
own memory (docs/web.md, "Photo"). `data` is bytes or an mmap of the file: nothing is
copied but the few bytes of each header, a PNG chunk's checksum taken through a view.
"""

import mmap
import struct
import zlib

from referee.errors import PhotoFileError

MAX_PIXELS = 250_000_000  # past any camera's photo: a header that says more is a trap
MAX_PNG_PIXELS = 16_000_000  # decoded whole: 48 MB
JPEG_SOI = b"\xff\xd8"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# JPEG markers with no length: TEM, RST0-7, SOI, EOI.
_STANDALONE = {0x01, *range(0xD0, 0xDA)}
# Start-of-frame markers (the image's size): C0-CF but DHT (C4), JPG (C8) and DAC (CC).
_SOF = set(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}

Data = bytes | mmap.mmap


def photo_size(data: Data, name: str) -> tuple[int, int]:
    """The photo's width and height, once it is found a whole JPEG or PNG of a size that
    can be read; else PhotoFileError naming `name` and what is wrong, in one line."""
    if data[: len(JPEG_SOI)] == JPEG_SOI:
        width, height = _jpeg_size(data, name)
    elif data[: len(PNG_SIGNATURE)] == PNG_SIGNATURE:
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
    return width, height


def _jpeg_size(data: Data, name: str) -> tuple[int, int]:
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


def _after_scan(data: Data, pos: int, name: str) -> int:
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


def _png_size(data: Data, name: str) -> tuple[int, int]:
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
        with memoryview(data) as view:  # a chunk may be megabytes: not copied
            right = zlib.crc32(view[pos + 4 : body_end]) == crc
        if not right:
            raise PhotoFileError(f"{name}: a damaged PNG (chunk {kind!r} fails its checksum)")
        if kind == b"IHDR" and length >= 8:
            size = struct.unpack_from(">II", data, pos + 8)
        pos = body_end + 4
        if kind == b"IEND":
            break
    if size is None or size[0] == 0 or size[1] == 0:
        raise PhotoFileError(f"{name}: a PNG without a usable header")
    return size
