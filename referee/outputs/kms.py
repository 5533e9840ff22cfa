"""The console's screen without GL: frames handed to the display through KMS dumb buffers.

    find_output(wanted)      the first card with a screen connected: KmsOutput, or KmsError
    KmsOutput.present(frame) an XRGB8888 frame onto the screen, flipped at the vertical blank

The screens are drawn in software into a pygame Surface (kms_screen.py); this takes the
pixels to the screen the way every DRM driver can (the Pi's vc4, an SPI panel's, QEMU's
virtio-gpu): two "dumb" buffers in the card's memory, mapped into the process, the mode
set once on the connector's CRTC, then each frame copied into the buffer not shown and
flipped to (PAGE_FLIP, whose completion the card reports as an event), or, on a driver
that refuses flips, set with SETCRTC. No Mesa, no EGL: SDL's KMSDRM driver shows its
frames through a GL texture, which Mesa's software GL never drew (docs/design.md,
"Decisions").

Opening the card makes the referee its DRM master (the first to open a card with no
master is made it); closing puts back the CRTC as it was found (the console's text) and
drops master, so a desktop or the console can take the screen again. Another program
that takes master meanwhile (a VT switch under logind, a second program made master)
makes `present` raise ScreenTaken; `take_back` makes the referee master again once it
is let go, and sets its frame on the CRTC again.
"""

import contextlib
import ctypes
import errno
import logging
import mmap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.errors import ScreenUnavailable
from referee.units import SMALLEST_SCREEN

from . import drm
from .drm import Card, DrmCard, ModeInfo

log = logging.getLogger(__name__)

DRI = Path("/dev/dri")
CARDS = f"{DRI}/card*"  # as messages name them
# A flip is done at the next vertical blank, a sixtieth of a second away at most: a flip
# not done in this long will not be, and the frame is set with SETCRTC instead.
FLIP_WAIT_S = 0.1
# XRGB8888: 32 bits a pixel, 24 of them colour (ADDFB's bpp and depth).
BPP, DEPTH = 32, 24
# drm_connector_enum_list in the kernel's drm_connector.c: the names in /sys/class/drm.
_CONNECTOR_TYPES = (
    "Unknown", "VGA", "DVI-I", "DVI-D", "DVI-A", "Composite", "SVIDEO", "LVDS", "Component",
    "DIN", "DP", "HDMI-A", "HDMI-B", "TV", "eDP", "Virtual", "DSI", "DPI", "Writeback", "SPI",
    "USB",
)  # fmt: skip


# What the kernel answers a request only DRM master may make, from a descriptor that is no
# longer master: EACCES (drm_ioctl's check), EPERM and EBUSY from some drivers' paths.
TAKEN_ERRNOS = (errno.EACCES, errno.EPERM, errno.EBUSY)


class KmsError(ScreenUnavailable):
    """A card that cannot show the referee's frames; the message says which and why."""


class ScreenTaken(Exception):
    """Another program is DRM master of the card: nothing the referee draws is shown."""


@dataclass
class Connector:
    id: int
    name: str  # as the kernel names it: HDMI-A-1, Virtual-1
    connected: bool
    encoder_id: int  # the encoder it is driven through now, 0 if none
    encoders: list[int]
    modes: list[ModeInfo]


def connector_name(kind: int, number: int) -> str:
    name = _CONNECTOR_TYPES[kind] if kind < len(_CONNECTOR_TYPES) else f"type{kind}"
    return f"{name}-{number}"


def mode_text(mode: ModeInfo) -> str:
    return f"{mode.hdisplay}x{mode.vdisplay}@{mode.vrefresh}"


def choose_mode(modes: Sequence[ModeInfo], wanted: tuple[int, int] | None) -> ModeInfo:
    """The screen's preferred mode (its own size), else its first; with a size wanted,
    the fastest mode of that size, else the preferred one all the same."""
    if not modes:
        raise ValueError("no modes")
    if wanted is not None:
        sized = [m for m in modes if (m.hdisplay, m.vdisplay) == wanted]
        if sized:
            return max(sized, key=lambda m: m.vrefresh)
    return next((m for m in modes if m.type & drm.MODE_TYPE_PREFERRED), modes[0])


