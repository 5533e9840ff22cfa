"""The calls' clips on disk: the sound of each call, from the microphone, beside the store.

    clips = ClipStore(clips_folder(store_path), max_bytes=200 * 2**20)
    clips.save(clip, samples)     # a WAV and its JSON, whole or not at all; oldest go first
    clips.clips(game=3)           # what is kept, oldest first: each Kept, or Damaged
    clips.load(clip_name(3, t))   # one call's clip and its samples, found by its name
    clips.delete(game=3)          # or every game's, the damaged ones too
    clips.snapshots(game=3)       # the camera's snapshot of each call: Snapshot, or Damaged

A clip is two files named after its call (`game00003-call000000012300000`): a mono 16-bit
WAV, and a JSON file of what the clip shows: the game, the call (the game time of its
first press, as the ledger keeps it, which is how a call is found again), the game time
of the clip's first sample, each press as a marker (its player and its sample), the
voice onsets found in it and the gaps an overrun left. The JSON is written last: a clip
without one was cut short (a full disk, a power cut) and is not a clip. Nothing else is
ever written here, and nothing of the ledger is: a full disk loses clips, never an input.

Nothing read here is trusted (a worn card flips bits; anyone who may write the folder may
put anything there): a clip is read by its name, its files opened only if they are
regular files (never waiting on a FIFO), refused unread if larger than a clip can be, its
JSON checked key by key and its WAV by wavfile.py. A clip that cannot be read is Damaged,
said once in the log, listed as such and deleted like any other: never an exception.

With a camera over the table, a call has a snapshot too (camera/snapshot.py): a small JPEG
of the layout at its first press, named as its clip (`game00003-call000000012300000.jpg`),
with or without a clip (the microphone off). It counts in the same max_bytes, goes with
its call's clip when the oldest make room, and is deleted with its game's clips. Read as a
clip is: by its name, a regular file only, refused unread if larger than SNAPSHOT_MAX, and
Damaged unless it begins and ends as a JPEG does (a cut-short one ends elsewhere).
"""

import contextlib
import json
import logging
import os
import re
import wave
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from referee.errors import AudioFileError
from referee.units import ID_MAX, MAX_SEATS, NS_PER_S

from .wavfile import MAX_RATE, MIN_RATE, Missing, WavFile, opened

# The page's server lists and serves clips without numpy (15 MB); the settings bring
# gpiozero, which the clips' cutter (cutter.py) needs not either.
if TYPE_CHECKING:
    import numpy as np

    from referee.config import AudioConfig

    from .samples import Sound

log = logging.getLogger(__name__)

META = ".json"
SOUND = ".wav"
SNAPSHOT = ".jpg"  # the camera's snapshot of the call's layout
PART = ".part"  # a file being written; one left behind by a cut is deleted
# A snapshot: some 50 kB (camera/snapshot.py's size and quality); a larger file is no
# snapshot the box wrote, refused before it is read.
SNAPSHOT_MAX = 512 * 1024
_JPEG_START, _JPEG_END = b"\xff\xd8\xff", b"\xff\xd9"
# Clip.name's: a game's id and a game time in ns, at most SQLite's 19 digits each.
_NAME = re.compile(r"game([0-9]{5,19})-call([0-9]{15,19})")
# The longest clip the settings make: clip_before_s and clip_after_s are 10 s at most
# (config/schema.py; tests/test_clips.py checks), and a window may round a sample over.
LONGEST_S = 20.0
# A clip's JSON: 8 presses, a voice onset every 50 ms at most, the gaps of overruns: some
# 20 kB for the longest clip. A larger file is refused before it is read.
META_MAX = 256 * 1024
_HEADER_MAX = 4096  # the box's WAV header is 44 bytes
_I64 = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Marker:
    """A press of the call: who, and the sample of the clip its stamp falls on."""

    player: int
    sample: int


