"""A WAV file read without trusting it: the one reader of the clips' sounds (the clips'
listing, REPLAY, the page) and of `referee listen`'s recordings.

    with WavFile(path, max_bytes=...) as wav:   # AudioFileError: `FILE: what`, at once
        wav.format.rate, wav.format.frames
        wav.read(first, count)                  # the frames' bytes, as they are in the file

The standard library's `wave` trusts the header: one flipped bit in the `fmt ` chunk's size
made it raise RuntimeError (not its own error) from deep in its chunk reader, and a data
chunk that claims 4 GB is read as such. Here every chunk's size is checked against the
file's before anything is read past the header, only a regular file is opened (without
waiting: a FIFO would block its reader until something writes to it), a file larger than
`max_bytes` is refused before its header is read, and the frames are read a piece at a
time where the caller asks. Nothing here imports numpy: the page's server reads clips.
"""

import errno
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from referee.errors import AudioFileError
from referee.linux.files import NotARegularFile, open_regular

# The rates a sound card records at: below, the detector's frame is no longer a frame
# (`referee listen` gave a traceback at 1 to 62 Hz); above, no card.
MIN_RATE = 1_000
MAX_RATE = 768_000
MAX_CHANNELS = 64
_WIDTHS = (1, 2, 3, 4)  # bytes a sample: 8, 16, 24 or 32-bit PCM
_PCM = 1
_EXTENSIBLE = 0xFFFE
_FMT_MAX = 1024  # a `fmt ` chunk's body: 16 for PCM, 40 for WAVE_FORMAT_EXTENSIBLE
_CHUNKS_MAX = 256  # chunks looked at before the data chunk (LIST, bext, JUNK...)


class Missing(AudioFileError):
    """No file at that path."""


@dataclass(frozen=True, slots=True)
class WavFormat:
    channels: int
    width: int  # bytes a sample
    rate: int  # frames a second
    frames: int
    data_at: int  # the file's offset of the first frame

    @property
    def block(self) -> int:
        """Bytes a frame."""
        return self.channels * self.width


class WavFile:
    """An open WAV file of PCM samples, its header checked against its size."""

    def __init__(
        self, path: Path, *, max_bytes: int | None = None, follow_links: bool = True
    ) -> None:
        """max_bytes: a larger file is refused before it is read; follow_links=False: a
        link is refused (a clip is a file the box wrote)."""
        self.path = path
        flags = os.O_RDONLY | (0 if follow_links else os.O_NOFOLLOW)
        self._fd = opened(path, flags)
        try:
            self.size = os.fstat(self._fd).st_size
            if max_bytes is not None and self.size > max_bytes:
                raise AudioFileError(f"{path}: {self.size} bytes, more than {max_bytes}")
            self.format = _header(self._fd, self.size, path)
        except BaseException:
            os.close(self._fd)
            raise

    def fileno(self) -> int:
        return self._fd

    def read(self, first: int, count: int) -> bytes:
        """Frames first to first + count (as many as there are), as bytes."""
        fmt = self.format
        first = max(0, min(first, fmt.frames))
        count = max(0, min(count, fmt.frames - first))
        want = count * fmt.block
        try:
            data = os.pread(self._fd, want, fmt.data_at + first * fmt.block)
        except OSError as err:
            raise AudioFileError(f"{self.path}: cannot read it ({err.strerror or err})") from None
        if len(data) < want:  # cut short since its size was looked at
            raise AudioFileError(f"{self.path}: cut short while it was read")
        return data

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "WavFile":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def opened(path: Path, flags: int = os.O_RDONLY) -> int:
    """A descriptor of the regular file at path, at once whatever is there;
    AudioFileError that names what is there instead (Missing: nothing)."""
    try:
        return open_regular(path, flags)
    except FileNotFoundError:
        raise Missing(f"{path}: no such file") from None
    except NotARegularFile as err:
        if "directory" in (err.strerror or ""):
            raise AudioFileError(f"{path}: a folder, not a WAV file") from None
        raise AudioFileError(f"{path}: {err.strerror}") from None
    except OSError as err:
        if err.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise AudioFileError(f"{path}: a link, not a file the box wrote") from None
        raise AudioFileError(f"{path}: cannot read it ({err.strerror or err})") from None


def _header(fd: int, size: int, path: Path) -> WavFormat:
    """The format and where the frames are, each chunk's size checked against the file's."""

    def pread(count: int, at: int) -> bytes:
        try:
            return os.pread(fd, count, at)
        except OSError as err:
            raise AudioFileError(f"{path}: cannot read it ({err.strerror or err})") from None

    riff = pread(12, 0)
    if len(riff) < 12 or riff[:4] != b"RIFF" or riff[8:] != b"WAVE":
        raise _bad(path, "no RIFF WAVE header")
    at, fmt = 12, b""
    for _ in range(_CHUNKS_MAX):
        head = pread(8, at)
        if len(head) < 8:
            raise _bad(path, "no data chunk" if fmt else "no fmt chunk")
        name, length = struct.unpack("<4sI", head)
        body_at = at + 8
        if length > size - body_at:
            raise _bad(path, f"its {_shown(name)} chunk claims {length} bytes, past the file's end")
        if name == b"data":
            if not fmt:
                raise _bad(path, "its data comes before its format")
            return _format(path, fmt, length, body_at)
        if name == b"fmt ":
            if not 16 <= length <= _FMT_MAX:
                raise _bad(path, f"a fmt chunk of {length} bytes")
            fmt = pread(length, body_at)
            if len(fmt) < length:
                raise _bad(path, "cut short in its fmt chunk")
        at = body_at + length + length % 2  # a chunk is padded to an even size
    raise _bad(path, f"no data chunk in its first {_CHUNKS_MAX} chunks")


def _format(path: Path, fmt: bytes, length: int, data_at: int) -> WavFormat:
    """What the fmt chunk says, checked: PCM of 8 to 32 bits, a rate a card records at."""
    kind, channels, rate, _, block, bits = struct.unpack("<HHIIHH", fmt[:16])
    if kind == _EXTENSIBLE and len(fmt) >= 26:
        kind = struct.unpack("<H", fmt[24:26])[0]  # the sub-format GUID's first two bytes
    if kind != _PCM:
        raise _bad(path, f"format {kind}, not PCM")  # 3 is floating point
    if not 1 <= channels <= MAX_CHANNELS:
        raise _bad(path, f"{channels} channels; 1 to {MAX_CHANNELS}")
    width = block // channels
    if block % channels or width not in _WIDTHS or bits > 8 * width:
        raise _bad(path, f"{bits}-bit samples in {block}-byte frames; 8, 16, 24 or 32-bit PCM")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise _bad(path, f"a rate of {rate} Hz; {MIN_RATE} to {MAX_RATE}")
    return WavFormat(channels, width, rate, length // block, data_at)


def _bad(path: Path, what: str) -> AudioFileError:
    return AudioFileError(f"{path}: not a PCM WAV file that can be read ({what})")


def _shown(name: bytes) -> str:
    """A chunk's name as it may be printed on one line."""
    return repr(name.decode("latin-1"))
