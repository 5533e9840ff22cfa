"""The latest game as the page shows it, read again each time the daemon writes the store.

The page's server never writes the store and never talks to the daemon to read it: it
reads the SQLite file as `referee state` does (Store.open_readonly; WAL lets a reader
read beside the writer), a connection for each read, closed at once. What wakes it is
the kernel: inotify on the store's folder (store/watch.py), for the -wal file the daemon
appends every input to and for the files made, deleted or moved there (the daemon
starting or stopping). At rest it does nothing. Where there is no inotify it looks once a
second.

Each read replays the game (`StoredGame`'s inputs through the rules) in a thread of its
own, off the event loop, and a state that differs from the one before is a new version:
every stream waiting for one is woken.
"""

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import StoreError
from referee.linux.files import open_regular
from referee.rules import State, replay
from referee.store import lock as store_lock
from referee.store.paths import shm_path, wal_path
from referee.store.store import Store
from referee.store.watch import StoreWatch
from referee.units import NS_PER_MS, NS_PER_S

log = logging.getLogger(__name__)

# A write to the -wal is seen before readers can see it: the writer syncs the -wal, and only
# then publishes its commit in the -shm's wal-index header, which no inotify event tells.
# After a wake whose read found nothing new, that header is looked at this often (a read
# of 48 bytes), for as long as an SD card's slowest syncs, and the store read once it moves.
COMMIT_POLL_S = 0.005
COMMIT_WAIT_NS = 2 * NS_PER_S
# SQLite's wal-index header, the first 48 bytes of the -shm (sqlite.org/walformat.html):
# its change counter and last frame move at every commit.
WAL_INDEX_HEADER = 48


@dataclass(frozen=True)
class Snapshot:
    """What the page is shown: the state's JSON (`body`), or why there is none (`error`).

    `status` is the HTTP status that goes with it; `read_ns` when it was read (monotonic),
    from which the timers' time left is counted down while the daemon runs them.
    """

    version: int
    status: int
    body: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    read_ns: int = 0
    running: bool = False  # the daemon has the store open: its timers run

    def json(self, now_ns: int) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        timers = self.body["timers"]
        left = timers["left_ms"]
        if self.running:
            gone_ms = (now_ns - self.read_ns) / NS_PER_MS
            left = {k: round(max(0.0, v - gone_ms), 1) for k, v in left.items()}
        return {**self.body, "timers": {**timers, "left_ms": left, "running": self.running}}


def wal_index(path: Path) -> bytes | None:
    """The store's wal-index header as it is now; None without one (no daemon has it)."""
    try:
        with shm_path(path).open("rb") as shm:
            return shm.read(WAL_INDEX_HEADER)
    except OSError:
        return None


def read_latest(path: Path) -> tuple[int, dict[str, Any] | str, bool]:
    """The latest game's JSON (status 200), or why there is none (404, 503); and whether
    the daemon holds the store."""
    try:
        with Store.open_readonly(path) as store:
            game = store.latest_game()
    except StoreError as err:
        return 503, err.reason, False
    if game is None:
        return 404, "no game in this store yet", False
    # Not StoredGame.state(): its gc.freeze() suits a daemon that keeps a long game's
    # states for undo; in a server that replays at every input it would keep whatever
    # cyclic garbage there is then for ever (and gc.disable() is the whole process's).
    state = replay(game.settings, game.inputs, lobby=game.lobby).alone()
    at_ns = game.inputs[-1].t_ns if game.inputs else 0
    body = game.report(state)
    body["game"] = {"id": game.id, "started_at": game.started_at.isoformat()}
    body["timers"] = _timers(state, at_ns)
    return 200, body, _daemon_holds(path)


def read_players(path: Path) -> list[str]:
    """Every player the store has seen, the latest games' first (the page's chooser)."""
    with Store.open_readonly(path) as store:
        return store.players()


