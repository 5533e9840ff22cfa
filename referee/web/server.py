"""The page's server: the routes of docs/web.md, and nothing else.

Every answer but the page is JSON, every refusal a 4xx with `{"error": "..."}`: a request
can never make a traceback, a file outside the page's folder, nor a write without both
the PIN's session and a same-origin request; and none is answered but to the box's own
names (421).
"""

import asyncio
import hashlib
import ipaddress
import json
import logging
import re
import socket
import time
from base64 import b64encode
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from referee.control import (
    NotRunning,
    RequestError,
    ask,
    clips_request,
    hint_request,
    name_request,
    new_game_request,
    wire,
)
from referee.errors import ConfigError, PinError, StoreError
from referee.inbox import PageRequest, SetRules
from referee.rules import Settings
from referee.seats import colour, symbol
from referee.store.paths import socket_path
from referee.store.pin import DIGITS
from referee.units import MAX_SEATS, NS_PER_S

from .clips_api import ClipsApi
from .follow import Follower, Snapshot, read_players
from .guard import Guard, client_of
from .history_api import HistoryApi
from .login import SESSION_NS, Judges, Turns, Waited
from .photo_api import PhotoApi
from .settings_api import check_change, read_rules
from .snapshots_api import SnapshotsApi
from .worker import Worker

log = logging.getLogger(__name__)

PAGE = Path(__file__).parent / "page"
BODY_MAX = 4096  # bytes: a PIN, a name, a few settings
KEEP_ALIVE_S = 15.0  # a comment on an idle stream, under what proxies and phones drop
# The daemon's answer to a write: longer than its own wait for the disk (control.py).
ASK_S = 3.0
COOKIE = "referee_session"
STREAM_RETRY_S = 5  # a stream refused: when the page asks again
METHODS = ("GET", "HEAD", "POST")
# A write's data names what it changes; anything else is refused before it is parsed.
JSON_TYPE = re.compile(r"application/json\s*(;\s*charset\s*=\s*\"?utf-8\"?\s*)?", re.IGNORECASE)


class Refused(HTTPException):
    """A request turned away: its status and the one line that says why."""


