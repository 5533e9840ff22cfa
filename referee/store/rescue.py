"""Inputs the ledger could not take, kept where they survive, and put back exactly once.

At exit, inputs still waiting for a full or failing disk (ledger.Ledger) are written as
a replay script, the whole game when the store can still be read, to the first of
`places` that takes the file: beside the store, else the service's runtime directory
/run/referee, else /run/user/UID (both RAM, which a full or failing disk cannot reach).
They depend on the store and its owner alone, never on the environment: the service (its
/tmp private) and a run by hand look in the same places, and only in folders no other
user can write to. The exit says where in one line.

The file checks itself: it names the store and the game (its number and the moment it
started), numbers each input by its place among the game's inputs in the order the
ledger took them, and ends with a SHA-256 of everything before that line. `referee
recover FILE`, and `referee run` when it starts, append exactly the inputs the store's
game lacks, once, or refuse in one line and keep the file: a file cut short, edited or
damaged, a game that went on without them.

    # referee: inputs the ledger could not take (disk full), 2026-11-23T13:40:02+00:00
    # `referee recover THIS-FILE` puts them back into the store named below.
    # store: /var/lib/referee/referee.db
    # game: 12
    # started: 2026-11-23T13:01:27.161803+00:00
    # lobby: true
    # settings: {"rules": "super", "players": 4, ...}
    # first: 1
    # (inputs 56 to 57 could not be saved; 1 to 55 are in the store)
    0.000000000 press 1  # 1
    ...
    # sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
"""

import hashlib
import json
import logging
import os
import pwd
import re
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from referee.errors import ScriptFileError, StoreError, UnsavedInputs
from referee.linux.files import read_regular
from referee.rules import (
    NS_PER_S,
    Input,
    ScriptError,
    Settings,
    parse_input,
    parse_script,
    settings_typed,
    settings_values,
    words,
)

from .ledger import Ledger
from .paths import UNSAVED_PREFIX
from .reads import GameHead
from .store import Store, settings_json

log = logging.getLogger(__name__)

_META = re.compile(r"^# (store|game|started|lobby|settings|first): (.*)$", re.MULTILINE)
_CHECKSUM = "# sha256: "
_NUMBER = re.compile(r"[0-9]{1,19}")  # as SQLite's integers: 2**63 has 19 digits
_LARGEST = 2**63 - 1


@dataclass(frozen=True)
class Rescue:
    """A game's inputs from number `first` on (1: the whole game), in the order the ledger
    took them, as a rescue file has them."""

    store: Path
    game: GameHead
    first: int
    inputs: tuple[Input, ...]
    saved: int = 0  # how many of the game's inputs the store had when the file was written
    reason: str = ""

    @property
    def last(self) -> int:
        return self.first + len(self.inputs) - 1

    def text(self) -> str:
        game = self.game
        lines = [
            f"# referee: inputs the ledger could not take ({self.reason}),"
            f" {datetime.now(UTC).isoformat(timespec='seconds')}",
            "# `referee recover THIS-FILE` puts them back into the store named below.",
            f"# store: {self.store}",
            f"# game: {game.id}",
            f"# started: {game.started_at.isoformat()}",
            f"# lobby: {'true' if game.lobby else 'false'}",
            f"# settings: {settings_json(game.settings)}",
        ]
        if not game.lobby:  # a replay script's config line skips the lobby, as this game
            lines.append("config " + " ".join(_config_words(game.settings)))
        lines.append(f"# first: {self.first}")
        if self.saved < self.last:
            kept = f"1 to {self.saved} are in the store" if self.saved else "the store has none"
            lines.append(f"# (inputs {self.saved + 1} to {self.last} could not be saved; {kept})")
        # A replay script goes forward in time: a late input is in its place, its number
        # says where the ledger took it.
        numbered = sorted(enumerate(self.inputs, self.first), key=lambda n: (n[1].t_ns, n[0]))
        lines += [f"{_seconds(inp.t_ns)} {words(inp)}  # {n}" for n, inp in numbered]
        body = "\n".join(lines) + "\n"
        return f"{body}{_CHECKSUM}{_sha256(body.encode())}\n"


def _config_words(settings: Settings) -> list[str]:
    values = settings_values(settings)
    return [f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in values.items()]


