"""The daemon's control socket: the page's writes, handed to the main loop as requests.

The daemon owns the store, so the page's server (`referee web`, a process of its own)
never writes it: it asks the daemon here (docs/design.md, "The page"). A Unix stream
socket beside the store, named after it (referee.db: referee.sock), mode 0600: only the
daemon's user may connect, and the PIN is the page's server's business.

One request per connection, one line of JSON of at most REQUEST_MAX bytes, sent within
READ_S; one line back:

    {"op": "name", "seat": 2, "name": "Ann"}   ->   {"ok": true}  or  {"error": "one line"}
    {"op": "rules", "values": {"pointout_s": 5}}   the next games' rules (config/next_rules.py)
    {"op": "filerules"}                            the settings file's again: phones' forgotten
    {"op": "newgame"}                              a new game, as SUPER after the end
    {"op": "clips", "game": 3}                     delete the clips of a game's calls

An error with `"trouble": true` is the box's (it stopped, the disk refused, it did not
answer in time), not the request's: the same request may do later.

A thread of the socket's own accepts each connection at once, and a thread for each
reads and checks its request, so that a slow or hostile peer never holds the main loop
nor the other peers; the loop gets it through its Inbox, applies it between two
decisions and answers once the change is on the screen and on the disk (App.name_seat,
App.set_rules, App.new_game, App.delete_clips). Two judges writing at once are both
served: at most MAX_ASKS requests wait for the loop at a time, and one more is answered
BUSY at once (ask again), never left to its asker's timeout.
"""

import asyncio
import contextlib
import json
import logging
import os
import select
import socket
import stat
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .inbox import (
    ClipsRequest,
    Inbox,
    InboxItem,
    NameRequest,
    NewGameRequest,
    Reply,
    RulesRequest,
)
from .names import check_name
from .units import ID_MAX, MAX_SEATS

log = logging.getLogger(__name__)

REQUEST_MAX = 4096  # bytes: a name, the rule keys and a few words
READ_S = 1.0  # a peer that sends no whole request in this long is dropped
ANSWER_S = 2.0  # the loop's answer: the name shown and on the disk (an SD card's stall)
# A socket's path is at most 107 bytes (sun_path); a longer one is reached through its
# folder's descriptor (/proc/self/fd/N/NAME), as long as the name itself is short.
SUN_PATH_MAX = 107
KEYS = {"seat", "name"}
# Requests waiting for the loop at once: the loop takes them all at its next pass, and
# the ledger writes them together. One more is answered BUSY, with trouble: ask again.
MAX_ASKS = 16
BUSY = "the referee is busy with other requests: ask again"
STOPPED = "the referee stopped before it was done"
# Connections served at once (read, checked, waiting or told BUSY); more wait in the
# listening socket's backlog until one ends, which a peer's READ_S bounds.
MAX_PEERS = 2 * MAX_ASKS
BACKLOG = 64


class RequestError(ValueError):
    """A request that cannot be taken: str() says why, in one line."""


class NotRunning(Exception):
    """No daemon answered at the socket: str() says why, in one line."""


@dataclass(frozen=True)
class NameSeat:
    """Give the seat a player's name (checked: names.py)."""

    seat: int
    name: str


@dataclass(frozen=True)
class SetRules:
    """Set these rule keys for the next games: a JSON object, checked by the loop against
    the rules it has, as the settings file's [rules] would be (config/next_rules.py)."""

    values: dict[str, object]


@dataclass(frozen=True)
class NewGame:
    """A new game, as SUPER after the end."""


@dataclass(frozen=True)
class DeleteClips:
    """Delete the clips of a game's calls."""

    game: int


@dataclass(frozen=True)
class FileRules:
    """The next games' rules as the settings file says: every key a phone set forgotten
    (`referee config --reset-page`)."""


Request = NameSeat | SetRules | FileRules | NewGame | DeleteClips


def parse_request(data: bytes) -> Request:
    """A request's line, or RequestError saying what is wrong with it."""
    if len(data) > REQUEST_MAX:
        raise RequestError(f"a request is at most {REQUEST_MAX} bytes")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise RequestError("a request is UTF-8") from None
    except (ValueError, RecursionError):
        raise RequestError("a request is one line of JSON") from None
    if not isinstance(value, dict):
        raise RequestError("a request is a JSON object")
    rest = {k: v for k, v in value.items() if k != "op"}
    match value.get("op"):
        case "name":
            return name_request(rest)
        case "rules":
            return rules_request(rest)
        case "newgame":
            return new_game_request(rest)
        case "clips":
            return clips_request(rest)
        case "filerules":
            if unknown := sorted(rest):
                raise RequestError(f"unknown key {_shown(unknown[0])}: it takes none")
            return FileRules()
    raise RequestError(
        'unknown "op": the box knows "name", "rules", "filerules", "newgame" and "clips"'
    )


