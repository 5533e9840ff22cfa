"""The ledger of one game: its inputs saved in order, written behind the main loop, and
never failing for storage trouble (docs/design.md, "The store").
"""

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from referee.errors import StoreError
from referee.rules import Input

from .store import Store, Stored, storable_words

log = logging.getLogger(__name__)

# While the disk refuses, a ledger that writes behind tries again this often (and at
# every new input).
RETRY_S = 5.0
# The most inputs one write takes: its statement's parameters stay far below SQLite's
# limit (32,766 since 3.32).
BATCH_MAX = 1000
# How long `Ledger.hand_over` waits for the writer's thread to wake.
HANDOFF_S = 0.005


@dataclass(frozen=True)
class Change:
    """What the table was shown while the game runs (a seat's player, the next games'
    rules), waiting for the disk like an input."""

    said: str  # what it is, for the log should the disk never take it: "P2 is Ann"
    # Into the store, in one transaction; ValueError: the caller asked the impossible.
    write: Callable[[Store], None]
    # From the writer's thread: None once on the disk; else why not, each time it fails.
    done: Callable[[str | None], None]


class Ledger:
    """One game's inputs saved in order, without ever failing for storage trouble.

    What the disk cannot take now is kept in memory and written first on the next
    append or flush. The main loop shows an input's effects either way (a full disk
    does not stop a game) and puts `trouble` on the screen while inputs wait; it is
    there from the start when the disk takes nothing then.

    `append` writes at once. After `write_behind`, it only queues the input, and a thread
    of the ledger's own writes what waits: each write takes every input waiting when it
    begins, in order, in one transaction (group commit), so the caller never waits for
    the disk, and the disk always holds the game's inputs up to some point, never one
    without those before it.
    """

    def __init__(self, store: Store, game_id: int) -> None:
        self.store = store
        self.game_id = game_id
        head = store.head(game_id)
        if head is None:
            raise ValueError(f"{store.path}: no game {game_id}")
        self.head = head  # what a rescue file needs, should the store fail later
        self._unsaved: deque[Stored] = deque()
        self._changes: deque[Change] = deque()  # written after the inputs waiting with them
        self._reason: str | None = None  # set while the disk refuses
        self.saved = store.count_inputs(game_id)  # the game's inputs on the disk
        # Guards the three above for the writer's thread; notified when it has news.
        self._news = threading.Condition()
        self._one_write = threading.Lock()  # at a time: the writer thread's or flush()'s
        self._writer: threading.Thread | None = None
        self._idle = False  # the writer's thread waits for news
        self._stopping = False
        self.flush(check=True)

    @property
    def pending(self) -> int:
        """The inputs not on the disk yet: waiting, or being written."""
        return len(self._unsaved)

    @property
    def unsaved(self) -> tuple[Stored, ...]:
        """The inputs waiting for the disk, oldest first."""
        with self._news:
            return tuple(self._unsaved)

    @property
    def unsaved_changes(self) -> tuple[Change, ...]:
        """The changes shown while the game ran that the disk has not taken yet."""
        with self._news:
            return tuple(self._changes)

    @property
    def reason(self) -> str | None:
        """Why the disk refuses, in a few words ("disk full"), while it does."""
        return self._reason

    @property
    def trouble(self) -> str | None:
        with self._news:
            reason, n = self._reason, len(self._unsaved)
        if reason is None:
            return None
        if n == 0:
            return f"storage trouble: {reason}: inputs will wait in memory"
        return f"storage trouble: {reason}, {n} input{'' if n == 1 else 's'} not yet saved"

    def check_path(self) -> str | None:
        """The store's file deleted or moved away under the running daemon is written anew
        at its path at once, or as soon as it can be (till then the inputs wait in memory,
        as for a full disk, and at the exit go to a rescue file): what to tell the table,
        the first time; else None."""
        if self.store.gone() is None:  # the common case: no wait for a write under way
            return None
        try:
            # The store's connection is the writer's thread's while it writes.
            with self._one_write:
                gone = self.store.follow_path()
        except StoreError as err:  # the disk fails reading the moved file: try again later
            log.error("cannot tell whether the store file is still there: %s", err)
            return None
        if gone is None:
            return None
        kept = "written anew" if self.flush(check=True) else "inputs wait in memory"
        return f"store file {gone}: {kept}"

    def append(self, inp: Input) -> bool:
        """Save the input after those still waiting; True if all of them are on the disk
        now. Written behind: queued for the writer's thread, and False."""
        # Checked here, once: a bad input raises before it can block those after it.
        stored = Stored(inp.t_ns, storable_words(inp))
        with self._news:
            self._unsaved.append(stored)
            if self._writer is not None:
                self._news.notify_all()
                return False
        return self.flush()

    def keep(self, change: Change) -> None:
        """Write the change as an input is written (at once, or behind the loop), after the
        inputs waiting now; its `done` says when it is on the disk."""
        with self._news:
            self._changes.append(change)
            if self._writer is not None:
                self._news.notify_all()
                return
        self.flush()

    def hand_over(self) -> None:
        """Written behind: wait, at most HANDOFF_S, until the writer's thread, woken for
        the inputs appended, has the GIL. A loop that never sleeps (drawing) would keep
        the GIL from it, as it kept it from the sound's thread (outputs/sound.py,
        QueuedSpeaker.play); awake, the thread takes what waits and lets the GIL go at
        its first call into SQLite."""
        with self._news:
            if self._idle and self._unsaved:
                self._news.wait_for(lambda: not self._idle, HANDOFF_S)

    def flush(self, *, check: bool = False) -> bool:
        """Save the waiting inputs now, oldest first; True when none is left and the disk
        takes writes. check: write to find out even with nothing waiting. Waits for the
        writer's thread to finish the write it is doing."""
        with self._one_write:
            while True:
                with self._news:
                    batch, reason = list(islice(self._unsaved, BATCH_MAX)), self._reason
                    # A change once every input before it is on the disk.
                    change = self._changes[0] if self._changes and not batch else None
                if not batch and change is None and not check and reason is None:
                    return True
                try:
                    if batch:
                        self.store._append(self.game_id, batch)
                    elif change is not None:
                        change.write(self.store)
                    else:
                        self.store.check_writable()
                except StoreError as err:
                    self._refused(err, reason)
                    for one in self.unsaved_changes:  # those behind the inputs refused too
                        one.done(f"not saved yet: {err.reason}")
                    return False
                except ValueError as err:
                    if change is None:
                        raise
                    log.error("not saved: %s: %s", change.said, err)  # the caller's mistake
                    with self._news:
                        self._changes.popleft()
                    change.done(str(err))
                    continue
                with self._news:
                    for _ in batch:
                        self._unsaved.popleft()
                    if change is not None:
                        self._changes.popleft()
                    self.saved += len(batch)
                    self._reason = None
                if change is not None:
                    change.done(None)
                if reason is not None:
                    log.info("storage trouble over: every input is saved to %s", self.store.path)
                check = False

    def _refused(self, err: StoreError, reason: str | None) -> None:
        """The disk refused a write; `reason`: why it refused the one before, if it did."""
        if err.reason != reason:
            log.warning(
                "storage trouble: %s (%s); inputs wait in memory, %d now",
                err,
                err.__cause__,
                self.pending,
            )
        with self._news:
            self._reason = err.reason

    def write_behind(self, told: Callable[[], None]) -> None:
        """From now on, `append` queues and a thread writes; `told()` (from that thread)
        when storage trouble begins or is over. While the disk refuses, the thread tries
        again every RETRY_S, and at every new input."""
        self._writer = threading.Thread(
            target=self._write, args=(told,), name="ledger", daemon=True
        )
        self._writer.start()

    def _write(self, told: Callable[[], None]) -> None:
        retry_s: float | None = None  # None: until an input comes
        while True:
            with self._news:
                idle = not self._unsaved and not self._changes
                if not self._stopping and (retry_s is not None or idle):
                    self._idle = True
                    self._news.wait(retry_s)
                    self._idle = False
                    self._news.notify_all()  # the hand-over is over
                if self._stopping:
                    return
                was = self._reason
            saved = self.flush()
            if self._reason != was:
                told()
            retry_s = None if saved else RETRY_S

    def close(self) -> None:
        """Stop the writer's thread once its write in progress is done; what still waits
        stays waiting (flush it, keep it: rescue.keep, or write it behind again)."""
        with self._news:
            self._stopping = True
            self._news.notify_all()
        if self._writer is not None:
            self._writer.join()
            self._writer = None
        self._stopping = False
