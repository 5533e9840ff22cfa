"""The page's bounds on what a phone may hold (docs/web.md, "Limits"): its connections,
its event streams, and the time a request may take to arrive.

uvicorn has none of its own that would do: its `limit_concurrency` answers a 503 only once
a connection's request came, and has no bound for one client; its keep-alive timeout
starts after an answer and ends at the next byte, so a connection that sends half a
request line, or one byte at a time, is held for good. Nor does asyncio's server: it
accepts up to its backlog (2048) connections at each wake before any of them is looked
at, so a flood takes every descriptor there is before a bound could close one.

So the page accepts its connections itself (Acceptor): a connection past a bound is
closed as it is accepted, before the next is, and costs its descriptor for that moment
only; the others get uvicorn's own protocol (h11), which closes one whose request has not
come whole within REQUEST_S. However many connections a phone opens, the page keeps its
descriptors (the unit's LimitNOFILE) and its memory (MemoryMax) for the others.
"""

import asyncio
import errno
import ipaddress
import logging
import resource
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

CONNECTIONS_EACH = 16  # a browser opens at most 6 to a host: a phone's tabs, many times
CONNECTIONS = 128  # all together: a table's phones and a TV, many times over
STREAMS_EACH = 6  # event streams: one a tab of the page
STREAMS = 32
REQUEST_S = 10.0  # a request arrives whole within this of its connection or its last answer
# Descriptors beside the connections': the listening socket, the store and its -wal and
# -shm, the summaries' cache and its own, inotify, the control socket, the reading
# threads' files. bench/flood.py counts 11 at rest.
SPARE_FDS = 64
FDS_EACH = 2  # a connection's socket, and the sound it sends (a clip's WAV, open)
ACCEPTS = 64  # connections accepted at a wake, before the loop's other work
PAUSE_S = 1.0  # no accepting for this long when the system has no descriptor left


def client_of(host: str) -> str:
    """Who a connection is, for the bounds: its address. An IPv6 address counts by its
    /64 network, all of which one device may take (privacy addresses); an IPv4-mapped one
    as the IPv4 address it is."""
    try:
        address = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return host  # not an address (the tests' client): itself
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        if not address.is_loopback:
            return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


@dataclass(eq=False)
class Place:
    """A connection's or a stream's place; `end` ends what holds it, when another client
    takes its place (nothing, until there is something to end)."""

    client: str
    end: Callable[[], None] = lambda: None
    held: bool = True


@dataclass
class Slots:
    """At most `each` places for a client and `total` in all. When all are taken, a client
    holding at least two fewer than the one holding most takes that one's oldest place:
    a client with many addresses cannot keep out one with a few, nor one with one address
    anyone at all."""

    each: int
    total: int
    _held: dict[str, list[Place]] = field(default_factory=dict, init=False)
    _count: int = field(default=0, init=False)

    def take(self, client: str, end: Callable[[], None] = lambda: None) -> Place | None:
        """A place for the client, or None: it holds `each` already, or all are taken by
        clients holding as few."""
        mine = len(self._held.get(client, ()))
        if mine >= self.each:
            return None
        if self._count >= self.total:
            most = max(self._held.values(), key=len)
            if len(most) < mine + 2:
                return None
            oldest = most[0]
            self.give_back(oldest)
            oldest.end()
        place = Place(client, end)
        self._held.setdefault(client, []).append(place)  # only a client holding a place
        self._count += 1
        return place

    def give_back(self, place: Place) -> None:
        if not place.held:
            return
        place.held = False
        mine = self._held[place.client]
        mine.remove(place)
        if not mine:
            del self._held[place.client]
        self._count -= 1

    def __len__(self) -> int:
        return self._count

    def of(self, client: str) -> int:
        """How many places the client holds."""
        return len(self._held.get(client, ()))