def name_request(value: dict[str, Any]) -> NameSeat:
    """`{"seat": N, "name": "..."}` checked, or RequestError: the page's server checks
    what it is sent too, before it asks."""
    if unknown := sorted(value.keys() - KEYS):
        raise RequestError(f"unknown key {_shown(unknown[0])}: give a seat and a name")
    seat, name = value.get("seat"), value.get("name")
    if not isinstance(seat, int) or isinstance(seat, bool):
        raise RequestError('"seat" must be a seat\'s number')
    if not 1 <= seat <= MAX_SEATS:
        raise RequestError(f"seat out of range: 1 to {MAX_SEATS}")
    if not isinstance(name, str):
        raise RequestError('"name" must be a string')
    try:
        return NameSeat(seat, check_name(name))
    except ValueError as err:
        raise RequestError(str(err)) from None


def rules_request(value: dict[str, Any]) -> SetRules:
    """`{"values": {...}}`, a JSON object of rule keys; or RequestError."""
    if unknown := sorted(value.keys() - {"values"}):
        raise RequestError(f"unknown key {_shown(unknown[0])}: give the values")
    values = value.get("values")
    if not isinstance(values, dict):
        raise RequestError('"values" must be a JSON object of rule keys')
    return SetRules(values)


def new_game_request(value: dict[str, Any]) -> NewGame:
    """`{}`: a new game takes nothing else; or RequestError."""
    if unknown := sorted(value.keys()):
        raise RequestError(f"unknown key {_shown(unknown[0])}: a new game takes none")
    return NewGame()


def clips_request(value: dict[str, Any]) -> DeleteClips:
    """`{"game": N}`: the game whose clips go; or RequestError."""
    if unknown := sorted(value.keys() - {"game"}):
        raise RequestError(f"unknown key {_shown(unknown[0])}: give the game")
    game = value.get("game")
    if not isinstance(game, int) or isinstance(game, bool) or not 1 <= game <= ID_MAX:
        raise RequestError(f'"game" must be a game\'s id, 1 to {ID_MAX}')
    return DeleteClips(game)


def _shown(text: str) -> str:
    shown = json.dumps(text)
    return shown if len(shown) <= 30 else f"{shown[:30]}..."


