"""The calls' clips (docs/web.md, "Clips"): each game's clips with what they show, their
sound, and its envelope for the page to draw. Read-only, so open to anyone, like the
history; deleting them is the daemon's (server.py asks it).

A name comes from the request, and is a clip's name as ClipStore makes it
(`game00003-call000000012300000`) before it is anything else: never a path. The sound is
opened without following a link, and must be the file the clip's listing found.

Not Starlette's FileResponse for the sound: it answers a Range it cannot take with a
text/plain 400 or 416 (every refusal here is JSON), and opens its path itself after its
own stat, following links. Nor numpy for the envelope: it would be 15 MB of the page's
40 (docs/design.md, "The page"); a clip is at most 20 s, a few hundred thousand samples.
"""

import os
import re
import sys
from array import array
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from referee.audio.clips import ClipStore, Damaged, Kept
from referee.audio.wavfile import WavFile, opened
from referee.errors import AudioFileError
from referee.rules.report import milliseconds
from referee.store.paths import clips_folder
from referee.units import ID_MAX

from .params import query, shown, whole
from .worker import Worker

COLUMNS = 600  # the envelope's, unless asked: as the box's own screen draws it
COLUMNS_MAX = 4096  # a 4K TV's width
CHUNK = 16 * 1024  # bytes of the sound sent, or samples read, at a time
FULL_SCALE = 32768  # a 16-bit sample's
_SOUND = ".wav"
# One range of bytes (RFC 9110): first-last, first- or -suffix; at most 19 digits each.
_RANGE = re.compile(r"bytes=([0-9]{0,19})-([0-9]{0,19})")


class ClipsApi:
    """The routes; `worker` reads the listings and the waveforms, `sounds` the sounds: a
    lane of their own (worker.py)."""

    def __init__(self, store: Path, worker: Worker, sounds: Worker) -> None:
        self._clips = ClipStore(clips_folder(store), max_bytes=0)  # read here, never made
        self._sounds = sounds
        self._run = worker.run
        self.routes = [
            Route("/api/games/{id}/clips", self.game, methods=["GET"]),
            Route("/api/clips/{file}", self.sound, methods=["GET"]),
            Route("/api/clips/{name}/envelope", self.envelope, methods=["GET"]),
        ]

    async def listing(self, game: int) -> dict[str, Any]:
        """What GET /api/games/{id}/clips answers: the game's clips, oldest first."""
        kept = await self._run(self._clips.clips, game)
        return {"game": game, "clips": [_clip_json(k) for k in kept]}

    async def game(self, request: Request) -> Response:
        query(request)
        return JSONResponse(await self.listing(_game_id(request.path_params["id"])))

    async def sound(self, request: Request) -> Response:
        query(request)
        file = request.path_params["file"]
        # Not refused while others wait: an audio element does not ask again (a lookup
        # is a JSON file read, the sound a few pieces of 16 kB). In the sounds' lane, where
        # each connection waits for one piece at most (guard.py bounds the connections).
        name = file.removesuffix(_SOUND) if file.endswith(_SOUND) else ""
        kept = await self._kept(name, sound=True)
        asked = request.headers.get("range"), request.headers.get("if-range")
        return _Sound(kept, self._sounds, *asked)

    async def envelope(self, request: Request) -> Response:
        given = query(request, "columns", "from", "to")
        kept = await self._kept(request.path_params["name"])
        columns = whole(given.get("columns", str(COLUMNS)), "columns", 1, COLUMNS_MAX)
        last = max(kept.samples - 1, 0)
        start = whole(given["from"], "from (a sample)", 0, last) if "from" in given else 0
        end = kept.samples
        if "to" in given:
            end = whole(given["to"], "to (a sample)", start + 1, end)
        try:
            lows, highs = await self._run(envelope, kept.sound, start, end, columns)
        except AudioFileError:  # damaged or gone since it was found
            raise HTTPException(404, f"no clip {shown(kept.clip.name)}") from None
        return JSONResponse(
            {"from": start, "to": end, "columns": columns, "low": lows, "high": highs}
        )

    async def _kept(self, name: str, *, sound: bool = False) -> Kept:
        """The clip of that name; looked up in the sounds' lane for a sound."""
        if sound:
            found = await self._sounds.run(self._clips.kept, name, bounded=False)
        else:
            found = await self._run(self._clips.kept, name)
        if found is None:
            raise HTTPException(404, f"no clip {shown(name)}")
        return found


def _game_id(text: str) -> int:
    return whole(text, "a game's id", 1, ID_MAX)


def _clip_json(kept: Kept | Damaged) -> dict[str, Any]:
    if isinstance(kept, Damaged):  # listed, to be seen and deleted; nothing of it to play
        return {"name": kept.name, "call_ms": milliseconds(kept.call_ns), "damaged": kept.why}
    clip = kept.clip
    return {
        "name": clip.name,
        "call_ms": milliseconds(clip.call_ns),  # the call's at_ms in the game's history
        "first_ms": milliseconds(clip.first_ns),
        "sample_rate": clip.sample_rate,
        "samples": kept.samples,
        "presses": [{"player": m.player, "sample": m.sample} for m in clip.presses],
        "onsets": list(clip.onsets),
        "soft": list(clip.soft),
        "gaps": [list(gap) for gap in clip.gaps],
        "wav": f"/api/clips/{clip.name}{_SOUND}",
        "envelope": f"/api/clips/{clip.name}/envelope",
    }