def _seconds(t_ns: int) -> str:
    """Exact: the replay parser reads decimal seconds back to the very nanosecond."""
    return f"{t_ns // NS_PER_S}.{t_ns % NS_PER_S:09d}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse(data: bytes, where: Path) -> Rescue:
    """A rescue file's game and inputs, only if it is whole and as written; else
    ScriptFileError says what is wrong, and where, in one line."""
    if not re.search(rb"^# store: ", data, re.MULTILINE):
        raise ScriptFileError(f"{where}: not a rescue file of referee (no store line)")
    body, _, last = data.removesuffix(b"\n").rpartition(b"\n")
    body += b"\n"
    if not data.endswith(b"\n") or not last.startswith(_CHECKSUM.encode()):
        raise ScriptFileError(f"{where}: not whole (cut short?): its last line is not its checksum")
    if last[len(_CHECKSUM) :].decode("ascii", "replace") != _sha256(body):
        raise ScriptFileError(f"{where}: damaged: its checksum does not match what it holds")
    try:
        text = body.decode("utf-8")
        return _rescue(text, where)
    except (ValueError, RecursionError) as err:  # Recursion: its settings nested too deep
        raise ScriptFileError(f"{where}: a damaged rescue file: {err}") from None


def _rescue(text: str, where: Path) -> Rescue:
    """The rescue a whole file holds; ValueError says what does not add up."""
    found = _META.findall(text)
    twice = [key for key, n in Counter(key for key, _ in found).items() if n > 1]
    if twice:
        raise ValueError(f"two {twice[0]} lines")
    meta = dict(found)
    keys = ("store", "game", "started", "lobby", "settings", "first")
    missing = [key for key in keys if key not in meta]
    if missing:
        raise ValueError(f"no {missing[0]} line")
    if meta["lobby"] not in ("true", "false"):
        raise ValueError(f"lobby must be true or false, not {meta['lobby']!r}")
    settings = json.loads(meta["settings"])
    if not isinstance(settings, dict):
        raise ValueError("its settings are not a JSON object")
    game = GameHead(
        id=_whole(meta, "game"),
        settings=settings_typed(settings),
        lobby=meta["lobby"] == "true",
        started_at=datetime.fromisoformat(meta["started"]),
    )
    first = _whole(meta, "first")
    store = Path(meta["store"])
    if not store.is_absolute():
        raise ValueError(f"the store must be an absolute path, not {meta['store']!r}")
    try:
        script = parse_script(text)
    except ScriptError as err:
        raise ScriptFileError(err.where(str(where))) from None
    lines = text.split("\n")
    numbered: dict[int, Input] = {}
    for line, inp in script.inputs:
        number = lines[line - 1].partition("#")[2].strip()
        if not _NUMBER.fullmatch(number) or int(number) in numbered:
            raise ValueError(f"line {line} has no number of its own ({number!r})")
        numbered[int(number)] = inp
    if sorted(numbered) != list(range(first, first + len(numbered))):
        raise ValueError(f"its inputs are not numbered {first} on, one after the other")
    inputs = tuple(numbered[n] for n in sorted(numbered))
    return Rescue(store, game, first, inputs)


def _whole(meta: dict[str, str], key: str) -> int:
    """A number from 1 to SQLite's largest."""
    text = meta[key]
    if not _NUMBER.fullmatch(text) or not 1 <= int(text) <= _LARGEST:
        raise ValueError(f"{key} must be a number from 1 to {_LARGEST}, not {text!r}")
    return int(text)


# The unit's RuntimeDirectory=referee is RUN/referee, which systemd keeps across restarts
# until a reboot; a user's own runtime directory is RUN/user/UID (systemd-logind's).
RUN = Path("/run")


def places(store: Path) -> list[Path]:
    """Where a rescue file may go, first choice first: those of the store's folder, the
    service's runtime directory and the owner's that the store's owner controls."""
    owner = _owner(store)
    found = [store.parent, RUN / "referee", RUN / "user" / str(owner)]
    return [place for place in dict.fromkeys(found) if _distrust(place, owner) is None]


def _owner(store: Path) -> int:
    try:
        return store.stat().st_uid
    except OSError:  # no store yet (or none any more): it will be the daemon's own
        return os.geteuid()


def _distrust(path: Path, owner: int) -> str | None:
    """Why a folder, or a file in it, may hold what the store's owner never wrote (another
    user owns it; others may write to the folder, as to a shared /tmp), or None."""
    try:
        folder = path.is_dir()  # a folder may be reached through a link; a file may not
        st = path.stat() if folder else path.lstat()
    except OSError as err:
        return err.strerror or "cannot be looked at"
    if folder and st.st_uid not in (owner, 0):
        return f"a folder of {_user(st.st_uid)}, not of {_user(owner)} who owns the store"
    if folder and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "a folder other users may write to"
    if not folder and not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if not folder and st.st_uid != owner:
        return f"written by {_user(st.st_uid)}, not by {_user(owner)} who owns the store"
    return None


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user {uid}"


