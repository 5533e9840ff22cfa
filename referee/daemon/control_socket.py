"""The daemon's end of the control socket (control.py): the page's writes, handed to the
main loop.

The socket is beside the store (paths.socket_path), mode 0600: only the daemon's user may
connect, and the PIN is the page's server's business. A thread of the socket's own accepts
each connection at once, and a thread for each reads and checks its request, so that a
slow or hostile peer never holds the main loop nor the other peers; the loop gets it
through its Inbox (inbox.Asked), applies it between two decisions and answers once the
change is on the screen and on the disk (daemon/requests.py). Two judges writing at once
are both served: at most MAX_ASKS requests wait for the loop at a time, and one more is
answered BUSY at once (ask again), never left to its asker's timeout.
"""

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
from pathlib import Path
from typing import Any

from referee.control import ANSWER_S, REQUEST_MAX, RequestError, parse_request, socket_address
from referee.inbox import Asked, Inbox, Said, Table

log = logging.getLogger(__name__)

READ_S = 1.0  # a peer that sends no whole request in this long is dropped
# Requests waiting for the loop at once: the loop takes them all at its next pass, and
# the ledger writes them together. One more is answered BUSY, with trouble: ask again.
MAX_ASKS = 16
BUSY = "the referee is busy with other requests: ask again"
STOPPED = "the referee stopped before it was done"
# Connections served at once (read, checked, waiting or told BUSY); more wait in the
# listening socket's backlog until one ends, which a peer's READ_S bounds.
MAX_PEERS = 2 * MAX_ASKS
BACKLOG = 64


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
        self._said: Said = None

    def take(self) -> bool:
        with self._lock:
            self._taken = not self._dropped
            return self._taken

    def give(self, error: str | None, *, trouble: bool = False, said: Said = None) -> None:
        with self._lock:
            if not self._given.is_set():
                self._error, self._trouble, self._said = error, trouble, said
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
            return {"ok": True} if self._said is None else {"ok": True, "said": self._said}
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
        # What the camera sees is asked ten times a second while a photo is read: not a
        # line each in the journal.
        said = log.debug if isinstance(request, Table) else log.info
        said("%s asks: %s", _peer(conn), request.asked())
        self._inbox.put(Asked(request, answer))
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
        with socket_address(made) as address:
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