def envelope(path: Path, start: int, end: int, columns: int) -> tuple[list[float], list[float]]:
    """The lowest and highest sample (at full scale +-1) of each of `columns` equal slices
    of the samples from start to end, as the box's own waveform (audio/replay.py): a slice
    shorter than a sample takes the sample it is in; zeros where there are none. Read
    CHUNK samples at a time, so a request holds 128 kB whatever it asks."""
    lows, highs = [], []
    span = end - start
    buf, at = array("h"), start  # samples read, the first of them at `at`
    with WavFile(path, follow_links=False) as wav:
        if (wav.format.channels, wav.format.width) != (1, 2):
            raise AudioFileError(f"{path}: not the box's mono 16-bit sound")
        for i in range(columns):
            first = start + i * span // columns
            last = min(max(start + (i + 1) * span // columns, first + 1), end)
            low, high, pos = FULL_SCALE, -FULL_SCALE, first
            while pos < last:
                if not at <= pos < at + len(buf):
                    buf, at = array("h", wav.read(pos, min(CHUNK, end - pos))), pos
                    if sys.byteorder == "big":
                        buf.byteswap()  # a WAV's samples are little-endian
                    if not buf:
                        break  # fewer samples than its header says: cut short since
                piece = buf[pos - at : last - at]
                low, high = min(low, min(piece)), max(high, max(piece))
                pos += len(piece)
            if low > high:  # no sample
                low = high = 0
            lows.append(round(low / FULL_SCALE, 4))
            highs.append(round(high / FULL_SCALE, 4))
    return lows, highs


class _Sound(Response):
    """A clip's WAV, whole or the one range of bytes asked (206), for the page's player
    and its download. Opened when it is sent, without following a link: a 404 if it is
    gone since (deleted), or a link or no file now."""

    def __init__(
        self,
        kept: Kept,
        worker: Worker,
        asked: str | None,
        if_range: str | None,
    ) -> None:
        super().__init__()
        self._kept = kept
        self._run = worker.run
        # If-Range asks for the range only if the file is unchanged: this server gives no
        # validator to compare, so it is never known to be: the whole file.
        self._asked = None if if_range is not None else asked

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = self._kept.clip.name
        try:
            fd = await self._run(_open_sound, self._kept.sound, bounded=False)
        except AudioFileError:
            raise HTTPException(404, f"no clip {shown(name)}") from None
        try:
            size = os.fstat(fd).st_size
            asked = _byte_range(self._asked, size)
            first, last = (0, size - 1) if asked is None else asked
            headers = [
                (b"content-type", b"audio/wav"),
                (b"content-length", str(last - first + 1).encode()),
                (b"accept-ranges", b"bytes"),
                (b"content-disposition", f'attachment; filename="{name}{_SOUND}"'.encode()),
                (b"x-content-type-options", b"nosniff"),
            ]
            # A range is a 206 even when it is the whole file: that is how a browser
            # learns that it may seek by asking for ranges (Chromium asks for bytes=0-).
            if asked is not None:
                headers.append((b"content-range", f"bytes {first}-{last}/{size}".encode()))
            status = 200 if asked is None else 206
            await send({"type": "http.response.start", "status": status, "headers": headers})
            at = first
            while scope["method"] != "HEAD" and at <= last:
                size_now = min(CHUNK, last + 1 - at)
                chunk = await self._run(os.pread, fd, size_now, at, bounded=False)
                at += len(chunk)
                more = bool(chunk) and at <= last
                await send({"type": "http.response.body", "body": chunk, "more_body": more})
                if not chunk:
                    break  # cut short since: the client sees fewer bytes than it was told
            if scope["method"] == "HEAD" or first > last:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            os.close(fd)


def _open_sound(path: Path) -> int:
    """The sound's file, opened for reading at once; AudioFileError if it is a link, not a
    plain file (a FIFO would hold the reading thread), or gone."""
    return opened(path, os.O_RDONLY | os.O_NOFOLLOW)


def _byte_range(asked: str | None, size: int) -> tuple[int, int] | None:
    """The one range of bytes asked, first and last (inclusive); None for the whole file.
    A Range of another unit, of several ranges or malformed is ignored, as RFC 9110
    allows; one that starts past the end is a 416."""
    found = None if asked is None else _RANGE.fullmatch(asked.strip())
    if found is None or found[1] == found[2] == "":
        return None
    if found[1] == "":  # the last N bytes
        first, last = max(0, size - int(found[2])), size - 1
        if int(found[2]) == 0:
            first = size  # none of them: unsatisfiable
    else:
        first = int(found[1])
        last = size - 1 if found[2] == "" else min(int(found[2]), size - 1)
        if found[2] != "" and int(found[2]) < first:
            return None  # last before first: not a range at all
    if first >= size:
        raise HTTPException(416, f"the clip has {size} bytes", {"Content-Range": f"bytes */{size}"})
    return first, last
