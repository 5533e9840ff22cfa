"""The microphone's capture stream through ALSA's own library, libasound.so.2, by ctypes.

Why ctypes (docs/design.md, "Decisions"): the capture needs the kernel's stamp of the
capture pointer on CLOCK_MONOTONIC, and libasound is on every Raspberry Pi OS (it is the
system's sound); pyalsaaudio has that stamp only from 0.10 on, which Debian 12 lacks and
which has no arm64 wheel, and PortAudio's input ADC time is the same stamp less the nominal
rate's delay, delivered in a callback on PortAudio's thread.

This module is the lowest level, and all it does is libasound's calls: `CapturePcm` is
what capture.py needs of a stream, and the tests' fake card (tests/fake_capture.py) stands
in for it, as gpiozero's MockFactory stands in for pins.
"""

import ctypes
import errno
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # arrays are handed in: a look for a microphone loads no numpy
    import numpy as np

NS_PER_S = 1_000_000_000

# alsa/pcm.h
_STREAM_PLAYBACK = 0
_STREAM_CAPTURE = 1
_NONBLOCK = 1
_ACCESS_RW_INTERLEAVED = 3
_FORMAT_S16_LE = 2
_TSTAMP_ENABLE = 1
_TSTAMP_TYPE_MONOTONIC = 1
_STATE_RUNNING = 3

# The reader wakes once a period: 20 times a second (bench/capture.py: a shorter period
# costs more, and nothing waits for the ring sooner).
PERIOD_US = 50_000


class Overrun(Exception):
    """The card's buffer filled before it was read: samples were lost (an XRUN)."""


class CaptureError(Exception):
    """The capture stream cannot go on (no such device, unplugged, refused a setting)."""


class NoCard(CaptureError):
    """No sound card here captures (the microphone `auto`): a box without one, no fault."""


@dataclass(frozen=True)
class PcmStatus:
    """The kernel's stamp of the capture pointer, and how many frames the stream holds
    that were not read yet: the frame at `read + delay` was being taken at `stamp_ns`."""

    stamp_ns: int
    delay: int


class CapturePcm(Protocol):
    """A running mono 16-bit capture stream that never blocks its reader."""

    name: str
    rate: int  # frames a second, as the card was set (not as it runs: that is the clock's)
    period: int  # frames the card delivers at a time

    def wait(self, timeout_ms: int) -> None:
        """Until frames can be read or timeout_ms passed; raises Overrun."""
        ...

    def read(self, out: "np.ndarray") -> int:
        """Frames read into out (int16) without waiting, 0 if none; raises Overrun."""
        ...

    def status(self) -> PcmStatus | None:
        """The pointer's stamp and the frames waiting, or None while it is not running."""
        ...

    def restart(self) -> None:
        """After an overrun: capture again from now."""
        ...

    def close(self) -> None: ...