def choose_crtc(
    connector: Connector, encoders: dict[int, drm.GetEncoder], crtcs: Sequence[int]
) -> int | None:
    """The CRTC the connector's encoder drives now (the console's), else the first one
    any of its encoders can drive; None if none can."""
    current = encoders.get(connector.encoder_id)
    if current is not None and current.crtc_id:
        return int(current.crtc_id)
    for encoder_id in connector.encoders:
        encoder = encoders.get(encoder_id)
        if encoder is None:
            continue
        for index, crtc in enumerate(crtcs):
            if encoder.possible_crtcs & (1 << index):
                return crtc
    return None


def _ids(count: int) -> ctypes.Array[ctypes.c_uint32]:
    return (ctypes.c_uint32 * count)()


def _addr(array: ctypes.Array[ctypes.c_uint32] | ctypes.Array[ModeInfo]) -> int:
    return ctypes.addressof(array)


def resources(card: Card) -> tuple[list[int], list[int], list[int]]:
    """The card's CRTCs, connectors and encoders. Asked twice, as the kernel wants: the
    counts, then the lists into arrays that size (again if a screen came meanwhile)."""
    while True:
        res = drm.CardRes()
        card.ioctl(drm.GETRESOURCES, res)
        counts = (res.count_crtcs, res.count_connectors, res.count_encoders)
        crtcs, connectors, encoders = (_ids(n) for n in counts)
        res = drm.CardRes(
            crtc_id_ptr=_addr(crtcs),
            connector_id_ptr=_addr(connectors),
            encoder_id_ptr=_addr(encoders),
            count_crtcs=counts[0],
            count_connectors=counts[1],
            count_encoders=counts[2],
        )
        card.ioctl(drm.GETRESOURCES, res)
        if (res.count_crtcs, res.count_connectors, res.count_encoders) == counts:
            return list(crtcs), list(connectors), list(encoders)


def connector(card: Card, connector_id: int) -> Connector:
    """A connector, its modes and encoders (asked twice, as resources())."""
    while True:
        got = drm.GetConnector(connector_id=connector_id)
        card.ioctl(drm.GETCONNECTOR, got)
        counts = (got.count_modes, got.count_encoders)
        modes, encoders = (ModeInfo * counts[0])(), _ids(counts[1])
        got = drm.GetConnector(
            connector_id=connector_id,
            modes_ptr=_addr(modes),
            count_modes=counts[0],
            encoders_ptr=_addr(encoders),
            count_encoders=counts[1],
        )
        card.ioctl(drm.GETCONNECTOR, got)
        if (got.count_modes, got.count_encoders) == counts:
            return Connector(
                id=connector_id,
                name=connector_name(got.connector_type, got.connector_type_id),
                connected=got.connection == drm.MODE_CONNECTED,
                encoder_id=got.encoder_id,
                encoders=list(encoders),
                modes=list(modes),
            )


@dataclass
class Buffer:
    """A dumb buffer, its framebuffer and its memory mapped here."""

    handle: int
    fb_id: int
    pitch: int
    memory: mmap.mmap


