"""A DRM card played at the ioctl boundary: what the kernel would answer each request of
referee/outputs/drm.py, with the screen's pixels readable (`scanout`).

It answers as the kernel's drm_mode_getresources and drm_mode_getconnector do: the counts
always, the lists only into arrays the caller made large enough (their addresses in the
structure). Buffers are anonymous memory; flips complete at once, as an event.
"""

import ctypes
import errno
import mmap
import os
from dataclasses import dataclass, field

from referee.outputs import drm
from referee.outputs.drm import ModeInfo


def mode(width: int, height: int, refresh: int = 60, preferred: bool = False) -> ModeInfo:
    return ModeInfo(
        hdisplay=width,
        vdisplay=height,
        vrefresh=refresh,
        type=drm.MODE_TYPE_PREFERRED if preferred else 0,
        name=f"{width}x{height}".encode(),
    )


@dataclass
class FakeConnector:
    id: int
    modes: list[ModeInfo]
    connected: bool = True
    kind: int = 11  # HDMI-A
    number: int = 1
    encoder_id: int = 0  # the encoder driving it now
    encoders: list[int] = field(default_factory=list)


@dataclass
class FakeCrtc:
    fb_id: int = 0
    mode: ModeInfo = field(default_factory=ModeInfo)
    connectors: tuple[int, ...] = ()


@dataclass
class Dumb:
    width: int
    height: int
    pitch: int
    memory: mmap.mmap


def _fill(address: int, values: list[int]) -> None:
    array = (ctypes.c_uint32 * len(values)).from_address(address)
    array[:] = values