class _Timespec(ctypes.Structure):
    _fields_ = (("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long))


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_UINT_P = ctypes.POINTER(ctypes.c_uint)
_INT_P = ctypes.POINTER(ctypes.c_int)
_ULONG_P = ctypes.POINTER(ctypes.c_ulong)
# name: (result, arguments) of every libasound function used here.
_SIGNATURES: dict[str, tuple[type | None, tuple[type, ...]]] = {
    "snd_strerror": (ctypes.c_char_p, (ctypes.c_int,)),
    "snd_card_next": (ctypes.c_int, (_INT_P,)),
    "snd_pcm_open": (ctypes.c_int, (_PP, ctypes.c_char_p, ctypes.c_int, ctypes.c_int)),
    "snd_pcm_close": (ctypes.c_int, (_P,)),
    "snd_pcm_hw_params_malloc": (ctypes.c_int, (_PP,)),
    "snd_pcm_hw_params_free": (None, (_P,)),
    "snd_pcm_hw_params_any": (ctypes.c_int, (_P, _P)),
    "snd_pcm_hw_params_set_access": (ctypes.c_int, (_P, _P, ctypes.c_int)),
    "snd_pcm_hw_params_set_format": (ctypes.c_int, (_P, _P, ctypes.c_int)),
    "snd_pcm_hw_params_set_channels": (ctypes.c_int, (_P, _P, ctypes.c_uint)),
    "snd_pcm_hw_params_set_rate_resample": (ctypes.c_int, (_P, _P, ctypes.c_uint)),
    "snd_pcm_hw_params_set_rate_near": (ctypes.c_int, (_P, _P, _UINT_P, _INT_P)),
    "snd_pcm_hw_params_set_period_time_near": (ctypes.c_int, (_P, _P, _UINT_P, _INT_P)),
    "snd_pcm_hw_params_set_buffer_time_near": (ctypes.c_int, (_P, _P, _UINT_P, _INT_P)),
    "snd_pcm_hw_params_get_period_size": (ctypes.c_int, (_P, _ULONG_P, _INT_P)),
    "snd_pcm_hw_params": (ctypes.c_int, (_P, _P)),
    "snd_pcm_sw_params_malloc": (ctypes.c_int, (_PP,)),
    "snd_pcm_sw_params_free": (None, (_P,)),
    "snd_pcm_sw_params_current": (ctypes.c_int, (_P, _P)),
    "snd_pcm_sw_params_set_tstamp_mode": (ctypes.c_int, (_P, _P, ctypes.c_int)),
    "snd_pcm_sw_params_set_tstamp_type": (ctypes.c_int, (_P, _P, ctypes.c_int)),
    "snd_pcm_sw_params_set_avail_min": (ctypes.c_int, (_P, _P, ctypes.c_ulong)),
    "snd_pcm_sw_params": (ctypes.c_int, (_P, _P)),
    "snd_pcm_prepare": (ctypes.c_int, (_P,)),
    "snd_pcm_start": (ctypes.c_int, (_P,)),
    "snd_pcm_wait": (ctypes.c_int, (_P, ctypes.c_int)),
    "snd_pcm_readi": (ctypes.c_long, (_P, _P, ctypes.c_ulong)),
    "snd_pcm_status_malloc": (ctypes.c_int, (_PP,)),
    "snd_pcm_status_free": (None, (_P,)),
    "snd_pcm_status": (ctypes.c_int, (_P, _P)),
    "snd_pcm_status_get_state": (ctypes.c_int, (_P,)),
    "snd_pcm_status_get_htstamp": (None, (_P, ctypes.POINTER(_Timespec))),
    "snd_pcm_status_get_delay": (ctypes.c_long, (_P,)),
    "snd_pcm_set_params": (
        ctypes.c_int,
        (_P, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint, ctypes.c_int, ctypes.c_uint),
    ),
    "snd_pcm_writei": (ctypes.c_long, (_P, _P, ctypes.c_ulong)),
    "snd_pcm_recover": (ctypes.c_int, (_P, ctypes.c_int, ctypes.c_int)),
    "snd_pcm_drain": (ctypes.c_int, (_P,)),
    "snd_pcm_drop": (ctypes.c_int, (_P,)),
}

_lib: ctypes.CDLL | None = None


def libasound() -> ctypes.CDLL:
    """ALSA's library, its functions typed (ctypes releases the GIL in each call: a
    thread waiting in snd_pcm_wait holds nothing up)."""
    global _lib
    if _lib is None:
        try:
            # By its soname, as the loader finds it: ctypes.util.find_library runs ldconfig
            # in a child process, forked from the whole daemon (at the first REPLAY).
            lib = ctypes.CDLL("libasound.so.2")
        except OSError as err:
            raise CaptureError(f"ALSA's library (libasound.so.2) is missing: {err}") from err
        for name, (result, arguments) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype = result
            function.argtypes = arguments
        _lib = lib
    return _lib


def _check(lib: ctypes.CDLL, result: int, what: str) -> int:
    if result < 0:
        raise CaptureError(f"{what}: {lib.snd_strerror(result).decode()}")
    return result


def find_capture_device() -> str | None:
    """The first sound card that can capture, as `plughw:N` (the plug layer turns a stereo
    microphone into mono), or None."""
    lib = libasound()
    card = ctypes.c_int(-1)
    while lib.snd_card_next(ctypes.byref(card)) == 0 and card.value >= 0:
        name = f"plughw:{card.value}"
        pcm = ctypes.c_void_p()
        if lib.snd_pcm_open(ctypes.byref(pcm), name.encode(), _STREAM_CAPTURE, _NONBLOCK) == 0:
            lib.snd_pcm_close(pcm)
            return name
    return None


class AlsaCapture:
    """One ALSA capture stream: mono, 16 bits, near `rate`, the pointer stamped on
    CLOCK_MONOTONIC at every status, running from the moment it is opened.

    A buffer of a second: the reader may be kept from the CPU that long before a sample
    is lost."""

    def __init__(
        self,
        name: str,
        *,
        rate: int = 48_000,
        period_us: int = PERIOD_US,
        buffer_us: int = 1_000_000,
    ) -> None:
        lib = self._lib = libasound()
        self.name = name
        pcm = ctypes.c_void_p()
        _check(
            lib,
            lib.snd_pcm_open(ctypes.byref(pcm), name.encode(), _STREAM_CAPTURE, _NONBLOCK),
            f"capture device {name!r}",
        )
        self._pcm = pcm
        status = ctypes.c_void_p()
        try:
            self.rate, self.period = self._set_hw(rate, period_us, buffer_us)
            self._set_sw()
            _check(lib, lib.snd_pcm_status_malloc(ctypes.byref(status)), "status")
            self._status = status
            self.restart()
        except BaseException:
            lib.snd_pcm_close(pcm)
            raise

    def _set_hw(self, rate: int, period_us: int, buffer_us: int) -> tuple[int, int]:
        lib, pcm = self._lib, self._pcm
        hw = ctypes.c_void_p()
        _check(lib, lib.snd_pcm_hw_params_malloc(ctypes.byref(hw)), "hw params")
        try:
            _check(lib, lib.snd_pcm_hw_params_any(pcm, hw), "hw params")
            _check(lib, lib.snd_pcm_hw_params_set_access(pcm, hw, _ACCESS_RW_INTERLEAVED), "access")
            _check(lib, lib.snd_pcm_hw_params_set_format(pcm, hw, _FORMAT_S16_LE), "S16_LE")
            _check(lib, lib.snd_pcm_hw_params_set_channels(pcm, hw, 1), "mono")
            # A rate the card does not run at would be resampled by the plug layer, whose
            # positions are then the converter's: the card's own nearest rate is used.
            _check(lib, lib.snd_pcm_hw_params_set_rate_resample(pcm, hw, 0), "no resampling")
            value, direction = ctypes.c_uint(rate), ctypes.c_int(0)
            _check(
                lib,
                lib.snd_pcm_hw_params_set_rate_near(
                    pcm, hw, ctypes.byref(value), ctypes.byref(direction)
                ),
                "rate",
            )
            got_rate = value.value
            for setter, wanted in (
                (lib.snd_pcm_hw_params_set_buffer_time_near, buffer_us),
                (lib.snd_pcm_hw_params_set_period_time_near, period_us),
            ):
                value = ctypes.c_uint(wanted)
                _check(lib, setter(pcm, hw, ctypes.byref(value), ctypes.byref(direction)), "size")
            _check(lib, lib.snd_pcm_hw_params(pcm, hw), "hw params")
            frames = ctypes.c_ulong()
            _check(
                lib,
                lib.snd_pcm_hw_params_get_period_size(
                    hw, ctypes.byref(frames), ctypes.byref(direction)
                ),
                "period",
            )
            return got_rate, frames.value
        finally:
            lib.snd_pcm_hw_params_free(hw)

    def _set_sw(self) -> None:
        lib, pcm = self._lib, self._pcm
        sw = ctypes.c_void_p()
        _check(lib, lib.snd_pcm_sw_params_malloc(ctypes.byref(sw)), "sw params")
        try:
            _check(lib, lib.snd_pcm_sw_params_current(pcm, sw), "sw params")
            # The pointer's stamp at every status, on CLOCK_MONOTONIC (alsa-lib's hw plugin
            # asks the kernel for monotonic stamps already; said here, it is not assumed).
            _check(lib, lib.snd_pcm_sw_params_set_tstamp_mode(pcm, sw, _TSTAMP_ENABLE), "tstamp")
            _check(
                lib,
                lib.snd_pcm_sw_params_set_tstamp_type(pcm, sw, _TSTAMP_TYPE_MONOTONIC),
                "monotonic tstamp",
            )
            _check(lib, lib.snd_pcm_sw_params_set_avail_min(pcm, sw, self.period), "avail min")
            _check(lib, lib.snd_pcm_sw_params(pcm, sw), "sw params")
        finally:
            lib.snd_pcm_sw_params_free(sw)

    def _result(self, result: int, what: str) -> int:
        if result == -errno.EAGAIN:
            return 0
        if result in (-errno.EPIPE, -errno.ESTRPIPE):
            raise Overrun(what)
        return _check(self._lib, result, f"{self.name}: {what}")

    def wait(self, timeout_ms: int) -> None:
        self._result(self._lib.snd_pcm_wait(self._pcm, timeout_ms), "wait")

    def read(self, out: "np.ndarray") -> int:
        return self._result(self._lib.snd_pcm_readi(self._pcm, out.ctypes.data, len(out)), "read")

    def status(self) -> PcmStatus | None:
        lib = self._lib
        _check(lib, lib.snd_pcm_status(self._pcm, self._status), f"{self.name}: status")
        if lib.snd_pcm_status_get_state(self._status) != _STATE_RUNNING:
            return None
        stamp = _Timespec()
        lib.snd_pcm_status_get_htstamp(self._status, ctypes.byref(stamp))
        return PcmStatus(
            stamp.tv_sec * NS_PER_S + stamp.tv_nsec, lib.snd_pcm_status_get_delay(self._status)
        )

    def restart(self) -> None:
        _check(self._lib, self._lib.snd_pcm_prepare(self._pcm), f"{self.name}: prepare")
        _check(self._lib, self._lib.snd_pcm_start(self._pcm), f"{self.name}: start")

    def close(self) -> None:
        self._lib.snd_pcm_status_free(self._status)
        self._lib.snd_pcm_close(self._pcm)


class AlsaPlayback:
    """One ALSA playback stream, mono 16 bits at `rate`: a replay on the box's speaker. The
    "default" device is what the system plays to (a USB speaker, HDMI, the jack: wiring.md,
    "A speaker instead of the beeper"), shared through dmix with the beeps' mixer."""

    def __init__(self, name: str = "default", *, rate: int = 48_000) -> None:
        lib = self._lib = libasound()
        self.name = name
        self.rate = rate
        pcm = ctypes.c_void_p()
        _check(
            lib,
            lib.snd_pcm_open(ctypes.byref(pcm), name.encode(), _STREAM_PLAYBACK, 0),
            f"playback device {name!r}",
        )
        self._pcm = pcm
        try:
            # 100 ms of latency: a replay starts that much after its press, and a busy
            # CPU does not make it stutter.
            _check(
                lib,
                lib.snd_pcm_set_params(
                    pcm, _FORMAT_S16_LE, _ACCESS_RW_INTERLEAVED, 1, rate, 1, 100_000
                ),
                f"{name}: mono, 16 bits, {rate} Hz",
            )
        except BaseException:
            lib.snd_pcm_close(pcm)
            raise

    def write(self, samples: "np.ndarray") -> None:
        """Play the int16 samples, waiting while the device's buffer is full; an underrun
        (the writer kept from the CPU) is recovered and playing goes on."""
        lib, pcm = self._lib, self._pcm
        done = 0
        while done < len(samples):
            rest = samples[done:]
            result = lib.snd_pcm_writei(pcm, rest.ctypes.data, len(rest))
            if result < 0:
                _check(lib, lib.snd_pcm_recover(pcm, result, 1), f"{self.name}: write")
                continue
            done += result

    def drain(self) -> None:
        """Until what was written has been heard."""
        self._lib.snd_pcm_drain(self._pcm)

    def stop(self) -> None:
        """Silence now: what was written and not yet heard is dropped."""
        self._lib.snd_pcm_drop(self._pcm)

    def close(self) -> None:
        self._lib.snd_pcm_close(self._pcm)
