"""The box's PIN in its file beside the store (paths.pin_path): random per box (never a
shared default), six digits from `secrets`, readable by its owner only (0600), made the
first time `referee web`, `referee pin` or the daemon's lobby needs it; `referee pin --new`
puts another in its place. It is never logged. The page checks it (web/login.py); the lobby
shows it (daemon/lobby.py).
"""

import os
import secrets
import stat
from pathlib import Path

from referee.errors import PinError
from referee.linux.files import NotARegularFile, open_regular

DIGITS = 6


def read_pin(path: Path) -> str:
    """The PIN in its file; PinError if there is none or it may not be trusted."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        raise PinError(f"{path}: no PIN yet: `referee pin` makes one") from None
    except NotARegularFile as err:
        raise PinError(f"{path}: {err.strerror}") from None
    except OSError as err:
        raise PinError(f"{path}: cannot read the PIN: {err.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        text = file.read(DIGITS + 2)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise PinError(f"{path}: others may read the PIN: `referee pin --new` makes a new one")
    pin = text.strip().decode("ascii", errors="replace")
    if len(pin) != DIGITS or not pin.isdigit() or not pin.isascii():
        raise PinError(f"{path}: not a PIN of {DIGITS} digits: `referee pin --new` makes one")
    return pin


def ensure_pin(path: Path) -> str:
    """The PIN, made now if there is none yet."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return read_pin(path)
    except OSError as err:
        raise PinError(f"{path}: cannot make the PIN: {err.strerror}") from None
    return _written(fd, path)


def new_pin(path: Path) -> str:
    """A new PIN in place of the old one (the old one's sessions end)."""
    fresh = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    try:
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as err:
        raise PinError(f"{path}: cannot make a new PIN: {err.strerror}") from None
    try:
        pin = _written(fd, fresh)
        fresh.replace(path)  # whole or not at all: a reader never sees half a PIN
    except OSError as err:
        fresh.unlink(missing_ok=True)
        raise PinError(f"{path}: cannot make a new PIN: {err.strerror}") from None
    except BaseException:
        fresh.unlink(missing_ok=True)
        raise
    return pin


def _written(fd: int, path: Path) -> str:
    pin = f"{secrets.randbelow(10**DIGITS):0{DIGITS}d}"
    try:
        with os.fdopen(fd, "w") as file:
            file.write(pin + "\n")
            file.flush()
            os.fsync(file.fileno())
    except OSError as err:
        raise PinError(f"{path}: cannot write the PIN: {err.strerror}") from None
    return pin