class FakeCard:
    """One card: a console's framebuffer (fb 1) on its first CRTC, driven through
    encoder 31 from a connected HDMI-A-1, unless told otherwise."""

    def __init__(
        self,
        connectors: list[FakeConnector] | None = None,
        *,
        path: str = "/dev/dri/card0",
        crtcs: tuple[int, ...] = (41, 42),
        encoders: dict[int, tuple[int, int]] | None = None,  # id -> (crtc now, possible)
        pitch_pad: int = 0,
        other_master: bool = False,
        refused: dict[int, int] | None = None,  # request -> errno
    ) -> None:
        self.path = path
        self.connectors = connectors or [
            FakeConnector(
                21, [mode(1920, 1080), mode(1280, 720, preferred=True)], encoder_id=31,
                encoders=[31],
            )
        ]  # fmt: skip
        self.encoders = encoders if encoders is not None else {31: (41, 0b11)}
        self.crtcs = {crtc: FakeCrtc() for crtc in crtcs}
        console = self.crtcs[crtcs[0]]
        console.fb_id, console.mode, console.connectors = 1, mode(1280, 720), (21,)
        self.pitch_pad = pitch_pad
        self.other_master = other_master
        self.refused = refused or {}
        self.master = False
        self.closed = False
        self.calls: list[str] = []  # the requests, by name, in order
        self.dumbs: dict[int, Dumb] = {}
        self.fbs: dict[int, int] = {1: 0}  # fb -> its dumb buffer (the console's: none)
        self.offsets: dict[int, int] = {}  # MAP_DUMB's offset -> handle
        self.pending_events: list[int] = []
        self.complete_flips = True

    # --- what drm.DrmCard does -----------------------------------------------------------

    def ioctl(self, request: int, arg: ctypes.Structure | None = None) -> None:
        name = _NAMES[request]
        self.calls.append(name)
        if request in self.refused:
            raise OSError(self.refused[request], os.strerror(self.refused[request]))
        getattr(self, f"_{name.lower()}")(arg)

    def map(self, offset: int, size: int) -> mmap.mmap:
        dumb = self.dumbs[self.offsets[offset]]
        assert size == len(dumb.memory)
        return dumb.memory

    def events(self, timeout_s: float) -> list[int]:
        events, self.pending_events = self.pending_events, []
        return events

    def close(self) -> None:
        self.closed = True
        self.master = False

    # --- another program -----------------------------------------------------------------

    def taken(self, crtc: int = 41) -> None:
        """Another program is made master (a desktop, a VT switch under logind) and shows
        its own frame: the console's framebuffer, in another mode."""
        self.master, self.other_master = False, True
        self.crtcs[crtc].fb_id, self.crtcs[crtc].mode = 1, mode(1920, 1080)

    def given_back(self) -> None:
        """The other program let go of master: the card has none."""
        self.other_master = False

    # --- what the screen shows -----------------------------------------------------------

    def shown_fb(self, crtc: int = 41) -> int:
        return self.crtcs[crtc].fb_id

    def scanout(self, crtc: int = 41) -> bytes:
        """The pixels on the screen, XRGB8888, rows packed."""
        dumb = self.dumbs[self.fbs[self.crtcs[crtc].fb_id]]
        rows = [
            dumb.memory[y * dumb.pitch : y * dumb.pitch + dumb.width * 4]
            for y in range(dumb.height)
        ]
        return b"".join(rows)

    # --- the requests --------------------------------------------------------------------

    def _set_master(self, _: None) -> None:
        if self.other_master:
            raise OSError(errno.EBUSY, "Device or resource busy")
        self.master = True

    def _drop_master(self, _: None) -> None:
        self.master = False

    def _getresources(self, res: drm.CardRes) -> None:
        lists = [
            (list(self.crtcs), "crtc_id_ptr", "count_crtcs"),
            ([c.id for c in self.connectors], "connector_id_ptr", "count_connectors"),
            (list(self.encoders), "encoder_id_ptr", "count_encoders"),
        ]
        for values, pointer, count in lists:
            if getattr(res, count) >= len(values) and values:
                _fill(getattr(res, pointer), values)
            setattr(res, count, len(values))

    def _getconnector(self, got: drm.GetConnector) -> None:
        found = next(c for c in self.connectors if c.id == got.connector_id)
        if got.count_modes >= len(found.modes) and found.modes:
            modes = (ModeInfo * len(found.modes)).from_address(got.modes_ptr)
            modes[:] = found.modes
        if got.count_encoders >= len(found.encoders) and found.encoders:
            _fill(got.encoders_ptr, found.encoders)
        got.count_modes, got.count_encoders = len(found.modes), len(found.encoders)
        got.encoder_id = found.encoder_id
        got.connector_type, got.connector_type_id = found.kind, found.number
        got.connection = drm.MODE_CONNECTED if found.connected else 2

    def _getencoder(self, got: drm.GetEncoder) -> None:
        got.crtc_id, got.possible_crtcs = self.encoders[got.encoder_id]

    def _getcrtc(self, crtc: drm.Crtc) -> None:
        state = self.crtcs[crtc.crtc_id]
        crtc.fb_id, crtc.mode, crtc.mode_valid = state.fb_id, state.mode, int(state.fb_id != 0)

    def _need_master(self) -> None:
        if not self.master:
            raise OSError(errno.EACCES, "Permission denied")

    def _setcrtc(self, crtc: drm.Crtc) -> None:
        self._need_master()
        state = self.crtcs[crtc.crtc_id]
        connectors = (ctypes.c_uint32 * crtc.count_connectors).from_address(
            crtc.set_connectors_ptr
        ) if crtc.count_connectors else []  # fmt: skip
        if crtc.fb_id:
            assert crtc.mode_valid and crtc.fb_id in self.fbs, "a mode and a framebuffer"
        state.fb_id, state.mode, state.connectors = crtc.fb_id, crtc.mode, tuple(connectors)

    def _page_flip(self, flip: drm.PageFlip) -> None:
        self._need_master()
        state = self.crtcs[flip.crtc_id]
        if self.pending_events:
            raise OSError(errno.EBUSY, "a flip is pending")
        assert flip.fb_id in self.fbs and state.fb_id
        state.fb_id = flip.fb_id
        if self.complete_flips and flip.flags & drm.PAGE_FLIP_EVENT:
            self.pending_events.append(drm.EVENT_FLIP_COMPLETE)

    def _create_dumb(self, dumb: drm.CreateDumb) -> None:
        assert dumb.bpp == 32
        handle = len(self.dumbs) + 1
        pitch = dumb.width * 4 + self.pitch_pad
        size = pitch * dumb.height
        self.dumbs[handle] = Dumb(dumb.width, dumb.height, pitch, mmap.mmap(-1, size))
        dumb.handle, dumb.pitch, dumb.size = handle, pitch, size

    def _addfb(self, fb: drm.FbCmd) -> None:
        dumb = self.dumbs[fb.handle]
        assert (fb.width, fb.height, fb.pitch, fb.bpp, fb.depth) == (
            dumb.width, dumb.height, dumb.pitch, 32, 24,
        )  # fmt: skip
        fb.fb_id = 100 + len(self.fbs)
        self.fbs[fb.fb_id] = fb.handle

    def _rmfb(self, fb: drm.FbId) -> None:
        for crtc in self.crtcs.values():
            if crtc.fb_id == fb.fb_id:  # as the kernel does: the CRTC goes dark
                crtc.fb_id = 0
        del self.fbs[fb.fb_id]

    def _map_dumb(self, mapped: drm.MapDumb) -> None:
        mapped.offset = 0x10000 * mapped.handle
        self.offsets[mapped.offset] = mapped.handle

    def _destroy_dumb(self, dumb: drm.DestroyDumb) -> None:
        del self.dumbs[dumb.handle]


_NAMES = {
    getattr(drm, name): name
    for name in (
        "SET_MASTER", "DROP_MASTER", "GETRESOURCES", "GETCRTC", "SETCRTC", "GETENCODER",
        "GETCONNECTOR", "ADDFB", "RMFB", "PAGE_FLIP", "CREATE_DUMB", "MAP_DUMB", "DESTROY_DUMB",
    )
}  # fmt: skip