@dataclass(frozen=True, slots=True)
class Clip:
    """What a clip shows, as its JSON file keeps it."""

    game: int
    call_ns: int  # the game time of the call's first press
    sample_rate: int
    first_ns: int  # the game time of the clip's first sample
    presses: tuple[Marker, ...]
    onsets: tuple[int, ...] = ()  # the samples where a voice starts
    soft: tuple[int, ...] = ()  # those of onsets whose start is soft (less sure)
    gaps: tuple[tuple[int, int], ...] = ()  # (the sample after which, samples lost)

    @property
    def name(self) -> str:
        """Sorts as the calls came: the game, then the call's time."""
        return clip_name(self.game, self.call_ns)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str | bytes) -> "Clip":
        """The clip a JSON file keeps; ValueError says what is wrong with it."""
        try:
            raw = json.loads(text)
        except RecursionError:  # nested deeper than the parser goes
            raise ValueError("nested too deep") from None
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        presses = _listed(raw.get("presses"), "presses")
        gaps = _listed(raw.get("gaps"), "gaps")
        if not all(isinstance(m, dict) for m in presses):
            raise ValueError("presses: not a list of objects")
        if not all(isinstance(gap, list) and len(gap) == 2 for gap in gaps):
            raise ValueError("gaps: not a list of pairs")
        return cls(
            game=_whole(raw.get("game"), "game", 1, ID_MAX),
            call_ns=_whole(raw.get("call_ns"), "call_ns", 0),
            sample_rate=_whole(raw.get("sample_rate"), "sample_rate", MIN_RATE, MAX_RATE),
            first_ns=_whole(raw.get("first_ns"), "first_ns"),
            presses=tuple(
                Marker(
                    _whole(m.get("player"), "a press's player", 1, MAX_SEATS),
                    _whole(m.get("sample"), "a press's sample"),
                )
                for m in presses
            ),
            onsets=tuple(_whole(n, "an onset") for n in _listed(raw.get("onsets"), "onsets")),
            # A clip saved before onsets were marked soft has none marked.
            soft=tuple(_whole(n, "a soft onset") for n in _listed(raw.get("soft", []), "soft")),
            gaps=tuple(
                (_whole(at, "a gap's sample", 0), _whole(lost, "a gap's length", 0))
                for at, lost in gaps
            ),
        )


def _whole(value: object, what: str, lo: int = -_I64, hi: int = _I64) -> int:
    """value, if it is a whole number from lo to hi (not a float, nor true or false)."""
    if type(value) is not int or not lo <= value <= hi:
        raise ValueError(f"{what}: not a whole number from {lo} to {hi}")
    return value


