"""The calls' clips on disk: the sound of each call, from the microphone, beside the store.

    clips = ClipStore(clips_folder(store_path), max_bytes=200 * 2**20)
    clips.save(clip, samples)     # a WAV and its JSON, whole or not at all; oldest go first
    clips.clips(game=3)           # what is kept, oldest first
    clips.delete(game=3)          # or every game's

A clip is two files named after its call (`game00003-call000000012300000`): a mono 16-bit
WAV, and a JSON file of what the clip shows: the game, the call (the game time of its
first press, as the ledger keeps it, which is how a call is found again), the game time
of the clip's first sample, each press as a marker (its player and its sample), the
voice onsets found in it and the gaps an overrun left. The JSON is written last: a clip
without one was cut short (a full disk, a power cut) and is not a clip. Nothing else is
ever written here, and nothing of the ledger is: a full disk loses clips, never an input.
"""

import contextlib
import json
import logging
import os
import re
import wave
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from referee.units import NS_PER_S

# The page's server lists and serves clips without numpy (15 MB); the settings bring
# gpiozero, which the clips' cutter (cutter.py) needs not either.
if TYPE_CHECKING:
    import numpy as np

    from referee.config import AudioConfig

    from .samples import Sound

log = logging.getLogger(__name__)

FOLDER = "clips"
META = ".json"
SOUND = ".wav"
PART = ".part"  # a file being written; one left behind by a cut is deleted
# Clip.name's: a game's id and a game time in ns, at most SQLite's 19 digits each.
_NAME = re.compile(r"game([0-9]{5,19})-call([0-9]{15,19})")


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
    def from_json(cls, text: str) -> "Clip":
        raw = json.loads(text)
        return cls(
            game=int(raw["game"]),
            call_ns=int(raw["call_ns"]),
            sample_rate=int(raw["sample_rate"]),
            first_ns=int(raw["first_ns"]),
            presses=tuple(Marker(int(m["player"]), int(m["sample"])) for m in raw["presses"]),
            onsets=tuple(int(n) for n in raw["onsets"]),
            # A clip saved before onsets were marked soft has none marked.
            soft=tuple(int(n) for n in raw.get("soft", ())),
            gaps=tuple((int(at), int(lost)) for at, lost in raw["gaps"]),
        )


@dataclass(frozen=True, slots=True)
class Kept:
    """A clip on the disk."""

    clip: Clip
    sound: Path
    bytes: int
    samples: int


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
    sample_rate: int,
    presses: Sequence[tuple[int, int]] = (),
    onsets: Sequence[int] = (),
    soft: Sequence[int] = (),
) -> Clip:
    """What a clip of the ring's sound shows: `presses` as (player, monotonic ns), each on
    its sample; `origin_ns` the monotonic time of the game clock's 0."""
    return Clip(
        game=game,
        call_ns=call_ns,
        sample_rate=sample_rate,
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


def clips_folder(store_path: Path) -> Path:
    """Beside the store, so that whoever may read the games may hear their calls."""
    return store_path.parent / FOLDER


class ClipStore:
    """The clips folder, at most `max_bytes` of clips: the oldest go first."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

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

    def clips(self, game: int | None = None) -> list[Kept]:
        """The clips kept, oldest first; those of one game with `game`. A clip whose JSON
        cannot be read is left out, and said in the log."""
        kept = []
        for meta in sorted(self._metas(game)):
            read = self._read(meta)
            if read is not None and (game is None or read.clip.game == game):
                kept.append(read)
        return kept

    def kept(self, name: str) -> Kept | None:
        """The clip of that name, if it is kept and can be read; None for a name no clip
        can have, which is never made into a path."""
        if not is_clip_name(name):
            return None
        meta = self._paths(name)[1]
        return self._read(meta) if meta.exists() else None

    def _read(self, meta: Path) -> Kept | None:
        """The clip of that JSON file, or None (said in the log)."""
        sound = meta.with_suffix(SOUND)
        try:
            if meta.is_symlink() or sound.is_symlink():
                raise ValueError("a link: the box writes its clips as files")
            clip = Clip.from_json(meta.read_text(encoding="utf-8"))
            size = sound.stat().st_size + meta.stat().st_size
            with wave.open(str(sound), "rb") as wav:
                frames = wav.getnframes()
        except (OSError, ValueError, KeyError, TypeError, EOFError, wave.Error) as err:
            log.warning("%s: not a clip that can be read: %s", meta, err)
            return None
        if clip.name != meta.stem:
            log.warning("%s: not a clip that can be read: it says it is %s", meta, clip.name)
            return None
        return Kept(clip, sound, size, frames)

    def delete(self, game: int | None = None) -> int:
        """Delete the clips of a game, or every clip: how many went."""
        gone = 0
        for kept in self.clips(game):
            self._remove(kept.clip.name)
            gone += 1
        return gone

    def prune(self) -> None:
        """The oldest clips go until the rest fit in max_bytes; so do parts a cut left.

        By the files' names and sizes alone: reading every clip's JSON and WAV header took
        0.1 s here at every save with 700 clips kept (the default 200 MB)."""
        sizes = {}
        for entry in os.scandir(self.folder):
            if entry.name.endswith(PART):
                Path(entry.path).unlink(missing_ok=True)
            elif entry.name.startswith("game"):
                with contextlib.suppress(FileNotFoundError):  # deleted since (`referee clips`)
                    sizes[entry.name] = entry.stat().st_size
        # A clip is its JSON; its name sorts as the calls came.
        kept = sorted(name.removesuffix(META) for name in sizes if name.endswith(META))
        bytes_of = {name: sizes[name + META] + sizes.get(name + SOUND, 0) for name in kept}
        total = sum(bytes_of.values())
        for oldest in kept:
            if total <= self.max_bytes:
                break
            self._remove(oldest)
            total -= bytes_of[oldest]
            log.info(
                "clip %s deleted: the clips may take %d bytes",
                self._paths(oldest)[0],
                self.max_bytes,
            )

    def _metas(self, game: int | None = None) -> Iterator[Path]:
        """The clips' JSON files; of one game's calls only, by their names, with `game`."""
        if self.folder.is_dir():
            prefix = "game" if game is None else clip_name(game, 0).partition("call")[0]
            yield from self.folder.glob(f"{prefix}*{META}")

    def _paths(self, name: str) -> tuple[Path, Path]:
        return self.folder / f"{name}{SOUND}", self.folder / f"{name}{META}"

    def _remove(self, name: str) -> None:
        sound, meta = self._paths(name)
        meta.unlink(missing_ok=True)  # first: without it the sound is no clip
        sound.unlink(missing_ok=True)


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