class Answer:
    """One request's answer, from the main loop (and the ledger's writer) to the socket's
    thread, which waits for it a bounded time (inbox.Reply)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._given = threading.Event()
        self._taken = False
        self._dropped = False
        self._error: str | None = None
        self._trouble = False

    def take(self) -> bool:
        with self._lock:
            self._taken = not self._dropped
            return self._taken

    def give(self, error: str | None, *, trouble: bool = False) -> None:
        with self._lock:
            if not self._given.is_set():
                self._error, self._trouble = error, trouble
                self._given.set()

    def wait(self, timeout_s: float) -> dict[str, Any]:
        """The answer to send: given in time, or why there is none. A request the loop
        has not taken by then never will be."""
        if not self._given.wait(timeout_s):
            with self._lock:
                if not self._given.is_set():
                    if self._taken:
                        said = "on the box's screen, not saved yet: see its log"
                        return {"error": said, "trouble": True}
                    self._dropped = True
                    said = f"the referee did not take it within {timeout_s:g} s"
                    return {"error": said, "trouble": True}
        if self._error is None:
            return {"ok": True}
        return {"error": self._error, "trouble": True} if self._trouble else {"error": self._error}


class ControlSocket:
    """The socket, listening, and its threads: one that accepts, and one a connection
    that reads its request and waits for its answer; `close` stops them and removes the
    socket's file."""

    def __init__(self, path: Path, inbox: Inbox, *, answer_s: float = ANSWER_S) -> None:
        self.path = path
        self._inbox = inbox
        self._answer_s = answer_s
        self._listener = _listen(path)
        self._inode = path.stat().st_ino
        self._changed = threading.Condition()  # guards what follows
        self._stopping = False
        self._peers: set[socket.socket] = set()  # being served
        self._waiting: set[Answer] = set()  # the answers the peers' threads wait for
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name="control", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._stopping or len(self._peers) < MAX_PEERS)
            ready, _, _ = select.select([self._listener.fileno(), self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                conn, _ = self._listener.accept()
            except OSError:
                continue  # the peer gave up before it was accepted
            with self._changed:
                if self._stopping:
                    conn.close()
                    return
                self._peers.add(conn)
            threading.Thread(
                target=self._serve_peer, args=(conn,), name="control peer", daemon=True
            ).start()

    def _serve_peer(self, conn: socket.socket) -> None:
        try:
            with conn:
                self._serve_one(conn)
        finally:
            with self._changed:
                self._peers.discard(conn)
                self._changed.notify_all()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            data = _read_line(conn, time.monotonic() + READ_S)
            request = parse_request(data)
        except RequestError as err:
            # Cut off by close(): the request was not half sent by its peer.
            stopped = {"error": STOPPED, "trouble": True} if self._stopping else None
            _send(conn, stopped or {"error": str(err)})
            return
        except OSError:
            return  # gone, or too slow: nobody to answer
        answer = Answer()
        with self._changed:
            if self._stopping:
                refused: str | None = STOPPED
            elif len(self._waiting) >= MAX_ASKS:
                refused = BUSY
            else:
                refused = None
                self._waiting.add(answer)
        if refused is not None:
            log.info("%s asked, and was told: %s", _peer(conn), refused)
            _send(conn, {"error": refused, "trouble": True})
            return
        log.info("%s asks: %s", _peer(conn), _asked(request))
        self._inbox.put(_item(request, answer))
        try:
            _send(conn, answer.wait(self._answer_s))
        finally:
            with self._changed:
                self._waiting.discard(answer)

    def close(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
            # What the loop has not answered, never will; a peer still sending is cut off.
            for waiting in self._waiting:
                waiting.give(STOPPED, trouble=True)
            for peer in self._peers:
                with contextlib.suppress(OSError):
                    peer.shutdown(socket.SHUT_RD)
        os.write(self._stop_w, b"!")
        self._thread.join()
        with self._changed:  # each peer's thread ends once its answer is sent
            self._changed.wait_for(lambda: not self._peers, READ_S)
        self._listener.close()
        os.close(self._stop_r)
        os.close(self._stop_w)
        with contextlib.suppress(OSError):
            if self.path.lstat().st_ino == self._inode:  # still ours
                self.path.unlink()


def _item(request: Request, reply: Reply) -> InboxItem:
    """The request as the main loop takes it."""
    match request:
        case NameSeat(seat, name):
            return NameRequest(seat, name, reply)
        case SetRules(values):
            return RulesRequest(values, reply)
        case FileRules():
            return RulesRequest({}, reply, reset=True)
        case NewGame():
            return NewGameRequest(reply)
        case DeleteClips(game):
            return ClipsRequest(game, reply)


def _asked(request: Request) -> str:
    """What is asked, for the log, in a line of bounded length."""
    match request:
        case NameSeat(seat, name):
            return f"seat {seat} named {name}"
        case SetRules(values):
            said = json.dumps(values)  # escaped: one line, whatever it holds
            return f"the next games' rules {said if len(said) <= 200 else said[:200] + '...'}"
        case FileRules():
            return "the settings file's rules again"
        case NewGame():
            return "a new game"
        case DeleteClips(game):
            return f"the clips of game {game} deleted"


def open_control(path: Path, inbox: Inbox) -> ControlSocket | None:
    """The control socket at path, or None (and why in the log): the game goes on
    without the page's writes."""
    try:
        return ControlSocket(path, inbox)
    except OSError as err:
        log.warning("%s: no control socket (%s): the page's writes are refused", path, err)
        return None


def _listen(path: Path) -> socket.socket:
    """Listen at path, made 0600 before it is there: a socket's file is created with the
    umask's mode, so it is bound under a private name and renamed into place."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise FileExistsError(f"{path} is there and is not a socket")
        # The daemon holds the store's lock: a socket of its name is a dead daemon's.
        path.unlink()
    made = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        made.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _address(made) as address:
            sock.bind(address)
        try:
            made.chmod(0o600)
            made.rename(path)
        except OSError:
            made.unlink()
            raise
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


@contextlib.contextmanager
def _address(path: Path) -> Iterator[str]:
    """The path as a socket's address: itself, or through its folder's descriptor when
    it is too long for one."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        yield str(path)
        return
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{path.name}"
    finally:
        os.close(folder)


def _read_line(conn: socket.socket, deadline: float) -> bytes:
    """The request's line (without its newline), read by `deadline`: TimeoutError after
    it; RequestError once it is longer than a request may be."""
    data = b""
    while b"\n" not in data:
        conn.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = conn.recv(REQUEST_MAX + 1 - len(data))
        if not chunk:
            break  # the peer sent its request and shut its side: no newline needed
        data += chunk
        if len(data) > REQUEST_MAX and b"\n" not in data:
            raise RequestError(f"a request is at most {REQUEST_MAX} bytes")
    return data.split(b"\n", 1)[0]


def _send(conn: socket.socket, answer: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # the asker gave up: nobody to tell
        conn.settimeout(READ_S)
        conn.sendall(json.dumps(answer).encode() + b"\n")


def _peer(conn: socket.socket) -> str:
    """Who is asking, for the log (SO_PEERCRED: the kernel's word, not the peer's)."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, _ = struct.unpack("3i", creds)
    except OSError:
        return "a peer"
    return f"pid {pid} (uid {uid})"


async def ask(path: Path, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The daemon's answer to one request, within timeout_s; NotRunning when none comes."""
    try:
        with _address(path) as address:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(address, limit=REQUEST_MAX), timeout_s
            )
    except (FileNotFoundError, ConnectionRefusedError, TimeoutError):
        raise NotRunning("the referee is not running") from None
    except OSError as err:
        raise NotRunning(f"the referee cannot be reached: {err.strerror}") from None
    try:
        writer.write(json.dumps(request).encode() + b"\n")
        line = await asyncio.wait_for(reader.readline(), timeout_s)
    except TimeoutError:
        raise NotRunning(f"the referee did not answer within {timeout_s:g} s") from None
    except (OSError, ValueError):  # ValueError: a line longer than the limit
        raise NotRunning("the referee did not answer") from None
    finally:
        writer.close()
    try:
        answer = json.loads(line)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise NotRunning("the referee did not answer")
    return answer