def create_app(
    store: Path,
    pin: Path,
    *,
    rules: Settings | None = None,
    clock: Callable[[], int] = time.monotonic_ns,
    keep_alive_s: float = KEEP_ALIVE_S,
    closing: asyncio.Event | None = None,
    guard: Guard | None = None,
    listen: str | None = None,
    turns: Turns | None = None,
) -> ASGIApp:
    """The app; `rules`: the settings file's (the next game's, but for a phone's); `closing`,
    once set, ends every event stream (the server stops); `guard`: the server's bounds
    (its streams' here); `listen`: the address the settings name, whose host it answers
    to; `turns`: the PIN's (login.py)."""
    file_rules = rules or Settings()
    closing = closing or asyncio.Event()
    guard = guard or Guard()
    judges = Judges(pin, clock, turns)
    follower = Follower(store, clock)
    page = _Page(PAGE)
    worker = Worker()  # the one thread that reads at length
    sounds = Worker("sounds")  # a lane of their own: a download never holds the history up
    history = HistoryApi(store, worker)
    clips = ClipsApi(store, worker, sounds)
    snapshots = SnapshotsApi(store, worker, lambda r: judges.valid(r.cookies.get(COOKIE)))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with _running(follower):
            try:
                yield
            finally:
                worker.close()
                sounds.close()

    async def state(request: Request) -> Response:
        snapshot = follower.snapshot
        return JSONResponse(snapshot.json(clock()), snapshot.status)

    async def events(request: Request) -> Response:
        client = _client(request)
        ended = asyncio.Event()  # another client took its place (guard.Slots)
        place = guard.streams.take(client, ended.set)
        if place is None:
            each, total = guard.streams.each, guard.streams.total
            raise Refused(
                429 if guard.streams.of(client) >= each else 503,
                f"too many event streams: at most {each} a phone, {total} in all",
                {"Retry-After": str(STREAM_RETRY_S)},
            )
        return _Following(
            lambda: guard.streams.give_back(place),
            _stream(follower, clock, keep_alive_s, closing, ended),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def login(request: Request) -> Response:
        _same_origin(request)
        body = await _json_object(request)
        given = body.get("pin")
        if not isinstance(given, str) or len(given) > 4 * DIGITS:
            raise Refused(400, f'"pin" must be the {DIGITS} digits the box shows')
        try:
            token = await judges.login(_client(request), given)
        except Waited as waited:
            raise Refused(429, str(waited), {"Retry-After": str(waited.seconds)}) from None
        except PinError as err:
            log.error("%s", err)
            raise Refused(503, "the box has no PIN it can read: see its log") from None
        if token is None:
            raise Refused(401, "wrong PIN")
        response = JSONResponse({"session": True})
        response.set_cookie(
            COOKIE,
            token,
            max_age=SESSION_NS // NS_PER_S,
            httponly=True,
            samesite="strict",
        )
        return response

    async def logout(request: Request) -> Response:
        token = _session(request, judges)
        judges.logout(token)
        response = JSONResponse({"session": False})
        response.delete_cookie(COOKIE, httponly=True, samesite="strict")
        return response

    async def answer(asked: PageRequest) -> dict[str, Any]:
        """Ask the daemon, and return its answer once it is done: 409 when the table cannot
        take it now, 503 when the box cannot (or no daemon answers)."""
        try:
            answered = await ask(socket_path(store), wire(asked), ASK_S)
        except NotRunning as err:
            raise Refused(503, str(err)) from None
        if (error := answered.get("error")) is not None:
            raise Refused(503 if answered.get("trouble") else 409, str(error))
        return answered

    async def tell(asked: PageRequest) -> str | None:
        """Ask the daemon, and return once it is done with what it said, if anything."""
        said = (await answer(asked)).get("said")
        return None if said is None else str(said)

    async def daemon(asked: PageRequest) -> Response:
        """Ask the daemon, and answer with the state once it is done."""
        await tell(asked)
        await follower.refresh()  # it is on the disk: read now, not at the next wake
        snapshot = follower.snapshot
        return JSONResponse(snapshot.json(clock()), snapshot.status)

    async def names(request: Request) -> Response:
        return await daemon(await _judges_request(request, judges, name_request))

    async def read_settings() -> dict[str, Any]:
        try:
            return await asyncio.to_thread(read_rules, store, file_rules)
        except StoreError as err:
            raise Refused(503, err.reason) from None

    async def settings(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse(await read_settings())
        _session(request, judges)
        values = await _json_object(request)
        try:
            await asyncio.to_thread(check_change, store, file_rules, values)
        except ConfigError as err:
            raise Refused(400, str(err)) from None
        except StoreError as err:
            raise Refused(503, err.reason) from None
        await daemon(SetRules(values))
        return JSONResponse(await read_settings())

    async def new_game(request: Request) -> Response:
        return await daemon(await _judges_request(request, judges, new_game_request))

    async def delete_clips(request: Request) -> Response:
        asked = await _judges_request(request, judges, clips_request)
        await tell(asked)
        return JSONResponse(await clips.listing(asked.game))

    async def hint(request: Request) -> Response:
        asked = await _judges_request(request, judges, hint_request)
        return JSONResponse({"hint": await tell(asked)})

    async def players(request: Request) -> Response:
        try:
            known = await asyncio.to_thread(read_players, store)
        except StoreError as err:
            raise Refused(503, err.reason) from None
        return JSONResponse({"players": known})

    async def session(request: Request) -> Response:
        return JSONResponse({"session": judges.valid(request.cookies.get(COOKIE))})

    async def asset(request: Request) -> Response:
        return page.response(request.path_params.get("name", "index.html"))

    photo = PhotoApi(store, lambda request: _session(request, judges), answer, clock, Refused)
    app = Starlette(
        routes=[
            Route("/", asset, methods=["GET"]),
            Route("/tv", asset, methods=["GET"]),  # the same page: its script sees /tv
            Route("/api/state", state, methods=["GET"]),
            Route("/api/events", events, methods=["GET"]),
            Route("/api/login", login, methods=["POST"]),
            Route("/api/logout", logout, methods=["POST"]),
            Route("/api/session", session, methods=["GET"]),
            Route("/api/names", names, methods=["POST"]),
            Route("/api/settings", settings, methods=["GET", "POST"]),
            Route("/api/newgame", new_game, methods=["POST"]),
            Route("/api/hint", hint, methods=["POST"]),
            Route("/api/players", players, methods=["GET"]),
            *history.routes,
            Route("/api/clips/delete", delete_clips, methods=["POST"]),
            *clips.routes,
            *photo.routes,
            *snapshots.routes,
            Route("/{name}", asset, methods=["GET"]),
        ],
        exception_handlers={HTTPException: _refusal, Exception: _failure},
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False  # a redirect would be neither an answer nor a refusal
    return _own_names(_only_methods(app), listen)


@asynccontextmanager
async def _running(follower: Follower) -> AsyncIterator[None]:
    task = asyncio.create_task(follower.run(), name="follow the store")
    # Serve once the store was read: a request never meets a state not read yet.
    first = asyncio.ensure_future(follower.changed(0))
    await asyncio.wait({task, first}, return_when=asyncio.FIRST_COMPLETED)
    first.cancel()
    if task.done():
        task.result()  # its error, at the start rather than at the first request
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


async def _stream(
    follower: Follower,
    clock: Callable[[], int],
    keep_alive_s: float,
    closing: asyncio.Event,
    ended: asyncio.Event,
) -> AsyncIterator[str]:
    """The state now, then each new one; a comment when nothing came for keep_alive_s.
    Ends when the server stops (`closing`), or another client took its place (`ended`):
    a stream never ends by itself, and one cut off at the graceful shutdown's timeout is
    an error in the log."""
    closed = asyncio.ensure_future(_either(closing, ended))
    waiting: asyncio.Task[Snapshot] | None = None
    try:
        snapshot = follower.snapshot
        yield _event(snapshot, clock())
        while True:
            waiting = waiting or asyncio.ensure_future(follower.changed(snapshot.version))
            done, _ = await asyncio.wait(
                {waiting, closed}, timeout=keep_alive_s, return_when=asyncio.FIRST_COMPLETED
            )
            if closed in done:
                return
            if not done:
                yield ": keep-alive\n\n"
                continue
            snapshot, waiting = waiting.result(), None
            yield _event(snapshot, clock())
    finally:
        closed.cancel()
        if waiting is not None:
            waiting.cancel()


class _Following(StreamingResponse):
    """An event stream, whose place (guard.Slots) is given back however it ends: its
    generator's own `finally` would not run for a stream cut off before it began."""

    def __init__(self, give_back: Callable[[], None], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._give_back = give_back

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._give_back()


async def _either(one: asyncio.Event, other: asyncio.Event) -> None:
    waits = {asyncio.ensure_future(one.wait()), asyncio.ensure_future(other.wait())}
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def _event(snapshot: Snapshot, now_ns: int) -> str:
    kind = "state" if snapshot.error is None else "trouble"
    data = json.dumps(snapshot.json(now_ns), separators=(",", ":"))
    return f"id: {snapshot.version}\nevent: {kind}\ndata: {data}\n\n"


def _client(request: Request) -> str:
    """Who sent the request, for the bounds and the PIN's turns (guard.client_of)."""
    return client_of(request.client.host) if request.client else "?"


def _same_origin(request: Request) -> None:
    """A write must come from the page itself: a browser says where a request comes from
    (Sec-Fetch-Site, Origin), and another site's page cannot say otherwise."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if site is not None and site != "same-origin":
        raise Refused(403, "refused: a write must come from the box's own page")
    host = request.headers.get("host")
    if origin is None or host is None or origin.lower() != f"{request.url.scheme}://{host}".lower():
        raise Refused(403, "refused: a write must come from the box's own page (Origin)")


_Asked = TypeVar("_Asked")  # the request control.py's parser makes of a body


def _session(request: Request, judges: Judges) -> str:
    """The session's token of a write: same origin, and a session the PIN opened."""
    _same_origin(request)
    token = request.cookies.get(COOKIE)
    if token is None or not judges.valid(token):
        raise Refused(401, "the PIN first: POST /api/login")
    return token


async def _judges_request(
    request: Request, judges: Judges, parse: Callable[[dict[str, Any]], _Asked]
) -> _Asked:
    """A judge's write to the daemon: a session the PIN opened, a JSON object that `parse`
    (control.py's) makes a request of, or a 400 with what is wrong in it."""
    _session(request, judges)
    try:
        return parse(await _json_object(request))
    except RequestError as err:
        raise Refused(400, str(err)) from None


async def _json_object(request: Request) -> dict[str, Any]:
    if not JSON_TYPE.fullmatch(request.headers.get("content-type", "")):
        raise Refused(415, "send JSON (Content-Type: application/json)")
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > BODY_MAX):
        raise Refused(413, f"at most {BODY_MAX} bytes")
    body = b""
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > BODY_MAX:
                raise Refused(413, f"at most {BODY_MAX} bytes")
    except ClientDisconnect:  # closed before its end (guard.REQUEST_S): no one to answer
        raise Refused(400, "the request stopped before its end") from None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        raise Refused(400, "not JSON") from None
    if not isinstance(value, dict):
        raise Refused(400, "send a JSON object")
    return value


async def _refusal(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": exc.detail}, exc.status_code, headers=exc.headers)


async def _failure(request: Request, exc: Exception) -> Response:
    log.exception("%s %s", request.method, request.url.path)
    return JSONResponse({"error": "the box failed to answer: see its log"}, 500)


def _own_names(app: ASGIApp, listen: str | None) -> ASGIApp:
    """Only requests to the box's own names and addresses, else 421 (DNS rebinding: a page
    elsewhere whose name now resolves to the box would read it all through a phone, and
    try PINs). Its names: the address the request reached (any of the box's, whatever
    DHCP gave it now), its hostname, that name .local, localhost, and the host `listen`
    names. Looked at for each request: none is cached."""
    named = _host_of(listen) if listen else ""

    async def own(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = b""
            for key, value in scope["headers"]:
                if key == b"host":
                    host = value
                    break
            reached = scope.get("server") or ("",)
            asked = _host_of(host.decode("latin-1"))
            if not asked or asked not in _names(str(reached[0]), named):
                refused = JSONResponse(
                    {"error": "not a name of this box: open the page at its address"}, 421
                )
                await refused(scope, receive, send)
                return
        await app(scope, receive, send)

    return own


# A Host header's value: a name or an IPv4 address, or an IPv6 address in brackets, and a
# port or not. `[web] listen`'s HOST:PORT is one too.
_HOST = re.compile(r"(?:\[([0-9A-Fa-f:.]+)\]|([^:\[\]]*))(?::[0-9]*)?")


def _host_of(value: str) -> str:
    """The host a Host header (or HOST:PORT) names, to compare: lower case, without its
    port nor a final dot, an address as Python writes it (an IPv4-mapped one as IPv4);
    "" if it names none."""
    found = _HOST.fullmatch(value.strip())
    if found is None:
        return ""
    return _address_of(found[1] or found[2] or "")


def _address_of(host: str) -> str:
    host = host.lower().removesuffix(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return "" if address.is_unspecified else str(address)


def _names(reached: str, named: str) -> set[str]:
    """The box's names for a request that reached its address `reached`."""
    hostname = socket.gethostname().lower()
    return {_address_of(reached), hostname, f"{hostname}.local", "localhost", named} - {""}


def _only_methods(app: ASGIApp) -> ASGIApp:
    """GET (and HEAD, its headers alone) and POST; any other method is refused before
    routing, whatever the path."""

    async def only(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in METHODS:
            refused = JSONResponse({"error": "only GET and POST"}, 405, {"Allow": "GET, POST"})
            await refused(scope, receive, send)
            return
        await app(scope, receive, send)

    return only


class _Page:
    """The page's own files, and only them: the names in its folder when the server
    starts; a name is looked up, never joined to a path."""

    def __init__(self, folder: Path) -> None:
        self._files: dict[str, tuple[bytes, dict[str, str]]] = {}
        for path in folder.iterdir():
            if path.suffix == ".html":
                text = path.read_text(encoding="utf-8").replace("/*SEATS*/[]", _SEATS)
                self._files[path.name] = (text.encode(), _html_headers(text))
            elif path.is_file():
                self._files[path.name] = (path.read_bytes(), _OTHER_HEADERS)

    def response(self, name: str) -> Response:
        found = self._files.get(name)
        if found is None:
            raise Refused(404, "no such page")
        body, headers = found
        return Response(body, headers=headers)


# The seats as the box's screens tell them apart (number, symbol and colour).
_SEATS = json.dumps(
    [
        {"symbol": symbol(n), "colour": "#" + bytes(colour(n)).hex()}
        for n in range(1, MAX_SEATS + 1)
    ],
    ensure_ascii=False,
)
_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
_OTHER_HEADERS = {**_HEADERS, "Content-Type": "application/octet-stream"}


def _html_headers(text: str) -> dict[str, str]:
    # The page's own inline style and script, by their hashes, and nothing from elsewhere.
    allowed = {
        kind: " ".join(
            f"'sha256-{b64encode(hashlib.sha256(block.encode()).digest()).decode()}'"
            for block in re.findall(rf"<{kind}>(.*?)</{kind}>", text, re.DOTALL)
        )
        for kind in ("style", "script")
    }
    return {
        **_HEADERS,
        "Content-Type": "text/html; charset=utf-8",
        "Content-Security-Policy": (
            f"default-src 'none'; style-src {allowed['style']}; script-src {allowed['script']};"
            " connect-src 'self'; img-src 'self' data:; media-src 'self'; base-uri 'none';"
            " form-action 'none';"
            " frame-ancestors 'none'"
        ),
        "Referrer-Policy": "no-referrer",
    }
