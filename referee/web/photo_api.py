"""The phone as the camera (docs/web.md, "Photo"): a judge's photo of the table received,
checked and put where the camera's process reads the phones' photos; and what the camera
reads on the table, for the page.

A photo is hostile until it is one: the PIN's session and the page's origin first, then
its size (Content-Length, and what comes), streamed to a file a bounded buffer at a time,
never whole in memory; its header checked as `referee look` checks a photo's
(photo_header.py: a JPEG or a PNG whole to its end, its pixels within bounds), without
decoding it (the page loads no OpenCV); only then does the daemon hear of it, and the file
take the place of the last photo (a rename: the camera's process reads a whole file or
the one before). One photo arrives at a time, and only where the disk keeps DISK_SPARE
free beside it: the folder holds the latest photo and the one arriving, no more.

The file's time is when its last byte came (the wall clock's, which the camera's process
maps onto its own: a phone's clock is never read). The answer waits, READ_S at most,
for the camera's reading of that photo.
"""

import asyncio
import contextlib
import mmap
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.errors import PhotoFileError
from referee.faces import ATTRIBUTES
from referee.inbox import PageRequest, Photo, Table
from referee.photo_header import JPEG_SOI, photo_size
from referee.store.paths import phone_path

PHOTO_MAX = 16 << 20  # a phone's photo at full size is 2 to 12 MB; the page sends ~0.5 MB
DISK_SPARE = 64 << 20  # left free beside a photo: the ledger's disk comes first
BUFFER = 256 << 10  # what is held of a photo before it goes to the file
ARRIVING = ".arriving"  # no image's suffix: the camera's folder source never reads it
JPEG, PNG = "phone.jpg", "phone.png"
TYPES = ("image/jpeg", "image/png")
READ_S = 10.0  # the camera's process started at the first photo: a few seconds on a Pi
ASK_EVERY_S = 0.1  # the camera reads its folder twice a second
SAME_READING_NS = 10_000_000  # the reading's time against the arrival: two clocks read


class PhotoApi:
    """The photo's and the table's routes. `session`: the PIN's session and the page's
    origin, checked (server.py's, a 401 or 403); `ask`: the daemon's answer to a request
    (server.py's, a 409 or 503); `clock`: CLOCK_MONOTONIC, the readings' clock."""

    def __init__(
        self,
        store: Path,
        session: Callable[[Request], object],
        ask: Callable[[PageRequest], Awaitable[dict[str, Any]]],
        clock: Callable[[], int],
        refused: Callable[[int, str], Exception],
    ) -> None:
        self._folder = phone_path(store)
        self._session, self._ask, self._clock, self._refused = session, ask, clock, refused
        self._arriving = False  # one photo at a time
        self.routes = [
            Route("/api/photo", self.photo, methods=["POST"]),
            Route("/api/table", self.table, methods=["POST"]),
        ]

    async def table(self, request: Request) -> Response:
        """What the camera reads on the table now; a judge's, as the photos are."""
        self._session(request)
        return JSONResponse(_for_page(await self._ask(Table())))

    async def photo(self, request: Request) -> Response:
        self._session(request)
        kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind not in TYPES:
            raise self._refused(415, f"the box reads JPEG and PNG photos, not {kind or '?'}")
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > PHOTO_MAX):
            raise self._refused(413, f"a photo is at most {PHOTO_MAX >> 20} MB")
        if self._arriving:
            raise self._refused(429, "another photo is arriving: send it again in a moment")
        self._arriving = True
        arriving = self._folder / ARRIVING
        try:
            await asyncio.to_thread(self._room)
            arrived_ns = await self._receive(request, arriving)
            try:
                name = await asyncio.to_thread(_checked, arriving)
            except PhotoFileError as err:
                raise self._refused(400, str(err)) from None
            await self._ask(Photo())  # the daemon reads the phones' folder, or says why not
            await asyncio.to_thread(_in_place, arriving, self._folder / name, arrived_ns[1])
        finally:
            try:  # gone before the next photo may arrive under its name
                await asyncio.to_thread(_gone, arriving)
            finally:
                self._arriving = False
        return JSONResponse(_for_page(await self._reading(arrived_ns[0])))

    def _room(self) -> None:
        """The folder made (its owner's alone), and room on its disk for a photo."""
        try:
            self._folder.mkdir(mode=0o700, exist_ok=True)
            disk = os.statvfs(self._folder)
        except OSError as err:
            raise self._refused(503, f"no photo can be kept: {err.strerror or err}") from None
        if disk.f_bavail * disk.f_frsize < PHOTO_MAX + DISK_SPARE:
            raise self._refused(503, "the box's disk is nearly full: no room for a photo")

    async def _receive(self, request: Request, path: Path) -> tuple[int, int]:
        """The body to the file, a buffer at a time; when its last byte came, on the
        monotonic clock and the wall clock."""
        file = await asyncio.to_thread(_create, path)
        try:
            size, held = 0, bytearray()
            async for chunk in request.stream():
                size += len(chunk)
                if size > PHOTO_MAX:
                    raise self._refused(413, f"a photo is at most {PHOTO_MAX >> 20} MB")
                held += chunk
                if len(held) >= BUFFER:
                    await asyncio.to_thread(_write, file, bytes(held))
                    held.clear()
            arrived = self._clock(), time.time_ns()
            await asyncio.to_thread(_write, file, bytes(held))
        except ClientDisconnect:  # stopped before its end (guard.REQUEST_S)
            raise self._refused(400, "the photo stopped before its end") from None
        except OSError as err:
            raise self._refused(503, f"the photo cannot be kept: {err.strerror}") from None
        finally:
            await asyncio.to_thread(os.close, file)
        return arrived

    async def _reading(self, arrived_ns: int) -> dict[str, Any]:
        """The camera's reading of the photo that arrived then, or the latest after READ_S
        (`read`: whether it is that photo's); at once `unread`, why it could not be read,
        when the camera's process could not (its header was whole, its data not)."""
        deadline = self._clock() + int(READ_S * 1e9)
        while True:
            answer = await self._ask(Table())
            said = answer.get("said")
            said = said if isinstance(said, dict) else {}
            at = said.get("t_ns")
            read = isinstance(at, int) and at >= arrived_ns - SAME_READING_NS
            unread = said.get("unread")
            unread = unread if isinstance(unread, dict) else {}
            unread_at, why = unread.get("t_ns"), unread.get("why")
            if isinstance(unread_at, int) and unread_at >= arrived_ns - SAME_READING_NS:
                return {**answer, "read": False, "unread": str(why)}
            if read or self._clock() >= deadline:
                return {**answer, "read": read}
            await asyncio.sleep(ASK_EVERY_S)


