"""Inputs the ledger could not take, kept where they survive, and put back later.

At exit, inputs still waiting for a full or failing disk (store.Ledger) are written as
a replay script, the whole game when the store can still be read, to the first of these
places that takes the file: beside the store, $RUNTIME_DIRECTORY (systemd's, which the
unit keeps across restarts), $XDG_RUNTIME_DIR, the temporary directory. The exit says
where in one line. `referee recover FILE`, and `referee run` when it starts, put them
back: the inputs the store's game lacks are appended, in order, none twice.

    # referee: inputs the ledger could not take (disk full), 2026-11-23T13:40:02+00:00
    # store: /var/lib/referee/referee.db
    # game: 12
    # lobby: true
    # settings: {"rules": "super", "players": 4, ...}
    # first: 1
    0.000000000 press 1
    ...
"""

import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .errors import ScriptFileError, StoreError, UnsavedInputs
from .files import read_regular
from .rules import (
    NS_PER_S,
    Input,
    ScriptError,
    Settings,
    parse_input,
    parse_script,
    settings_from,
    settings_values,
    words,
)
from .store import Ledger, Store, StoredGame

log = logging.getLogger(__name__)

PREFIX = "referee-unsaved-"
_META = re.compile(r"^# (store|game|lobby|settings|first): (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Rescue:
    """A game's inputs from its `first` (1 for the whole game), as a rescue file has them."""

    store: Path
    game: int
    first: int  # the index (from 1) of inputs[0] among the game's inputs
    inputs: tuple[Input, ...]
    settings: Settings | None = None  # None: unknown (the store could not be read)
    lobby: bool = True
    reason: str = ""

    def text(self) -> str:
        lines = [
            f"# referee: inputs the ledger could not take ({self.reason}),"
            f" {datetime.now(UTC).isoformat(timespec='seconds')}",
            "# `referee recover THIS-FILE` puts them back into the store named below.",
            f"# store: {self.store}",
            f"# game: {self.game}",
            f"# lobby: {'true' if self.lobby else 'false'}",
        ]
        if self.settings is not None:
            lines.append(f"# settings: {json.dumps(settings_values(self.settings))}")
            if not self.lobby:  # a replay script's config line skips the lobby, as this game
                lines.append("config " + " ".join(_config_words(self.settings)))
        lines.append(f"# first: {self.first}")
        if self.first > 1:
            lines.append(f"# (inputs 1 to {self.first - 1} of the game are in the store)")
        lines += [f"{_seconds(inp.t_ns)} {words(inp)}" for inp in self.inputs]
        return "\n".join(lines) + "\n"


def _config_words(settings: Settings) -> list[str]:
    values = settings_values(settings)
    return [f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in values.items()]


def _seconds(t_ns: int) -> str:
    """Exact: the replay parser reads decimal seconds back to the very nanosecond."""
    return f"{t_ns // NS_PER_S}.{t_ns % NS_PER_S:09d}"


def parse(text: str, where: Path) -> Rescue:
    """A rescue file's game and inputs; ScriptFileError says what is wrong, and where."""
    meta = dict(_META.findall(text))
    missing = [key for key in ("store", "game", "first") if key not in meta]
    if missing:
        raise ScriptFileError(f"{where}: not a rescue file of referee (no {missing[0]} line)")
    try:
        script = parse_script(text)
    except ScriptError as err:
        raise ScriptFileError(err.where(str(where))) from None
    try:
        settings = settings_from(json.loads(meta["settings"])) if "settings" in meta else None
        return Rescue(
            store=Path(meta["store"]),
            game=int(meta["game"]),
            first=int(meta["first"]),
            inputs=tuple(inp for _, inp in script.inputs),
            settings=settings,
            lobby=meta.get("lobby", "true") == "true",
        )
    except (ValueError, TypeError) as err:
        raise ScriptFileError(f"{where}: a damaged rescue file: {err}") from None


def places(store: Path) -> list[Path]:
    """Where a rescue file may go, first choice first."""
    runtime = [
        os.environ.get(name, "").split(":")[0] for name in ("RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR")
    ]
    found = [store.parent, *(Path(d) for d in runtime if d), Path(tempfile.gettempdir())]
    return list(dict.fromkeys(found))


def keep(ledger: Ledger) -> UnsavedInputs | None:
    """At exit: the inputs still waiting, written where they survive; the error to end
    with, naming the file (None when nothing waits)."""
    waiting = ledger.unsaved
    if not waiting:
        return None
    store = ledger.store
    rescue = _rescue_of(ledger, ledger.reason or "storage trouble")
    text = rescue.text()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{PREFIX}game{ledger.game_id}-{stamp}-{os.getpid()}.txt"
    n = f"{len(waiting)} input{'' if len(waiting) == 1 else 's'}"
    said = f"referee: {n} could not be saved to {store.path} ({rescue.reason})"
    for place in places(store.path):
        try:
            path = _write_new(place / name, text)
        except OSError as err:
            log.warning("cannot keep the unsaved inputs in %s: %s", place, err.strerror)
            continue
        return UnsavedInputs(f"{said}; they are in {path}: `referee recover {path}` puts them back")
    # Nowhere takes a file: stderr (the journal, under systemd) keeps them.
    return UnsavedInputs(f"{said}, and no file could hold them; here they are:\n{text}")


def _in_time(inputs: Iterable[Input]) -> tuple[Input, ...]:
    """As the store reads a game back (a late input in its place), and as a replay script
    must be."""
    return tuple(sorted(inputs, key=lambda inp: inp.t_ns))


def _rescue_of(ledger: Ledger, reason: str) -> Rescue:
    waiting = tuple(parse_input(s.words.split(), s.t_ns) for s in ledger.unsaved)
    try:
        game = ledger.store.game(ledger.game_id)
    except StoreError:
        game = None  # the disk fails reading too: what waits is what only memory has
    if game is None:
        first = ledger.saved + 1
        return Rescue(ledger.store.path, ledger.game_id, first, _in_time(waiting), reason=reason)
    return Rescue(
        ledger.store.path,
        game.id,
        1,
        _in_time((*game.inputs, *waiting)),
        settings=game.settings,
        lobby=game.lobby,
        reason=reason,
    )


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
    """Append what the store's game lacks of the rescue's inputs: the game, how many.

    ScriptFileError when they cannot follow what the store has (it went on without them).
    """
    game = store.game(rescue.game)
    if game is None or (rescue.settings is not None and not _same_game(game, rescue)):
        if rescue.first != 1 or rescue.settings is None:
            raise ScriptFileError(
                f"{where}: game {rescue.game} is not in {store.path}, and the file holds only"
                f" its inputs from number {rescue.first} on"
            )
        new = store.new_game(rescue.settings, lobby=rescue.lobby)
        for inp in rescue.inputs:
            store.append(new, inp)
        return new, len(rescue.inputs)
    stored = game.inputs[rescue.first - 1 :]
    missing = _missing(stored, rescue.inputs)
    if missing is None:
        raise ScriptFileError(
            f"{where}: game {game.id} in {store.path} went on without these inputs;"
            " the file keeps them"
        )
    for inp in missing:
        store.append(game.id, inp)
    return game.id, len(missing)


def _missing(stored: Sequence[Input], listed: Sequence[Input]) -> list[Input] | None:
    """The listed inputs the store lacks, if what it has is among them in their order
    (else None: the game went on without them)."""
    missing, matched = [], 0
    for inp in listed:
        if matched < len(stored) and stored[matched] == inp:
            matched += 1
        else:
            missing.append(inp)
    return missing if matched == len(stored) else None


def _same_game(game: StoredGame, rescue: Rescue) -> bool:
    return game.settings == rescue.settings and game.lobby == rescue.lobby


def read(path: Path) -> Rescue:
    try:
        text = read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) else "not UTF-8"
        raise ScriptFileError(f"{path}: cannot read: {why}") from None
    return parse(text, path)


def waiting_for(store: Path) -> Iterator[Path]:
    """Rescue files naming this store, oldest first."""
    found = []
    for place in places(store):
        try:
            candidates = list(place.glob(f"{PREFIX}*.txt"))
        except OSError:
            continue
        for path in candidates:
            try:
                if read(path).store == store:
                    found.append(path)
            except ScriptFileError as err:
                log.warning("%s", err)
    yield from sorted(found, key=lambda p: p.stat().st_mtime_ns)