def _timers(state: State, at_ns: int) -> dict[str, Any]:
    """The timers at the game's latest input: the time each running one had left then,
    and the super round's countdown while a super call pauses it."""
    left: dict[str, float] = {}
    paused: dict[str, float] = {}
    if state.pointout_deadline is not None:
        left["pointout"] = (state.pointout_deadline - at_ns) / NS_PER_MS
    rnd = state.super_round
    if rnd is not None and rnd.countdown_deadline is not None:
        left["countdown"] = (rnd.countdown_deadline - at_ns) / NS_PER_MS
    if rnd is not None and rnd.countdown_left_ns is not None:
        paused["countdown"] = rnd.countdown_left_ns / NS_PER_MS
    return {"at_ms": at_ns / NS_PER_MS, "left_ms": left, "paused_ms": paused}


def _daemon_holds(path: Path) -> bool:
    try:
        fd = open_regular(path)
    except OSError:
        return False
    try:
        return store_lock.held(fd)
    finally:
        os.close(fd)


class Follower:
    """The latest snapshot of a store, and a wait for the next one."""

    def __init__(self, store: Path, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self.store = store
        self._clock = clock
        self.snapshot = Snapshot(0, 503, error="not read yet")
        self._news = asyncio.Event()  # set, and replaced, at every new version
        self._wake = asyncio.Event()
        self._index: bytes | None = None  # the wal-index header before the last read
        self._reading = asyncio.Lock()  # one read at a time: versions come in order

    async def changed(self, since: int) -> Snapshot:
        """The first snapshot after version `since`."""
        while self.snapshot.version == since:
            await self._news.wait()
        return self.snapshot

    async def run(self) -> None:
        """Read the store now and after every change, until cancelled."""
        loop = asyncio.get_running_loop()
        watch = StoreWatch(self.store, self._clock, written=[wal_path(self.store).name])
        fd = watch.fileno()
        if fd is not None:
            # Read in the callback: a descriptor left readable would call it again and
            # again while a read of the store runs.
            loop.add_reader(fd, self._noticed_now, watch)
        try:
            await self._read()
            while True:
                if await self._noticed(watch):
                    await self._read_news()
        finally:
            if fd is not None:
                loop.remove_reader(fd)
            watch.close()

    def _noticed_now(self, watch: StoreWatch) -> None:
        if watch.due(self._clock()):
            self._wake.set()

    async def _noticed(self, watch: StoreWatch) -> bool:
        """Whether the store may have changed: woken by inotify, or, unwatched, a look."""
        wake_ns = watch.wake_ns
        try:
            timeout = None if wake_ns is None else max(0, wake_ns - self._clock()) / 1e9
            await asyncio.wait_for(self._wake.wait(), timeout)
        except TimeoutError:
            return watch.due(self._clock())
        self._wake.clear()
        return True

    async def _read_news(self) -> None:
        """Read now; if nothing is new, again once a commit is published (COMMIT_POLL_S),
        until COMMIT_WAIT_NS or the next wake."""
        version = self.snapshot.version
        await self._read()
        until_ns = self._clock() + COMMIT_WAIT_NS
        while self.snapshot.version == version and not self._wake.is_set():
            if self._clock() > until_ns:
                return
            await asyncio.sleep(COMMIT_POLL_S)
            if wal_index(self.store) != self._index:
                await self._read()

    async def refresh(self) -> None:
        """Read now: after a write the daemon said it made."""
        await self._read()

    async def _read(self) -> None:
        async with self._reading:
            await self._read_once()

    async def _read_once(self) -> None:
        # The header first: what is read after it is at least as new.
        self._index = wal_index(self.store)
        status, got, running = await asyncio.to_thread(read_latest, self.store)
        now = self._clock()
        before = self.snapshot
        if isinstance(got, str):
            if (status, got) == (before.status, before.error):
                return
            if before.version == 0 or status != 404:
                log.warning("%s: %s", self.store, got)
            self._publish(Snapshot(before.version + 1, status, error=got, read_ns=now))
        elif (got, running) != (before.body, before.running):
            self._publish(Snapshot(before.version + 1, 200, got, read_ns=now, running=running))

    def _publish(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        news, self._news = self._news, asyncio.Event()
        news.set()