def keep(ledger: Ledger) -> UnsavedInputs | None:
    """At exit: the inputs still waiting, written where they survive (the whole game, when
    the store is only in memory since its file went); the error to end with, naming the
    file (None when nothing waits)."""
    waiting, store = ledger.unsaved, ledger.store
    if not waiting and store.lost is None:
        return None
    rescue = _rescue_of(ledger, ledger.reason or store.lost or "storage trouble")
    text = rescue.text()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{UNSAVED_PREFIX}game{ledger.game_id}-{stamp}-{os.getpid()}.txt"
    n = f"{len(waiting)} input{'' if len(waiting) == 1 else 's'}" if waiting else "the game"
    them, are = ("them", "they are") if waiting else ("it", "it is")
    said = f"referee: {n} could not be saved to {store.path} ({rescue.reason})"
    for place in places(store.path):
        try:
            path = _write_new(place / name, text)
        except OSError as err:
            log.warning("cannot keep the unsaved inputs in %s: %s", place, err.strerror)
            continue
        return UnsavedInputs(f"{said}; {are} in {path}: `referee recover {path}` puts {them} back")
    # Nowhere takes a file: stderr (the journal, under systemd) keeps them.
    return UnsavedInputs(f"{said}, and no file could hold {them}; here {are}:\n{text}")


def _rescue_of(ledger: Ledger, reason: str) -> Rescue:
    waiting = tuple(parse_input(s.words.split(), s.t_ns) for s in ledger.unsaved)
    path, saved = ledger.store.path, ledger.saved
    try:
        game = ledger.store.game(ledger.game_id, accepted=True)
    except StoreError:
        game = None  # the disk fails reading too: what waits is what only memory has
    if game is None or len(game.inputs) != saved:
        return Rescue(path, ledger.head, saved + 1, waiting, saved, reason)
    return Rescue(path, ledger.head, 1, game.inputs + waiting, saved, reason)


def _write_new(path: Path, text: str) -> Path:
    """Write a new file and have it on the disk, or leave nothing behind (OSError)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", closefd=False) as file:
            file.write(text)
            file.flush()
            os.fsync(fd)
    except OSError:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)
    return path


def recover(rescue: Rescue, store: Store, where: Path) -> tuple[int, int]:
    """Append exactly the inputs of the rescue that the store's game lacks, in order,
    once: the game, how many. ScriptFileError when they cannot follow what the store has
    (it went on without them, or lacks inputs the file does not hold)."""
    head = rescue.game
    game = store.find(head)
    if game is None:
        if rescue.first != 1:
            raise ScriptFileError(
                f"{where}: game {head.id} is not in {store.path}, and the file holds only"
                f" its inputs from number {rescue.first} on"
            )
        new = store.new_game(
            head.settings, lobby=head.lobby, started_at=head.started_at, inputs=rescue.inputs
        )
        return new, len(rescue.inputs)
    if (game.settings, game.lobby) != (head.settings, head.lobby):
        raise ScriptFileError(
            f"{where}: game {game.id} in {store.path} started when the file's did, with"
            " other settings; the file keeps its inputs"
        )
    held = len(game.inputs)
    if held < rescue.first - 1:
        raise ScriptFileError(
            f"{where}: game {game.id} in {store.path} has {held} inputs, and the file holds"
            f" only its inputs from number {rescue.first} on; the file keeps them"
        )
    # The inputs both have must be the same: else the game went on without the file's.
    both = range(rescue.first, min(held, rescue.last) + 1)
    if any(game.inputs[n - 1] != rescue.inputs[n - rescue.first] for n in both):
        raise ScriptFileError(
            f"{where}: game {game.id} in {store.path} went on without these inputs;"
            " the file keeps them"
        )
    missing = rescue.inputs[held + 1 - rescue.first :]
    for inp in missing:
        store.append(game.id, inp)
    return game.id, len(missing)


def read(path: Path) -> Rescue:
    try:
        data = read_regular(path)
    except OSError as err:
        raise ScriptFileError(f"{path}: cannot read: {err.strerror}") from None
    return parse(data, path)


def waiting_for(store: Path) -> Iterator[Path]:
    """Rescue files naming this store, oldest first: only those its owner wrote, in
    `places`. A file passed over is said in the log, once each time."""
    owner, found = _owner(store), []
    for place in places(store):
        try:
            candidates = list(place.glob(f"{UNSAVED_PREFIX}*.txt"))
        except OSError:
            continue
        for path in candidates:
            if (why := _distrust(path, owner)) is not None:
                log.warning("%s: not put back: %s; `referee recover` it if you trust it", path, why)
                continue
            try:
                if read(path).store == store:
                    found.append((path.stat().st_mtime_ns, path))
            except ScriptFileError as err:
                log.warning("%s", err)
            except OSError:
                continue  # gone since it was listed
    yield from (path for _, path in sorted(found))
