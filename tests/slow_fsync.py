"""A slow disk for the ledger, for tests and benchmarks: tests/slow_fsync.c, an LD_PRELOAD
shim over fdatasync(2) and fsync(2), loaded into the process that writes the store.

It slows or holds the real sync of every file under one directory, and nothing else: SQLite
writes its file and its -wal as usual, and the commit waits where a slow SD card makes it
wait, in the sync, in whichever thread commits, the GIL released. Two ways:

- `spread(...)`: after the real sync, a seeded wait: uniform 5 to 50 ms, and 300 ms once in
  50 syncs (an SD card's own garbage collection), each wait logged;
- `Gate`: each sync waits at a FIFO until the test lets it go, and the test is told when a
  sync arrives and when it has returned, with the file's size then: what a power cut at
  that moment keeps of a file that only grows, as the -wal does between checkpoints.

In-process, where no shim can be loaded, `writes_held(store)` holds the store's next commit
inside SQLite instead.

    shim = build()  # None where there is no C compiler
    env = dict(os.environ, **spread(shim, store_dir, seed=1, log=store_dir / "fsync.log"))
"""

import contextlib
import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "slow_fsync.c"
BUILT = ROOT / "build" / "slow-fsync" / "slow_fsync.so"

# The slow card: 5 to 50 ms a sync, and 300 ms once in 50.
MIN_MS, MAX_MS, STALL_MS, STALL_EVERY = 5, 50, 300, 50


def build() -> Path | None:
    """The shim, compiled if it is missing or older than its source; None without cc."""
    if BUILT.exists() and BUILT.stat().st_mtime_ns >= SOURCE.stat().st_mtime_ns:
        return BUILT
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    BUILT.parent.mkdir(parents=True, exist_ok=True)
    # Built beside its place and moved in: tests build it in parallel.
    partial = BUILT.with_name(f"{BUILT.name}.{os.getpid()}")
    subprocess.run(
        [cc, "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(partial), str(SOURCE),
         "-ldl", "-lpthread"],
        check=True,
    )  # fmt: skip
    partial.replace(BUILT)
    return BUILT


def spread(shim: Path, directory: Path, *, seed: int, log: Path) -> dict[str, str]:
    """The environment that slows every sync under `directory` as a slow card does."""
    return {
        "LD_PRELOAD": str(shim),
        "SLOW_FSYNC_DIR": str(directory),
        "SLOW_FSYNC_SPREAD": f"{seed}:{MIN_MS}:{MAX_MS}:{STALL_MS}:{STALL_EVERY}",
        "SLOW_FSYNC_LOG": str(log),
    }


def waits_ms(log: Path) -> list[int]:
    """What the shim waited after each slowed sync, in ms, from its log."""
    if not log.exists():
        return []
    return [int(line.split(" ", 1)[0]) for line in log.read_text().splitlines()]


class Gate:
    """Holds the syncs of the files under `directory` until the test lets them go.

    Syncs go through at once (`open`) until `hold()`; then each waits until `release()`.
    A thread of the test reads what the shim tells; the test waits on it, with timeouts."""

    def __init__(self, shim: Path, directory: Path, fifos: Path) -> None:
        self.told_path, self.gate_path = fifos / "fsync-told", fifos / "fsync-gate"
        os.mkfifo(self.told_path)
        os.mkfifo(self.gate_path)
        self.env = {
            "LD_PRELOAD": str(shim),
            "SLOW_FSYNC_DIR": str(directory),
            "SLOW_FSYNC_TOLD": str(self.told_path),
            "SLOW_FSYNC_GATE": str(self.gate_path),
        }
        # Read-write, as the shim opens them: no open waits for the other side.
        self._told = os.open(self.told_path, os.O_RDWR)
        self._gate = os.open(self.gate_path, os.O_RDWR)
        self._changed = threading.Condition()
        self._holding = False
        self.held = 0  # syncs waiting at the gate now
        self.synced: dict[str, int] = {}  # file -> its size at its last sync's return
        self.syncs = 0
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self) -> None:
        with os.fdopen(self._told, "r") as told:
            for line in told:
                what, path, *size = line.split()
                if what == "closed":
                    return
                with self._changed:
                    if what == "held" and self._holding:
                        self.held += 1
                    elif what == "held":
                        os.write(self._gate, b"!")
                    else:
                        self.synced[path] = int(size[0])
                        self.syncs += 1
                    self._changed.notify_all()

    def hold(self) -> None:
        with self._changed:
            self._holding = True

    def release(self) -> None:
        with self._changed:
            self._holding = False
            os.write(self._gate, b"!" * self.held)
            self.held = 0

    def wait(self, predicate: Callable[[], bool], what: str, timeout_s: float = 10) -> None:
        with self._changed:
            if not self._changed.wait_for(predicate, timeout_s):
                raise AssertionError(f"{what}: not within {timeout_s:g} s")

    def close(self) -> None:
        os.write(self._told, b"closed - -\n")  # the listening thread's last line
        os.close(self._gate)


@contextlib.contextmanager
def writes_held(store: Path) -> Iterator[None]:
    """Another connection's write lock on the store for as long as the `with` lasts: the
    writer's next commit waits inside SQLite (its busy handler, up to 5 s), where a slow
    sync makes it wait."""
    conn = sqlite3.connect(store, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()
