"""`referee web`: the page's server in a process of its own (docs/design.md, "The page").

The socket is bound before uvicorn starts (page_socket.py), so that an address in use or not
this computer's is one line naming it, as every mistake a user can fix is.
"""

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from referee.page_socket import address
from referee.rules import Settings

from .guard import Acceptor, Guard, GuardedProtocol, Place
from .server import create_app

log = logging.getLogger(__name__)

# How long a stop waits for open event streams before it closes them: they never end by
# themselves, and `systemctl stop` should not wait out its own timeout.
GRACEFUL_S = 1
QUIET_S = 60.0  # after a line of a kind, none of that kind for this long
LINES = 30  # lines every QUIET_S, of every kind together


class PageServer(uvicorn.Server):
    """uvicorn, which accepts its connections through the guard (guard.Acceptor: asyncio's
    server would take every descriptor there is in a flood), and ends the event streams
    when it stops: else it waits for them until its graceful shutdown's timeout, and then
    cuts them off with an error in the log. Run with the listening sockets."""

    def __init__(
        self, config: uvicorn.Config, guard: Guard, closing: asyncio.Event | None = None
    ) -> None:
        super().__init__(config)
        self._guard = guard
        self._closing = closing or asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # its lifespan and state; the accepts are below
        if not sockets:
            raise ValueError("the page's server runs on the sockets bound for it")
        config, state = self.config, self.server_state

        def protocol(place: Place) -> asyncio.Protocol:
            made = config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=state, app_state=self.lifespan.state
            )
            assert isinstance(made, GuardedProtocol)  # uvicorn_config's
            made.place = place
            return made

        for sock in sockets:
            sock.listen(config.backlog)  # a flood waits in the kernel, not a phone's SYN
        self.servers = [Acceptor(sock, self._guard, protocol) for sock in sockets]  # type: ignore[misc]

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._closing.set()
        await super().shutdown(sockets)


def uvicorn_config(app: object, guard: Guard, **more: object) -> uvicorn.Config:
    """The page's uvicorn: its own protocol with the guard's bounds (guard.py), and the
    referee's own logging; run by PageServer."""
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        lifespan="on",
        log_config=None,  # the referee's own logging, to the journal
        access_log=False,  # a phone's every request would fill the journal
        proxy_headers=False,  # nothing stands in front: a header never names the client
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_S,
        http=guard.protocol(),
        **more,  # type: ignore[arg-type]
    )


def serve(
    store: Path, pin: Path, sock: socket.socket, rules: Settings, listen: str | None = None
) -> None:
    """Serve the page on the listening socket until SIGTERM or SIGINT; `rules`: the
    settings file's; `listen`: the address it names (HOST:PORT), whose host the page
    answers to."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(Bursts())
    closing = asyncio.Event()
    guard = Guard()
    guard.fit()
    app = create_app(store, pin, rules=rules, closing=closing, guard=guard, listen=listen)
    log.info("the page at %s (store %s)", address(sock), store)
    PageServer(uvicorn_config(app, guard), guard, closing).run(sockets=[sock])


@dataclass
class _Kind:
    written_at: float
    left_out: int = 0


class Bursts(logging.Filter):
    """The page's log, one line a burst: whatever a phone does, the log grows by a few
    lines a minute. A record of a kind (its logger and its message before its arguments)
    written, none of that kind for QUIET_S; the next one written says how many were left
    out. A traceback is written the first time its kind, exception and place come, later
    ones as the exception's one line. At most LINES lines every QUIET_S in all: the next
    line written after says how many were left out."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._kinds: dict[tuple[str, str], _Kind] = {}
        self._traced: set[tuple[object, ...]] = set()
        self._window_at = -QUIET_S
        self._lines = 0
        self._left_out = 0  # in all, beyond LINES

    def filter(self, record: logging.LogRecord) -> bool:
        now = self._clock()
        key = (record.name, str(record.msg))
        kind = self._kinds.get(key)
        if kind is not None and now - kind.written_at < QUIET_S:
            kind.left_out += 1
            return False
        if now - self._window_at >= QUIET_S:
            self._window_at, self._lines = now, 0
            self._forget(now)
        if self._lines >= LINES:
            self._left_out += 1
            return False
        self._lines += 1
        said = []
        if kind is not None and kind.left_out:
            said.append(f"{kind.left_out} more like it in {now - kind.written_at:.0f} s")
        if self._left_out:
            said.append(f"{self._left_out} other lines left out before it")
            self._left_out = 0
        self._kinds[key] = _Kind(now)
        self._one_trace(record)
        if said:
            record.msg, record.args = f"{record.getMessage()} ({'; '.join(said)})", None
        return True

    def _one_trace(self, record: logging.LogRecord) -> None:
        if not record.exc_info or record.exc_info[1] is None:
            return
        error, trace = record.exc_info[1], record.exc_info[2]
        while trace is not None and trace.tb_next is not None:
            trace = trace.tb_next
        where = (trace.tb_frame.f_code.co_filename, trace.tb_lineno) if trace else None
        traced = (record.name, str(record.msg), type(error), where)
        if traced in self._traced:
            record.msg = f"{record.getMessage()}: {type(error).__name__}: {error}"
            record.args, record.exc_info, record.exc_text = None, None, None
        elif len(self._traced) < LINES * 10:  # kinds of tracebacks: a bound of its own
            self._traced.add(traced)

    def _forget(self, now: float) -> None:
        """Kinds not written for ten windows: the table holds at most LINES a window's."""
        self._kinds = {k: v for k, v in self._kinds.items() if now - v.written_at < 10 * QUIET_S}
