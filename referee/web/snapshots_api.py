"""The calls' snapshots (docs/web.md, "Snapshots"): the camera's picture of the layout at
each call's first press (camera/snapshot.py), listed and served to a judge signed in
alone. Unlike the clips, they show the table itself: the camera's frames never leave the
box but as these, and only to a session the PIN opened. Deleted with the game's clips
(POST /api/clips/delete, the daemon's).

A name comes from the request, and is a call's name as ClipStore makes it before it is
anything else: never a path. The file is read whole (a snapshot is some tens of kB,
SNAPSHOT_MAX at most) and checked (clips.py) before a byte of it is sent.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.audio.clips import SNAPSHOT, ClipStore, Damaged, Snapshot
from referee.rules.report import milliseconds
from referee.store.paths import clips_folder
from referee.units import ID_MAX

from .params import query, shown, whole
from .worker import Worker


class SnapshotsApi:
    """The routes; `signed_in(request)`: its cookie is a session the PIN opened."""

    def __init__(self, store: Path, worker: Worker, signed_in: Callable[[Request], bool]) -> None:
        self._clips = ClipStore(clips_folder(store), max_bytes=0)  # read here, never made
        self._run = worker.run
        self._signed_in = signed_in
        self.routes = [
            Route("/api/games/{id}/snapshots", self.game, methods=["GET"]),
            Route("/api/snapshots/{file}", self.image, methods=["GET"]),
        ]

    def _judge(self, request: Request) -> None:
        """A judge's, or 401 before anything is looked up: what a game's snapshots are,
        and whether there are any, is theirs too. A GET carries no Origin to check: the
        cookie (SameSite=Strict) is not sent from another site's page."""
        if not self._signed_in(request):
            raise HTTPException(401, "the PIN first: POST /api/login")

    async def game(self, request: Request) -> Response:
        self._judge(request)
        query(request)
        game = whole(request.path_params["id"], "a game's id", 1, ID_MAX)
        kept = await self._run(self._clips.snapshots, game)
        return JSONResponse(
            {"game": game, "snapshots": [_snapshot_json(k) for k in kept]},
            headers={"Cache-Control": "no-store"},
        )

    async def image(self, request: Request) -> Response:
        self._judge(request)
        query(request)
        file = request.path_params["file"]
        name = file.removesuffix(SNAPSHOT) if file.endswith(SNAPSHOT) else ""
        found = await self._run(self._clips.snapshot, name)
        if not isinstance(found, Snapshot):  # none, or damaged: nothing to show
            raise HTTPException(404, f"no snapshot {shown(name or file)}")
        return Response(
            found.jpeg,
            media_type="image/jpeg",
            headers={
                "Content-Disposition": f'inline; filename="{name}{SNAPSHOT}"',
                "Cache-Control": "no-store",  # a shared phone's cache keeps no table
                "X-Content-Type-Options": "nosniff",
            },
        )


def _snapshot_json(kept: Snapshot | Damaged) -> dict[str, Any]:
    said: dict[str, Any] = {"name": kept.name, "call_ms": milliseconds(kept.call_ns)}
    if isinstance(kept, Damaged):  # listed, to be seen and deleted; nothing of it to show
        return {**said, "damaged": kept.why}
    return {**said, "bytes": len(kept.jpeg), "jpg": f"/api/snapshots/{kept.name}{SNAPSHOT}"}
