"""Who may write from a phone: the sessions the box's PIN opens, and the turns in which
PINs are checked (docs/web.md, "Who may do what").

The PIN is in its file beside the store (store/pin.py). The server reads it again at every
login, so a new PIN takes effect at once, and ends the sessions the old one opened.
"""

import asyncio
import math
import secrets
from collections import Counter, deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from itertools import count
from pathlib import Path

from referee.errors import PinError
from referee.store.pin import read_pin
from referee.units import NS_PER_S

TRIES = 5  # PINs checked at once, at rest
EVERY_NS = 12 * NS_PER_S  # then one every 12 s: five a minute, from everywhere together
HOLD_NS = 60 * NS_PER_S  # how long a login waits for its turn before a 429
MEMORY_NS = 3600 * NS_PER_S  # how long a wrong PIN counts against its client's turns
SESSION_NS = 12 * 3600 * NS_PER_S  # an evening's play
SESSIONS_MAX = 64  # phones at a table, many times over: the oldest goes first beyond it


class Turns:
    """Whose PIN is checked next: the constant rate of every guess, and the judges' way
    through it (docs/web.md, "Who may do what").

    Every check is a guess answered, right or wrong, so every check counts, whoever asks:
    TRIES at once, then one every EVERY_NS (a bucket of TRIES refilled one at a time, kept
    as the time it is next full: GCRA). A right PIN gives its check back, so a judge's
    login costs the guessing nothing. A login that finds no check free is not refused: it
    waits its turn, one waiting login a client (a newer one takes the older's place). A
    turn goes to the waiting client with the fewest wrong PINs in the last MEMORY_NS, then
    to who asked first: an attacker's address goes behind a judge's once it has guessed
    wrong, so a judge waits at most for the next free check, and, against many addresses,
    for those of them that have not guessed yet and asked first. Pure: `now` is given.
    """

    def __init__(
        self, tries: int = TRIES, every_ns: int = EVERY_NS, memory_ns: int = MEMORY_NS
    ) -> None:
        self.tries, self.every_ns, self.memory_ns = tries, every_ns, memory_ns
        self._full_at_ns: int | None = None  # when the bucket is full again (None: it is)
        self._waiting: dict[str, tuple[int, int]] = {}  # client: (asked at, ticket)
        self._tickets = count()
        self._wrong: deque[tuple[int, str]] = deque()  # the wrong PINs remembered, oldest first
        self._wrong_by: Counter[str] = Counter()

    def ask(self, client: str, now: int) -> int:
        """The client waits for a turn: its ticket. A client waits once: a newer login
        takes the place (and the time) of one that waits still."""
        asked = self._waiting.get(client, (now, 0))[0]
        ticket = next(self._tickets)
        self._waiting[client] = (asked, ticket)
        return ticket

    def ticket(self, client: str) -> int | None:
        """The ticket the client waits with, if it waits."""
        waiting = self._waiting.get(client)
        return None if waiting is None else waiting[1]

    def waits(self, client: str, ticket: int) -> bool:
        """Whether the ticket still waits (a newer login did not take its place)."""
        return self.ticket(client) == ticket

    def first(self, now: int) -> tuple[str, int] | None:
        """The waiting client placed first, and its ticket; None if none waits."""
        if not self._waiting:
            return None
        client = min(self._waiting, key=lambda c: (self.wrong(c, now), *self._waiting[c]))
        return client, self._waiting[client][1]

    def leave(self, client: str, ticket: int) -> None:
        if self.waits(client, ticket):
            del self._waiting[client]

    def turn(self, client: str, ticket: int, now: int) -> bool:
        """Whether the ticket's PIN is checked now: a check is free, and no client placed
        before it waits. If so the check is taken, and it waits no more."""
        if self.free_at_ns(now) > now or self.first(now) != (client, ticket):
            return False
        del self._waiting[client]
        self._full_at_ns = max(self._full_at_ns or now, now) + self.every_ns
        return True

    def checked(self, client: str, now: int, *, wrong: bool) -> None:
        """A turn's check done: a wrong PIN is remembered against its client; any other
        (right, or none read) gives its check back."""
        if wrong:
            self._wrong.append((now, client))
            self._wrong_by[client] += 1
        elif self._full_at_ns is not None:
            self._full_at_ns -= self.every_ns

    def free_at_ns(self, now: int) -> int:
        """When a check is free: `now` or earlier if one is."""
        if self._full_at_ns is None:
            return now
        return self._full_at_ns - (self.tries - 1) * self.every_ns

    def wrong(self, client: str, now: int) -> int:
        """The client's wrong PINs in the last MEMORY_NS."""
        while self._wrong and self._wrong[0][0] <= now - self.memory_ns:
            _, old = self._wrong.popleft()
            self._wrong_by[old] -= 1
            if not self._wrong_by[old]:
                del self._wrong_by[old]
        return self._wrong_by[client]


