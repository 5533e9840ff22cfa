"""Who may write from a phone: the box's PIN, the sessions it opens, and the wait after
five wrong ones (docs/web.md, "Who may do what").

The PIN is random per box (never a shared default): six digits from `secrets`, in a file
beside the store that only its owner may read (0600), made the first time `referee web`
or `referee pin` needs it; `referee pin --new` puts another in its place. The server reads
it again at every login, so a new PIN takes effect at once, and ends the sessions the old
one opened. It is never logged.
"""

import math
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from referee.errors import PinError
from referee.files import NotARegularFile, open_regular
from referee.units import NS_PER_S

DIGITS = 6
TRIES = 5  # wrong PINs in a row, from anywhere, before the wait
WAIT_NS = 60 * NS_PER_S
SESSION_NS = 12 * 3600 * NS_PER_S  # an evening's play
SESSIONS_MAX = 64  # phones at a table, many times over: the oldest goes first beyond it


def pin_path(store: Path) -> Path:
    """The PIN's file: beside the store, named after it (referee.db: referee.pin)."""
    return store.with_suffix(".pin")


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


@dataclass
class _Session:
    pin: str  # the PIN it was opened with: a new PIN ends it
    until_ns: int


class Judges:
    """The PIN's checks and the sessions it opened, in memory: a restart signs everyone out.

    `clock` is monotonic nanoseconds (injected for the tests).
    """

    def __init__(self, path: Path, clock: Callable[[], int]) -> None:
        self.path = path
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._wrong = 0
        self._wait_until_ns = 0

    def wait_s(self) -> int:
        """Seconds until a PIN may be tried again (0: now)."""
        left = self._wait_until_ns - self._clock()
        return math.ceil(left / NS_PER_S) if left > 0 else 0

    def login(self, given: str) -> str | None:
        """A new session's token for the right PIN, else None (counted). The caller checks
        `wait_s` first; PinError when the box's PIN cannot be read."""
        pin = read_pin(self.path)
        # surrogatepass: JSON may carry a lone surrogate, which is no digit either.
        if not secrets.compare_digest(given.encode("utf-8", "surrogatepass"), pin.encode()):
            self._wrong += 1
            if self._wrong >= TRIES:
                self._wrong = 0
                self._wait_until_ns = self._clock() + WAIT_NS
            return None
        self._wrong = 0
        now = self._clock()
        self._sessions = {t: s for t, s in self._sessions.items() if s.until_ns > now}
        while len(self._sessions) >= SESSIONS_MAX:
            del self._sessions[next(iter(self._sessions))]  # the oldest: dicts keep order
        token = secrets.token_urlsafe(32)
        self._sessions[token] = _Session(pin, now + SESSION_NS)
        return token

    def valid(self, token: str | None) -> bool:
        """Whether the token is an open session's, opened with the PIN in force."""
        session = self._sessions.get(token) if token else None
        if session is None or session.until_ns <= self._clock():
            return False
        try:
            return secrets.compare_digest(session.pin.encode(), read_pin(self.path).encode())
        except PinError:
            return False

    def logout(self, token: str) -> None:
        self._sessions.pop(token, None)