def _create(path: Path) -> int:
    # O_NOFOLLOW: a link put in its place is not followed; O_TRUNC: a photo cut off before.
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, 0o600)


def _write(file: int, data: bytes) -> None:
    with memoryview(data) as left:
        while left:
            left = left[os.write(file, left) :]


def _checked(path: Path) -> str:
    """The name the photo takes, once its header says it is a whole JPEG or PNG; else
    PhotoFileError. Mapped, not read: the page's memory holds the headers alone."""
    with path.open("rb") as file:
        if os.fstat(file.fileno()).st_size == 0:
            raise PhotoFileError("the photo: an empty file")
        with mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ) as data:
            photo_size(data, "the photo")
            return JPEG if data[: len(JPEG_SOI)] == JPEG_SOI else PNG


def _in_place(arriving: Path, path: Path, arrived_ns: int) -> None:
    """The photo takes the last one's place, stamped when it arrived; a last one of the
    other kind goes, so that the folder's newest is this one."""
    os.utime(arriving, ns=(arrived_ns, arrived_ns))
    arriving.replace(path)
    _gone(path.with_name(PNG if path.name == JPEG else JPEG))


def _gone(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _for_page(answer: dict[str, Any]) -> dict[str, Any]:
    """The daemon's reading (watching.table) as the page takes it: each card in words."""
    said = answer.get("said")
    seen = said if isinstance(said, dict) else {}
    cards = [
        {
            **{name: values[v] for (name, values), v in zip(ATTRIBUTES, card[:4], strict=True)},
            "sure": bool(card[4]),
        }
        for card in seen.get("cards", [])
    ]
    age_ms = seen.get("age_ms")
    return {
        "camera": seen.get("camera"),
        "watching": seen.get("watching", False),
        "age_s": None if age_ms is None else age_ms / 1000,
        "cards": cards,
        "hint": seen.get("hint"),
        "set": seen.get("set"),
        **({"read": answer["read"]} if "read" in answer else {}),
        **({"unread": answer["unread"]} if "unread" in answer else {}),
    }