class Waited(Exception):
    """A login's turn did not come: another login of its client took its place, or it
    waited HOLD_NS. `seconds`: when to ask again."""

    def __init__(self, why: str, seconds: int) -> None:
        super().__init__(why)
        self.seconds = seconds


@dataclass
class _Session:
    pin: str  # the PIN it was opened with: a new PIN ends it
    until_ns: int


class Judges:
    """The PIN's checks and the sessions it opened, in memory: a restart signs everyone out.

    `clock` is monotonic nanoseconds (injected for the tests).
    """

    def __init__(self, path: Path, clock: Callable[[], int], turns: Turns | None = None) -> None:
        self.path = path
        self._clock = clock
        self._turns = turns or Turns()
        self._sessions: dict[str, _Session] = {}
        # Each waiting login's wake, by ticket: only the one whose turn it is is woken
        # (waking all at each change would cost the square of the logins waiting).
        self._wakes: dict[int, asyncio.Event] = {}
        self._timer: asyncio.TimerHandle | None = None  # the next check free

    async def login(self, client: str, given: str) -> str | None:
        """A new session's token for the right PIN, else None, once the client's turn came
        (Turns); Waited if it did not; PinError when the box's PIN cannot be read."""
        older = self._turns.ticket(client)
        ticket = self._turns.ask(client, self._clock())
        wake = self._wakes[ticket] = asyncio.Event()
        if older is not None:
            self._wakes[older].set()  # it waits no more: its place is this one's
        until = self._clock() + HOLD_NS
        try:
            self._next()
            while not self._turns.turn(client, ticket, now := self._clock()):
                if not self._turns.waits(client, ticket):
                    raise Waited("another PIN from this phone came after it", 1)
                if now >= until:
                    left = self._turns.free_at_ns(now) - now
                    seconds = math.ceil(max(left, self._turns.every_ns) / NS_PER_S)
                    raise Waited(f"others are trying PINs: try again in {seconds} s", seconds)
                wake.clear()
                with suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), (until - now) / NS_PER_S)
        except BaseException:
            self._turns.leave(client, ticket)
            raise
        finally:
            del self._wakes[ticket]
            self._next()
        # The check and its count together, with no wait between: no other login can
        # take a check between them.
        try:
            pin = read_pin(self.path)
        except PinError:
            self._turns.checked(client, now, wrong=False)
            raise
        # surrogatepass: JSON may carry a lone surrogate, which is no digit either.
        right = secrets.compare_digest(given.encode("utf-8", "surrogatepass"), pin.encode())
        self._turns.checked(client, now, wrong=not right)
        return self._opened(pin, now) if right else None

    def _next(self) -> None:
        """Wake the login whose turn it is, now if a check is free, else when one is."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        now = self._clock()
        first = self._turns.first(now)
        if first is None:
            return
        free = self._turns.free_at_ns(now)
        if free <= now:
            self._wakes[first[1]].set()
        else:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later((free - now) / NS_PER_S, self._next)

    def _opened(self, pin: str, now: int) -> str:
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
