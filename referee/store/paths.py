"""Where the box keeps its files: the store, and every file beside it, named here and
nowhere else.

The store is systemd's StateDirectory on a box (/var/lib/referee/referee.db), else the
user's data folder; or whatever `--store` or `[store] path` names. Beside a store
`referee.db`, each named after it:

    referee.db-wal, referee.db-shm   SQLite's write-ahead log and its index (connect.py)
    referee.pin                      the PIN, for its owner's eyes only (pin.py)
    referee.sock                     the daemon's control socket (daemon/control_socket.py)
    referee.page                     the page's mark: served now, and where (mark.py)
    referee.summaries                the page's cache of the games (history/cache.py), with
                                     its own -wal and -shm
    clips/                           each call's clip, a WAV and a JSON (audio/clips.py)
    referee.phone/                   the phones' latest photo of the table (web/photo_api.py)

and in the first of rescue.places(store) (the store's folder when it is its owner's alone,
else /run/referee or /run/user/UID, in RAM):

    referee.log, referee.log.1       the log, while a terminal shows the game (terminal_log.py)
    referee-unsaved-*.txt            the inputs a full disk refused at exit (rescue.py)
"""

import os
from pathlib import Path

import platformdirs

from referee.linux.files import looked_at

# Where the systemd unit's StateDirectory=referee keeps the box's ledger.
SERVICE_STORE = Path("/var/lib/referee/referee.db")
CLIPS = "clips"
LOG_NAME = "referee.log"
UNSAVED_PREFIX = "referee-unsaved-"


def default_store_path(*, reading: bool = False) -> Path:
    """systemd's StateDirectory when the daemon runs as a unit, else the user's data dir.

    To read (`referee state` from a login shell on the box), the installed service's
    ledger is the one meant when the user has none of their own.
    """
    state_directory = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    if state_directory:
        return Path(state_directory) / "referee.db"
    mine = platformdirs.user_data_path("referee") / "referee.db"
    if reading and not looked_at(mine) and looked_at(SERVICE_STORE):
        return SERVICE_STORE
    return mine


def wal_path(database: Path) -> Path:
    """An SQLite file's write-ahead log (the store's, or the summaries')."""
    return database.with_name(database.name + "-wal")


def shm_path(database: Path) -> Path:
    """An SQLite file's shared index of its write-ahead log."""
    return database.with_name(database.name + "-shm")


def pin_path(store: Path) -> Path:
    """The PIN's file (referee.db: referee.pin)."""
    return store.with_suffix(".pin")


def socket_path(store: Path) -> Path:
    """The daemon's control socket (referee.db: referee.sock)."""
    return store.with_suffix(".sock")


def mark_path(store: Path) -> Path:
    """The page's mark (referee.db: referee.page)."""
    return store.with_suffix(".page")


def phone_path(store: Path) -> Path:
    """The folder of the phones' photos (referee.db: referee.phone), which the page writes
    and the camera's process reads where the box has no camera of its own."""
    return store.with_suffix(".phone")


def summaries_path(store: Path) -> Path:
    """The page's cache of the games' summaries (referee.db: referee.summaries), in the
    state directory the page's unit lets it write."""
    return store.with_suffix(".summaries")


def clips_folder(store: Path) -> Path:
    """The calls' clips: beside the store, so that whoever may read the games may hear
    their calls."""
    return store.parent / CLIPS