class KmsOutput:
    """A card's screen, set to a mode, showing the referee's frames. Built by
    `open_output`, which finds its connector, CRTC and mode."""

    def __init__(self, card: Card, connector: Connector, crtc_id: int, mode: ModeInfo) -> None:
        self.card = card
        self.connector = connector
        self.crtc_id = crtc_id
        self.mode = mode
        self.size = (mode.hdisplay, mode.vdisplay)
        self._saved = drm.Crtc(crtc_id=crtc_id)
        card.ioctl(drm.GETCRTC, self._saved)
        self._buffers: list[Buffer] = []
        self._shown = 0  # the buffer on the screen
        self._flip_pending = False
        self.flips = True  # False once the driver refused a flip: SETCRTC each frame
        with contextlib.ExitStack() as made:
            made.callback(self._free_buffers)
            for _ in range(2):
                self._buffers.append(self._buffer())
            self._set_crtc(self._buffers[0].fb_id)
            made.pop_all()

    @property
    def name(self) -> str:
        """How the log names it: `card0 1280x720`."""
        width, height = self.size
        return f"{Path(self.card.path).name} {width}x{height}"

    def _buffer(self) -> Buffer:
        width, height = self.size
        dumb = drm.CreateDumb(width=width, height=height, bpp=BPP)
        self.card.ioctl(drm.CREATE_DUMB, dumb)
        try:
            fb = drm.FbCmd(
                width=width, height=height, pitch=dumb.pitch, bpp=BPP, depth=DEPTH,
                handle=dumb.handle,
            )  # fmt: skip
            self.card.ioctl(drm.ADDFB, fb)
            mapped = drm.MapDumb(handle=dumb.handle)
            try:
                self.card.ioctl(drm.MAP_DUMB, mapped)
                memory = self.card.map(mapped.offset, dumb.size)
            except OSError:
                self.card.ioctl(drm.RMFB, drm.FbId(fb.fb_id))
                raise
        except OSError:
            self.card.ioctl(drm.DESTROY_DUMB, drm.DestroyDumb(dumb.handle))
            raise
        return Buffer(dumb.handle, fb.fb_id, dumb.pitch, memory)

    def _set_crtc(self, fb_id: int) -> None:
        connectors = _ids(1)
        connectors[0] = self.connector.id
        crtc = drm.Crtc(
            set_connectors_ptr=_addr(connectors),
            count_connectors=1,
            crtc_id=self.crtc_id,
            fb_id=fb_id,
            mode_valid=1,
            mode=self.mode,
        )
        self.card.ioctl(drm.SETCRTC, crtc)

    def present(self, frame: memoryview, pitch: int) -> None:
        """Show the frame (XRGB8888 rows `pitch` bytes apart) at the next vertical blank.
        Waits for the flip before it, if it is still under way: its buffer is this one's.
        ScreenTaken if another program is master of the card now."""
        self._wait_flip()
        back = self._buffers[1 - self._shown]
        _copy_rows(frame, pitch, back.memory, back.pitch, self.size[0] * BPP // 8)
        if self.flips:
            try:
                self.card.ioctl(
                    drm.PAGE_FLIP,
                    drm.PageFlip(crtc_id=self.crtc_id, fb_id=back.fb_id, flags=drm.PAGE_FLIP_EVENT),
                )
                self._flip_pending = True
            except OSError as err:  # EINVAL, EOPNOTSUPP: a driver without flips
                _raise_if_taken(err)
                log.info("%s: page flips refused (%s): each frame is set", self.name, err.strerror)
                self.flips = False
        if not self.flips:
            try:
                self._set_crtc(back.fb_id)
            except OSError as err:
                _raise_if_taken(err)
                raise
        self._shown = 1 - self._shown

    def take_back(self) -> bool:
        """Master of the card again, the last frame shown set on the CRTC again (the other
        program set its own, perhaps in another mode); False while the card is held."""
        try:
            self.card.ioctl(drm.SET_MASTER)  # allowed again to the descriptor that was master
            self._set_crtc(self._buffers[self._shown].fb_id)
        except OSError as err:
            if err.errno in TAKEN_ERRNOS:
                return False
            raise
        return True

    def _wait_flip(self) -> None:
        if not self._flip_pending:
            return
        if drm.EVENT_FLIP_COMPLETE not in self.card.events(FLIP_WAIT_S):
            log.warning("%s: a flip took over %.1f s: each frame is set", self.name, FLIP_WAIT_S)
            self.flips = False
        self._flip_pending = False

    def close(self) -> None:
        """The CRTC as it was found (the console's text), the buffers freed, master
        dropped, the card closed."""
        try:
            with contextlib.suppress(OSError):
                self._wait_flip()
                self._restore()
            self._free_buffers()
            with contextlib.suppress(OSError):
                self.card.ioctl(drm.DROP_MASTER)
        finally:
            self.card.close()

    def _restore(self) -> None:
        saved = self._saved
        connectors = _ids(1)
        connectors[0] = self.connector.id
        if saved.fb_id:
            saved.set_connectors_ptr, saved.count_connectors = _addr(connectors), 1
        self.card.ioctl(drm.SETCRTC, saved)

    def _free_buffers(self) -> None:
        while self._buffers:
            buffer = self._buffers.pop()
            buffer.memory.close()
            with contextlib.suppress(OSError):
                self.card.ioctl(drm.RMFB, drm.FbId(buffer.fb_id))
            with contextlib.suppress(OSError):
                self.card.ioctl(drm.DESTROY_DUMB, drm.DestroyDumb(buffer.handle))


def _raise_if_taken(err: OSError) -> None:
    if err.errno in TAKEN_ERRNOS:
        raise ScreenTaken(err.strerror)


def _copy_rows(
    frame: memoryview, frame_pitch: int, into: mmap.mmap, pitch: int, row_bytes: int
) -> None:
    """The frame into the buffer: in one copy when their rows are as long, else row by row."""
    if frame_pitch == pitch:
        into[: frame.nbytes] = frame
        return
    rows = frame.nbytes // frame_pitch
    for row in range(rows):
        into[row * pitch : row * pitch + row_bytes] = frame[
            row * frame_pitch : row * frame_pitch + row_bytes
        ]


def _open_card(path: str, opener: Callable[[str], Card]) -> Card:
    try:
        return opener(path)
    except FileNotFoundError:
        raise KmsError(f"{path}: no such card") from None
    except PermissionError:
        raise KmsError(
            f"{path}: permission denied: the user must be in the group that owns it"
            " (`video`: sudo usermod -aG video $USER, then log in again)"
        ) from None
    except OSError as err:
        raise KmsError(f"{path}: cannot be opened ({err.strerror})") from None


def open_output(
    path: str, wanted: tuple[int, int] | None, opener: Callable[[str], Card] = DrmCard
) -> KmsOutput:
    """The card's first connected screen at its own mode (or `wanted`'s size, if it has
    it), with the referee as DRM master; KmsError in one line if it cannot be shown on."""
    card = _open_card(path, opener)
    with contextlib.ExitStack() as opened:
        opened.callback(card.close)
        name = Path(path).name
        try:
            # The first to open a card without a master is made master: this only fails
            # if another program (a desktop, a boot splash, another referee) holds it.
            card.ioctl(drm.SET_MASTER)
        except OSError as err:
            if err.errno == errno.ENOTTY:
                raise KmsError(f"{path}: not a DRM card ({err.strerror})") from None
            raise KmsError(
                f"{path}: busy: another program (a desktop, a boot splash, a second referee)"
                " is showing on it"
            ) from None
        try:
            crtcs, connector_ids, encoder_ids = resources(card)
        except OSError as err:  # a GPU that renders only (a Pi 5's card0, v3d)
            raise KmsError(f"{path}: no screen of its own ({err.strerror})") from None
        connectors = [connector(card, c) for c in connector_ids]
        found = next((c for c in connectors if c.connected and c.modes), None)
        if found is None:
            said = ", ".join(f"{c.name} not connected" for c in connectors) or "no connectors"
            raise KmsError(f"{path}: no screen connected ({said})")
        encoders = {}
        for encoder_id in encoder_ids:
            encoders[encoder_id] = drm.GetEncoder(encoder_id=encoder_id)
            card.ioctl(drm.GETENCODER, encoders[encoder_id])
        crtc = choose_crtc(found, encoders, crtcs)
        if crtc is None:
            raise KmsError(f"{path}: no CRTC can drive {found.name}")
        mode = choose_mode(found.modes, wanted)
        if wanted is not None and (mode.hdisplay, mode.vdisplay) != wanted:
            log.warning("%s %s has no %dx%d mode: %s", name, found.name, *wanted, mode_text(mode))
        least_width, least_height = SMALLEST_SCREEN
        if mode.hdisplay < least_width or mode.vdisplay < least_height:
            raise KmsError(
                f"{path}: {found.name} at {mode.hdisplay}x{mode.vdisplay} is smaller than the"
                f" screens are laid out for: at least {least_width} wide and {least_height}"
                f" high ({least_width}x{least_height}: turn a 320x480 panel on its side,"
                " rotate=90 in its overlay)"
            )
        try:
            output = KmsOutput(card, found, crtc, mode)
        except OSError as err:
            raise KmsError(
                f"{path}: {found.name} at {mode_text(mode)} cannot be set ({err.strerror})"
            ) from None
        opened.pop_all()
        return output


def find_output(
    wanted: tuple[int, int] | None,
    paths: Sequence[str] | None = None,
    opener: Callable[[str], Card] = DrmCard,
) -> KmsOutput:
    """The first card, in number order, with a screen to show on (a Pi 5's card0 only
    renders; its screens are card1's). KmsError saying what each card lacked if none."""
    paths = cards() if paths is None else paths
    if not paths:
        raise KmsError(f"no DRM card ({CARDS} matches nothing): no screen on the console")
    refused = []
    for path in paths:
        try:
            return open_output(path, wanted, opener)
        except KmsError as err:
            refused.append(str(err))
    raise KmsError("; ".join(refused))


def cards() -> list[str]:
    """The DRM cards here (/dev/dri/cardN), in number order."""
    found = [(p.name.removeprefix("card"), str(p)) for p in DRI.glob("card*")]
    return [path for _, path in sorted(found, key=lambda n: (len(n[0]), n[0]))]