def _listed(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{what}: not a list")
    return value


@dataclass(frozen=True, slots=True)
class Kept:
    """A clip on the disk."""

    clip: Clip
    sound: Path
    bytes: int
    samples: int


@dataclass(frozen=True, slots=True)
class Deleted:
    """What `ClipStore.delete` removed: the calls' clips, and their snapshots, apart (a
    call may have either alone)."""

    clips: int
    snapshots: int

    def __str__(self) -> str:
        counted = [
            f"{n} {what}{'' if n == 1 else 's'}"
            for n, what in ((self.clips, "clip"), (self.snapshots, "snapshot"))
            if n
        ]
        return f"{' and '.join(counted)} deleted" if counted else "nothing to delete"


@dataclass(frozen=True, slots=True)
class Damaged:
    """A clip that cannot be read: what its name says, and why."""

    name: str
    game: int
    call_ns: int
    why: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A call's snapshot on the disk, checked: its bytes are the file's as it was read."""

    name: str
    game: int
    call_ns: int
    jpeg: bytes


@dataclass(frozen=True, slots=True)
class ClipWindow:
    """How much of the sound a call's clip holds around its first press."""

    before_ns: int
    after_ns: int

    @classmethod
    def of(cls, audio: "AudioConfig") -> "ClipWindow":
        return cls(round(audio.clip_before_s * NS_PER_S), round(audio.clip_after_s * NS_PER_S))

    def around(self, first_ns: int) -> tuple[int, int]:
        """From and to (monotonic) of the clip of a call first pressed at first_ns."""
        return first_ns - self.before_ns, first_ns + self.after_ns


def clip_of(
    sound: "Sound",
    *,
    game: int,
    call_ns: int,
    origin_ns: int,
    presses: Sequence[tuple[int, int]] = (),
    onsets: Sequence[int] = (),
    soft: Sequence[int] = (),
) -> Clip:
    """What a clip of the ring's sound shows: `presses` as (player, monotonic ns), each on
    its sample; `origin_ns` the monotonic time of the game clock's 0."""
    return Clip(
        game=game,
        call_ns=call_ns,
        sample_rate=sound.rate,
        first_ns=sound.first_ns - origin_ns,
        presses=tuple(Marker(player, sound.index(t_ns)) for player, t_ns in presses),
        onsets=tuple(onsets),
        soft=tuple(soft),
        gaps=tuple((sound.index(gap.start_ns), gap.lost) for gap in sound.gaps),
    )


def clip_name(game: int, call_ns: int) -> str:
    return f"game{game:05d}-call{call_ns:015d}"


def is_clip_name(text: str) -> bool:
    """Whether text is a name clip_name makes, and only such a name: all that a clip's
    file may be called, so that a name from outside is never a path."""
    found = _NAME.fullmatch(text)
    return found is not None and clip_name(int(found[1]), int(found[2])) == text


class ClipStore:
    """The clips folder, at most `max_bytes` of clips: the oldest go first."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self._said: set[str] = set()  # the damaged clips the log was told of
        self._unlisted = False  # the log was told that the folder cannot be listed

    def save(self, clip: Clip, samples: "np.ndarray") -> Path:
        """Write the clip (samples at full scale +-1, or 16-bit ones, written as they
        are), then make room by deleting the oldest ones; OSError if the disk takes it
        not (nothing of it is left then)."""
        self.folder.mkdir(mode=0o750, exist_ok=True)
        sound, meta = self._paths(clip.name)
        if samples.dtype == "int16":  # numpy is not loaded here (the page reads clips)
            pcm = samples.astype("<i2", copy=False)
        else:
            pcm = (samples.clip(-1.0, 1.0) * 32767).round().astype("<i2")
        try:
            _write_atomically(sound, lambda f: _write_wav(f, pcm, clip.sample_rate))
            _write_atomically(meta, lambda f: f.write(clip.to_json().encode()))
        except OSError:
            for path in (sound, meta, *(p.with_name(p.name + PART) for p in (sound, meta))):
                path.unlink(missing_ok=True)
            raise
        self.prune()
        return sound

    def clips(self, game: int | None = None) -> list[Kept | Damaged]:
        """The clips kept, oldest first; those of one game with `game`. One that cannot be
        read is Damaged (and said in the log, once)."""
        return [read for name in self._names(game) if (read := self.read(name)) is not None]

    def read(self, name: str) -> Kept | Damaged | None:
        """The clip of that name, or why it cannot be read; None if there is none (and for
        a name no clip can have, which is never made into a path)."""
        read = self._read(name, samples=False)
        return read[0] if isinstance(read, tuple) else read

    def kept(self, name: str) -> Kept | None:
        """The clip of that name, if it is kept and can be read."""
        read = self.read(name)
        return read if isinstance(read, Kept) else None

    def load(self, name: str) -> tuple[Kept, bytes] | Damaged | None:
        """read(), and the clip's samples (16-bit, little-endian) with it."""
        return self._read(name, samples=True)

    def save_snapshot(self, name: str, jpeg: bytes) -> Path:
        """Write a call's snapshot, then make room as save() does; OSError if the disk
        takes it not (nothing of it is left then)."""
        assert is_clip_name(name), name
        self.folder.mkdir(mode=0o750, exist_ok=True)
        path = self.folder / f"{name}{SNAPSHOT}"
        try:
            _write_atomically(path, lambda f: f.write(jpeg))
        except OSError:
            for gone in (path, path.with_name(path.name + PART)):
                gone.unlink(missing_ok=True)
            raise
        self.prune()
        return path

    def snapshots(self, game: int | None = None) -> list[Snapshot | Damaged]:
        """The snapshots kept, oldest first; those of one game with `game`. One that
        cannot be read is Damaged (and said in the log, once)."""
        names = self._names(game, SNAPSHOT)
        return [read for name in names if (read := self.snapshot(name)) is not None]

    def snapshot(self, name: str) -> Snapshot | Damaged | None:
        """The snapshot of that name, read whole and checked, or why it cannot be; None
        if there is none (and for a name no call can have, never made into a path)."""
        if not is_clip_name(name):
            return None
        path = self.folder / f"{name}{SNAPSHOT}"
        try:
            jpeg = _small_file(path, SNAPSHOT_MAX, "a snapshot")
        except (AudioFileError, ValueError, OSError) as err:
            return self._damaged(name + SNAPSHOT, _why(err, path))
        if jpeg is None:
            return None
        if not (jpeg.startswith(_JPEG_START) and jpeg.endswith(_JPEG_END)):
            return self._damaged(name + SNAPSHOT, "not a whole JPEG (cut short?)")
        found = _NAME.fullmatch(name)
        assert found is not None  # is_clip_name said so
        return Snapshot(name, int(found[1]), int(found[2]), jpeg)

    def _read(self, name: str, *, samples: bool) -> tuple[Kept, bytes] | Damaged | None:
        if not is_clip_name(name):
            return None
        sound, meta = self._paths(name)
        try:
            text = _small_file(meta, META_MAX, "a clip's")
            if text is None:
                return None
            clip = Clip.from_json(text)
        except (AudioFileError, ValueError, OSError) as err:
            return self._damaged(name, f"its JSON: {_why(err, meta)}")
        if clip.name != name:
            return self._damaged(name, f"its JSON says it is {clip.name}")
        most = round((LONGEST_S + 1) * clip.sample_rate)
        try:
            with WavFile(sound, max_bytes=_HEADER_MAX + 2 * most, follow_links=False) as wav:
                fmt = wav.format
                if (fmt.channels, fmt.width, fmt.rate) != (1, 2, clip.sample_rate):
                    raise ValueError(
                        f"{fmt.channels} channel(s) of {8 * fmt.width} bits at {fmt.rate} Hz,"
                        f" not the box's mono 16 bits at {clip.sample_rate} Hz"
                    )
                if fmt.frames > most:
                    raise ValueError(f"{fmt.frames} samples, more than a clip can have")
                pcm = wav.read(0, fmt.frames) if samples else b""
                kept = Kept(clip, sound, wav.size + len(text), fmt.frames)
        except (AudioFileError, ValueError) as err:
            return self._damaged(name, f"its sound: {_why(err, sound)}")
        return kept, pcm

    def _damaged(self, file: str, why: str) -> Damaged:
        """A clip (or, by its file's name, a snapshot) that cannot be read, said in the
        log the first time it is met."""
        if file not in self._said:
            self._said.add(file)
            what = "snapshot" if file.endswith(SNAPSHOT) else "clip"
            log.warning("%s: a damaged %s, skipped: %s", self.folder / file, what, why)
        name = file.removesuffix(SNAPSHOT)
        found = _NAME.fullmatch(name)
        assert found is not None  # a clip's name: _read and snapshot checked it
        return Damaged(name, int(found[1]), int(found[2]), why)

    def delete(self, game: int | None = None) -> "Deleted":
        """Delete the clips and snapshots of a game, or every one, damaged or not: how
        many of each went. One that cannot be deleted does not stop the others: the first
        such OSError is raised once every other is gone."""
        clips = snapshots = 0
        refused = None
        # A sound without its JSON (a cut's) goes as well: one listing of the folder.
        for name in sorted(set(self._names(game, (META, SNAPSHOT, SOUND)))):
            try:
                clip, snapshot = self._remove(name)
            except OSError as err:
                log.warning("clip %s: not deleted: %s", name, err)
                refused = refused or err
            else:
                clips, snapshots = clips + clip, snapshots + snapshot
        if refused is not None:
            raise refused
        return Deleted(clips, snapshots)

    def prune(self) -> None:
        """The oldest clips go until the rest fit in max_bytes; so do parts a cut left.
        What cannot be deleted (a folder named like a clip) is passed over, said in the
        log: the clip just saved is kept all the same.

        By the files' names and sizes alone: reading every clip's JSON and WAV header took
        0.1 s here at every save with 700 clips kept (the default 200 MB)."""
        sizes = {}
        for entry in os.scandir(self.folder):
            with contextlib.suppress(FileNotFoundError):  # deleted since (`referee clips`)
                if entry.name.endswith(PART):
                    self._unlink(Path(entry.path))
                elif entry.name.startswith("game"):
                    sizes[entry.name] = entry.stat(follow_symlinks=False).st_size
        # A clip is its JSON, a snapshot its JPEG; a call's name sorts as the calls came.
        # A sound whose JSON a cut kept from its place is no clip, but takes its room and
        # goes with its call (else each such cut would leave 0.3 MB past the budget).
        kept = sorted(
            {
                name.removesuffix(end)
                for name in sizes
                for end in (META, SNAPSHOT, SOUND)
                if name.endswith(end)
            }
        )
        bytes_of = {
            name: sum(sizes.get(name + end, 0) for end in (META, SNAPSHOT, SOUND)) for name in kept
        }
        total = sum(bytes_of.values())
        for oldest in kept:
            if total <= self.max_bytes:
                break
            sound, meta = self._paths(oldest)
            snapshot = self.folder / f"{oldest}{SNAPSHOT}"
            # The JSON first, as _remove.
            if self._unlink(meta) and self._unlink(sound) and self._unlink(snapshot):
                total -= bytes_of[oldest]
                said = sound if oldest + META in sizes else snapshot
                log.info("clip %s deleted: the clips may take %d bytes", said, self.max_bytes)

    def _unlink(self, path: Path) -> bool:
        """Whether the path is gone (or was not there); what cannot go is said in the log."""
        try:
            path.unlink(missing_ok=True)
        except OSError as err:
            if path.name not in self._said:
                self._said.add(path.name)
                log.warning("%s: cannot be deleted: %s", path, err.strerror or err)
            return False
        return True

    def _names(self, game: int | None = None, end: str | tuple[str, ...] = META) -> list[str]:
        """The clips' names (their JSON files'; the snapshots' with end=SNAPSHOT; a call's
        every file's with a tuple of ends, a name once a file), oldest first; of one game's
        calls only with `game`. Whatever else the folder holds is passed over unread."""
        ends = (end,) if isinstance(end, str) else end
        prefix = "game" if game is None else clip_name(game, 0).partition("call")[0]
        try:
            with os.scandir(self.folder) as entries:
                names = [
                    name
                    for entry in entries
                    if entry.name.startswith(prefix)
                    for one in ends
                    if entry.name.endswith(one)
                    if is_clip_name(name := entry.name.removesuffix(one))
                ]
        except FileNotFoundError:
            return []
        except OSError as err:
            if not self._unlisted:
                self._unlisted = True
                log.warning("%s: the clips cannot be listed: %s", self.folder, err.strerror or err)
            return []
        return sorted(names)

    def _paths(self, name: str) -> tuple[Path, Path]:
        return self.folder / f"{name}{SOUND}", self.folder / f"{name}{META}"

    def _remove(self, name: str) -> tuple[bool, bool]:
        """Whether a clip, and whether a snapshot, of that name went."""
        sound, meta = self._paths(name)
        clip = _unlinked(meta)  # first: without it the sound is no clip
        sound.unlink(missing_ok=True)
        return clip, _unlinked(self.folder / f"{name}{SNAPSHOT}")


def _unlinked(path: Path) -> bool:
    """Whether the file was there, and is gone."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def _small_file(path: Path, most: int, what: str) -> bytes | None:
    """A small file read whole, None if there is none: a regular file (opened so that a
    FIFO or a link cannot hold or fool the reader) of at most `most` bytes, else
    AudioFileError, ValueError or OSError saying why."""
    try:
        fd = opened(path, os.O_RDONLY | os.O_NOFOLLOW)
    except Missing:
        return None
    with os.fdopen(fd, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size > most:
            raise ValueError(f"{size} bytes, more than {what} can be ({most})")
        return file.read(most + 1)


def _why(err: Exception, path: Path) -> str:
    """What is wrong, without the path the error names (the clip's is said)."""
    if isinstance(err, OSError):
        return err.strerror or str(err)
    return str(err).removeprefix(f"{path}: ")


def _write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Into a part file, synced, then renamed over the path: whole or not there."""
    part = path.with_name(path.name + PART)
    with part.open("wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    part.replace(path)


def _write_wav(f: BinaryIO, pcm: "np.ndarray", rate: int) -> None:
    with wave.open(f, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm.tobytes())
