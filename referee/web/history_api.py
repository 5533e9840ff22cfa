"""The routes of the history, the stats and the exports (docs/web.md): read-only, so open
to anyone, like the state.

A request can make the server replay only games it has not replayed yet (referee/history/
book.py keeps each one's summary in the page's cache file by its version), and only so
many of them: the games of one
page, or COUNT_BUDGET of a store being counted for the stats, then a 503 that says how
far it has come. All of it runs on the server's one reading thread (worker.py), so that
neither a flood of requests nor a long count can hold up the live page's reads.
"""

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from referee.history.as_json import game_json, stats_json, timeline_json
from referee.history.book import History
from referee.history.export import (
    CALL_COLUMNS,
    GAME_COLUMNS,
    STATS_COLUMNS,
    Row,
    as_csv,
    as_json,
    call_rows,
    csv_header,
    games_piece,
    stats_rows,
)
from referee.history.stats import series, started_games, stats
from referee.store.paths import summaries_path
from referee.units import ID_MAX

from .params import query, whole
from .worker import Worker

LIMIT = 20  # games a page, unless asked
LIMIT_MAX = 100
COUNT_BUDGET = 100  # games replayed for one request that counts them all (see design.md)
RETRY_S = 2
EXPORT_GAMES = 200  # the games of a piece of the games' export, made at once
JSON = "application/json"
_MEDIA = {"csv": "text/csv", "json": JSON}
_EXPORTS = {"games", "calls", "stats"}


class HistoryApi:
    def __init__(self, store: Path, worker: Worker) -> None:
        self._history = History(store, summaries_path(store))
        self._run = worker.run
        self.routes = [
            Route("/api/games", self.games, methods=["GET"]),
            Route("/api/games/{id}", self.game, methods=["GET"]),
            Route("/api/stats", self.stats, methods=["GET"]),
            Route("/api/export/{name}", self.export, methods=["GET"]),
        ]

    async def games(self, request: Request) -> Response:
        before, limit = _paging(request)
        page = await self._run(self._history.page, before, limit)
        return JSONResponse({"games": [game_json(g) for g in page.games], "next": page.next})

    async def game(self, request: Request) -> Response:
        query(request)
        game_id = whole(request.path_params["id"], "a game's id", 1, ID_MAX)
        found = await self._run(self._history.game, game_id)
        if found is None:
            raise HTTPException(404, f"no game {game_id} in this store")
        return JSONResponse(timeline_json(*found))

    async def stats(self, request: Request) -> Response:
        query(request)

        def answer() -> Response:
            cache = self._history.cache
            players = ((p, series(cache, p)) for p in stats(cache))
            return Response(stats_json(players, started_games(cache)), media_type=JSON)

        return await self._run(self._counted, answer)

    async def export(self, request: Request) -> Response:
        name = request.path_params["name"]
        what, _, kind = name.partition(".")
        if what not in _EXPORTS or kind not in ("csv", "json"):
            raise HTTPException(404, "no such export: games, calls or stats, .csv or .json")
        headers = {"Content-Disposition": f'attachment; filename="referee-{name}"'}
        if what == "calls":
            before, limit = _paging(request)
            page = await self._run(self._history.page, before, limit, timelines=True)
            rows = call_rows((g, page.timelines[g.game.id]) for g in page.games)
            if page.next is not None:
                headers["Link"] = f'</api/export/{name}?before={page.next}>; rel="next"'
            return _exported(kind, CALL_COLUMNS, rows, headers, next=page.next)
        query(request)

        def answer() -> Response:
            if what == "games":  # counted: sent a piece at a time (_games_pieces)
                return StreamingResponse(
                    self._games_pieces(kind), media_type=_MEDIA[kind], headers=headers
                )
            players = stats(self._history.cache)
            return _exported(kind, STATS_COLUMNS, stats_rows(players), headers)

        return await self._run(self._counted, answer)

    async def _games_pieces(self, kind: str) -> AsyncIterator[str]:
        """The games' export, EXPORT_GAMES games a piece, each made on the reading thread:
        a store's every game is a file of megabytes, never held whole."""
        csv = kind == "csv"
        yield csv_header(GAME_COLUMNS) if csv else '{"rows": ['
        after = 0
        while True:
            piece, last = await self._run(
                games_piece, self._history.cache, kind, after, EXPORT_GAMES, bounded=False
            )
            if not last:
                break
            yield piece if csv or not after else ", " + piece  # the JSON's objects joined
            after = last
        if not csv:
            yield "]}"

    def _counted(self, answer: Callable[[], Response]) -> Response:
        """On the reading thread: the answer added up from the cache of every game's
        summary, once counted (adding up thousands of games is work the live page's reads
        must not wait behind, and the cache's connection is that thread's), else a 503
        that says how far the count has come."""
        counted = self._history.count(COUNT_BUDGET)
        if not counted.done:
            raise HTTPException(
                503,
                f"counting the games: {counted.counted} of {counted.total} so far; ask again",
                {"Retry-After": str(RETRY_S)},
            )
        return answer()


def _exported(
    kind: str, columns: Sequence[str], rows: Iterable[Row], headers: dict[str, str], **more: object
) -> Response:
    """An export's file: its CSV, or its JSON twin with what else it says (`next`)."""
    if kind == "json":
        return Response(as_json(rows, **more), media_type=JSON, headers=headers)
    return Response(as_csv(columns, rows), media_type=_MEDIA[kind], headers=headers)


def _paging(request: Request) -> tuple[int | None, int]:
    given = query(request, "before", "limit")
    before = given.get("before")
    limit = given.get("limit")
    return (
        None if before is None else whole(before, "before (a game's id)", 1, ID_MAX),
        LIMIT if limit is None else whole(limit, "limit", 1, LIMIT_MAX),
    )
