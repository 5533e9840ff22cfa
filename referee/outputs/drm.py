"""The kernel's mode setting (KMS), by ioctl: the structures of drm.h and drm_mode.h as
ctypes, their requests, and `DrmCard`, the one object that touches a /dev/dri card.

`fcntl.ioctl` with a ctypes structure as the mutable buffer is the whole binding: the
kernel reads the structure and writes its answer back in place, and a list it fills
(the connectors, the modes) is a ctypes array whose address the structure carries.
Everything above this module (kms.py) speaks to a `Card`, so the tests give it a fake
card at exactly this boundary (tests/fake_drm.py).
"""

import ctypes
import fcntl
import mmap
import os
import select
from typing import Protocol

from referee.linux.ioctl import NONE, READ, WRITE, ioc

u16, u32, u64 = ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64


def _iowr(nr: int, struct: type[ctypes.Structure]) -> int:
    return ioc(READ | WRITE, "d", nr, ctypes.sizeof(struct))


class ModeInfo(ctypes.Structure):
    _fields_ = [
        ("clock", u32),
        ("hdisplay", u16),
        ("hsync_start", u16),
        ("hsync_end", u16),
        ("htotal", u16),
        ("hskew", u16),
        ("vdisplay", u16),
        ("vsync_start", u16),
        ("vsync_end", u16),
        ("vtotal", u16),
        ("vscan", u16),
        ("vrefresh", u32),
        ("flags", u32),
        ("type", u32),
        ("name", ctypes.c_char * 32),
    ]


class CardRes(ctypes.Structure):
    _fields_ = [
        ("fb_id_ptr", u64),
        ("crtc_id_ptr", u64),
        ("connector_id_ptr", u64),
        ("encoder_id_ptr", u64),
        ("count_fbs", u32),
        ("count_crtcs", u32),
        ("count_connectors", u32),
        ("count_encoders", u32),
        ("min_width", u32),
        ("max_width", u32),
        ("min_height", u32),
        ("max_height", u32),
    ]


class Crtc(ctypes.Structure):
    _fields_ = [
        ("set_connectors_ptr", u64),
        ("count_connectors", u32),
        ("crtc_id", u32),
        ("fb_id", u32),
        ("x", u32),
        ("y", u32),
        ("gamma_size", u32),
        ("mode_valid", u32),
        ("mode", ModeInfo),
    ]


class GetEncoder(ctypes.Structure):
    _fields_ = [
        ("encoder_id", u32),
        ("encoder_type", u32),
        ("crtc_id", u32),
        ("possible_crtcs", u32),
        ("possible_clones", u32),
    ]


class GetConnector(ctypes.Structure):
    _fields_ = [
        ("encoders_ptr", u64),
        ("modes_ptr", u64),
        ("props_ptr", u64),
        ("prop_values_ptr", u64),
        ("count_modes", u32),
        ("count_props", u32),
        ("count_encoders", u32),
        ("encoder_id", u32),
        ("connector_id", u32),
        ("connector_type", u32),
        ("connector_type_id", u32),
        ("connection", u32),
        ("mm_width", u32),
        ("mm_height", u32),
        ("subpixel", u32),
        ("pad", u32),
    ]


class FbCmd(ctypes.Structure):
    _fields_ = [
        ("fb_id", u32),
        ("width", u32),
        ("height", u32),
        ("pitch", u32),
        ("bpp", u32),
        ("depth", u32),
        ("handle", u32),
    ]


class PageFlip(ctypes.Structure):
    _fields_ = [
        ("crtc_id", u32),
        ("fb_id", u32),
        ("flags", u32),
        ("reserved", u32),
        ("user_data", u64),
    ]


class CreateDumb(ctypes.Structure):
    _fields_ = [
        ("height", u32),
        ("width", u32),
        ("bpp", u32),
        ("flags", u32),
        ("handle", u32),
        ("pitch", u32),
        ("size", u64),
    ]


class MapDumb(ctypes.Structure):
    _fields_ = [("handle", u32), ("pad", u32), ("offset", u64)]


class DestroyDumb(ctypes.Structure):
    _fields_ = [("handle", u32)]


class FbId(ctypes.Structure):
    """RMFB's argument, a bare unsigned int."""

    _fields_ = [("fb_id", u32)]


class EventHeader(ctypes.Structure):
    """struct drm_event: each event read from the card starts so."""

    _fields_ = [("type", u32), ("length", u32)]


SET_MASTER = ioc(NONE, "d", 0x1E, 0)
DROP_MASTER = ioc(NONE, "d", 0x1F, 0)
GETRESOURCES = _iowr(0xA0, CardRes)
GETCRTC = _iowr(0xA1, Crtc)
SETCRTC = _iowr(0xA2, Crtc)
GETENCODER = _iowr(0xA6, GetEncoder)
GETCONNECTOR = _iowr(0xA7, GetConnector)
ADDFB = _iowr(0xAE, FbCmd)
RMFB = _iowr(0xAF, FbId)
PAGE_FLIP = _iowr(0xB0, PageFlip)
CREATE_DUMB = _iowr(0xB2, CreateDumb)
MAP_DUMB = _iowr(0xB3, MapDumb)
DESTROY_DUMB = _iowr(0xB4, DestroyDumb)

MODE_CONNECTED = 1
MODE_TYPE_PREFERRED = 1 << 3
PAGE_FLIP_EVENT = 0x01
EVENT_FLIP_COMPLETE = 0x02


class Card(Protocol):
    """A DRM card's descriptor as kms.py uses it."""

    path: str

    def ioctl(self, request: int, arg: ctypes.Structure | None = None) -> None:
        """The request on the card; OSError as the kernel refuses it."""
        ...

    def map(self, offset: int, size: int) -> mmap.mmap:
        """A buffer's memory (MAP_DUMB's offset), shared with the card."""
        ...

    def events(self, timeout_s: float) -> list[int]:
        """The types of the events the card sent (a flip done), waiting at most timeout_s
        for the first."""
        ...

    def close(self) -> None: ...


class DrmCard:
    """/dev/dri/cardN, opened for mode setting."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)

    def ioctl(self, request: int, arg: ctypes.Structure | None = None) -> None:
        if arg is None:
            fcntl.ioctl(self._fd, request, 0)
        else:
            fcntl.ioctl(self._fd, request, arg, True)

    def map(self, offset: int, size: int) -> mmap.mmap:
        return mmap.mmap(
            self._fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=offset
        )

    def events(self, timeout_s: float) -> list[int]:
        if not select.select([self._fd], [], [], timeout_s)[0]:
            return []
        try:
            data = os.read(self._fd, 4096)
        except BlockingIOError:
            return []
        return event_types(data)

    def close(self) -> None:
        os.close(self._fd)


def event_types(data: bytes) -> list[int]:
    """The types of the events in what a read of the card returned (whole events only:
    the kernel never splits one)."""
    types = []
    offset = 0
    header_size = ctypes.sizeof(EventHeader)
    while offset + header_size <= len(data):
        header = EventHeader.from_buffer_copy(data, offset)
        if header.length < header_size:
            break
        types.append(header.type)
        offset += header.length
    return types