@dataclass
class Guard:
    """The bounds of one server: its connections' places, its streams' and the time a
    request may take to arrive."""

    connections: Slots = field(default_factory=lambda: Slots(CONNECTIONS_EACH, CONNECTIONS))
    streams: Slots = field(default_factory=lambda: Slots(STREAMS_EACH, STREAMS))
    request_s: float = REQUEST_S

    def protocol(self) -> type[asyncio.Protocol]:
        """uvicorn's h11 protocol with these bounds (uvicorn.Config's `http`)."""
        return type("GuardedH11", (GuardedProtocol,), {"guard": self})

    def fit(self, limit: int | None = None) -> None:
        """Fewer connections in all where the process may open too few descriptors for
        them (the unit's LimitNOFILE; `limit`: the soft limit, else this process's)."""
        if limit is None:
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        most = (limit - SPARE_FDS) // FDS_EACH
        if limit != resource.RLIM_INFINITY and most < self.connections.total:
            fitted = max(most, 1)
            log.warning(
                "at most %d descriptors (LimitNOFILE): %d connections in all, not %d",
                limit,
                fitted,
                self.connections.total,
            )
            self.connections.total = fitted


class Acceptor:
    """The listening socket's connections, accepted here (the page's server, serve.py, in
    place of asyncio's): each given a place (Slots) or closed at once; `protocol` makes
    the protocol of one given its place. Stops with `close`, as an asyncio server does."""

    def __init__(
        self,
        sock: socket.socket,
        guard: Guard,
        protocol: Callable[[Place], asyncio.Protocol],
    ) -> None:
        self._sock = sock
        self._guard = guard
        self._protocol = protocol
        self._loop = asyncio.get_running_loop()
        self._tasks: set[asyncio.Task[object]] = set()
        self._closed = False
        sock.setblocking(False)
        self._loop.add_reader(sock.fileno(), self._accept)

    def close(self) -> None:
        self._closed = True
        self._loop.remove_reader(self._sock.fileno())

    def _resume(self) -> None:
        if not self._closed:
            self._loop.add_reader(self._sock.fileno(), self._accept)

    async def wait_closed(self) -> None:
        pass

    def _accept(self) -> None:
        for _ in range(ACCEPTS):
            try:
                conn, peer = self._sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as err:
                log.error("cannot accept a connection: %s", err.strerror or err)
                if err.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Not this server's connections (they are bounded): the system's.
                    self._loop.remove_reader(self._sock.fileno())
                    self._loop.call_later(PAUSE_S, self._resume)
                    return
                if err.errno in (errno.EBADF, errno.EINVAL, errno.ENOTSOCK):
                    self.close()  # no listening socket any more: nothing to accept
                    return
                continue  # that connection's own error (it is gone): the next
            client = client_of(str(peer[0]))
            place = self._guard.connections.take(client)
            if place is None:
                conn.close()
                # Every one, rate-limited in the log (serve.py): one line a burst.
                log.warning(
                    "refused a connection from %s: it holds %d (at most %d a client, %d in all)",
                    client,
                    self._guard.connections.of(client),
                    self._guard.connections.each,
                    self._guard.connections.total,
                )
                continue
            conn.setblocking(False)
            made = self._loop.connect_accepted_socket(partial(self._protocol, place), conn)
            task = self._loop.create_task(self._serve(made, conn, place))
            self._tasks.add(task)  # held until it is done: a task is only weakly kept
            task.add_done_callback(self._tasks.discard)

    async def _serve(self, made: Awaitable[object], conn: socket.socket, place: Place) -> None:
        try:
            await made
        except Exception as err:  # a connection gone before its transport was made, or any
            log.info("a connection from %s failed as it came: %s", place.client, err)
            self._guard.connections.give_back(place)
            conn.close()


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol, which holds the connection's place (given by Acceptor as
    it is made) and times out a request that does not come whole."""

    guard: ClassVar[Guard]
    place: Place
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.place.held:  # another client took its place meanwhile
            transport.close()
            return
        self.place.end = transport.close
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.connections.give_back(self.place)
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def _watch(self) -> None:
        """The deadline runs while a request is awaited or arrives (from the connection, or
        from the last answer): a byte now and then does not move it."""
        awaited = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
        if not awaited or self.transport.is_closing():
            self._disarm()
        elif self._deadline is None:
            self._deadline = self.loop.call_later(self.guard.request_s, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        log.info(
            "closed a connection from %s: no whole request within %g s",
            self.place.client,
            self.guard.request_s,
        )
        self.transport.close()
