"""One phone never blinds the page (docs/web.md, "Limits"; referee/web/guard.py): its
connections and event streams are bounded, per client and in all, a request that never
comes whole is closed, the page's log grows by a line a burst, and the log beside the
store stays small whoever writes it. Real sockets, a real uvicorn, the real `referee web`."""

import contextlib
import errno
import http.client
import io
import json
import logging
import os
import resource
import selectors
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.daemon.page_process import PageProcess
from referee.store.paths import LOG_NAME
from referee.terminal_log import KEPT_BYTES, StderrLog, keep_small, stderr_to_log
from referee.web.guard import CONNECTIONS_EACH, STREAMS_EACH, Guard, Slots, client_of
from referee.web.serve import LINES, QUIET_S, Bursts

from .test_web import served

ROOT = Path(__file__).resolve().parent.parent
ATTACKER = "127.0.0.2"
PHONE = "127.0.0.1"
UNIT_NOFILE = 1024  # systemd's default soft limit, which referee-web.service keeps


@contextlib.contextmanager
def descriptors(limit):
    """This process may open `limit` descriptors in the block (what it starts keeps it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def flood(address, n, source=ATTACKER, sent=b"GET /api/sta"):
    """n connections from the source address, each sending `sent` (half a request line)
    once it is connected; those the server has not closed within 10 s are returned."""
    selector = selectors.DefaultSelector()  # epoll: beyond select's 1024 descriptors
    for _ in range(n):
        sock = socket.socket()
        sock.setblocking(False)
        sock.bind((source, 0))
        sock.connect_ex(address)
        selector.register(sock, selectors.EVENT_WRITE)
    held = []
    end = time.monotonic() + 10
    while selector.get_map() and time.monotonic() < end:
        for key, _ in selector.select(max(0, end - time.monotonic())):
            sock = key.fileobj
            selector.unregister(sock)
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                with contextlib.suppress(OSError):
                    sock.send(sent)
                held.append(sock)
            else:
                sock.close()
    for key in list(selector.get_map().values()):  # never connected: the backlog's
        key.fileobj.close()
    return held


def still_open(socks, within_s, at_most=0):
    """Those of the sockets the server did not close within the time (EOF or a reset),
    once no more than `at_most` are left, or the time is out."""
    selector = selectors.DefaultSelector()
    for sock in socks:
        selector.register(sock, selectors.EVENT_READ)
    end = time.monotonic() + within_s
    while len(selector.get_map()) > at_most and time.monotonic() < end:
        for key, _ in selector.select(max(0, end - time.monotonic())):
            try:
                closed = key.fileobj.recv(65536) == b""
            except OSError:
                closed = True
            if closed:
                selector.unregister(key.fileobj)
    return [key.fileobj for key in selector.get_map().values()]


def timed_state(url, source=PHONE):
    """GET /api/state from the source address: the seconds it took, and the state."""
    started = time.monotonic()
    opener = urllib.request.build_opener()
    # The bound is "never answered" (the attack before its fix); the 1 s a phone is owed
    # is bench/flood.py's to measure: here two shared cores at a load of 16 took longer.
    with opener.open(f"{url}api/state", timeout=15) as answer:
        state = json.load(answer)
    return time.monotonic() - started, state


def test_one_client_holding_a_thousand_connections_leaves_the_page_to_the_others(store):
    """The attack: 1,100 connections with half a request line, from one address. Before,
    they took the page's 1,024 descriptors: every phone's request timed out, and the log
    beside the store grew by megabytes a second of `accept() out of system resource`. Now
    the address keeps its share, a phone's request is answered (within a second:
    bench/flood.py), and the log has a line for it."""
    with contextlib.ExitStack() as running:
        log_path = running.enter_context(stderr_to_log(store))  # `run --web` in a terminal
        assert log_path == store.parent / LOG_NAME
        with descriptors(UNIT_NOFILE):
            page = running.enter_context(PageProcess(store, None, "127.0.0.1:0"))
        assert page.listening is not None, page.said
        host, port = page.listening.rsplit(":", 1)
        url = f"http://{host}:{port}/"
        timed_state(url)  # served: started, the store read (the first reply may be slow)
        before = log_path.stat().st_size
        attack = flood((host, int(port)), 1100)
        running.callback(lambda: [sock.close() for sock in attack])
        _, state = timed_state(url)
        assert state["calls"][0]["callers"] == [2]
        assert len(still_open(attack, 5, CONNECTIONS_EACH)) == CONNECTIONS_EACH
        assert page.process is not None and page.process.poll() is None
        grew = log_path.stat().st_size - before
        assert grew < 2000, log_path.read_text()[-3000:]  # a line or two, not a flood


def test_a_request_that_never_comes_whole_is_closed(store, caplog):
    (host, port), stop = served(store, Guard(request_s=0.3))
    try:
        cases = {
            "nothing": [],
            "half a request line": [b"GET /api/sta"],
            "a header a byte at a time": [b"GET /api/state HTTP/1.1\r\n", *b"Host: localhost"],
            "half a body": [  # from the page itself: the body is read
                b"POST /api/login HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
                *b'"pin": "1',
            ],
        }
        for case, pieces in cases.items():
            sock = socket.create_connection((host, port), source_address=(ATTACKER, 0))
            with sock:
                started = time.monotonic()
                sock.setblocking(False)
                closed = False
                for piece in [*pieces, None]:
                    # A piece every 0.1 s, as a slow client sends them (the attack).
                    while not closed:
                        ready = selectors.DefaultSelector()
                        ready.register(sock, selectors.EVENT_READ)
                        if ready.select(0.1 if piece is not None else 3):
                            with contextlib.suppress(BlockingIOError, ConnectionError):
                                closed = sock.recv(4096) in (b"",) or True
                        if piece is not None or closed:
                            break
                    if closed:
                        break
                    if piece is not None:
                        try:
                            sock.send(piece if isinstance(piece, bytes) else bytes([piece]))
                        except ConnectionError:  # closed since the last look: what is asked
                            closed = True
                            break
                took = time.monotonic() - started
                assert closed and took < 0.3 + 1.0, (case, took)
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no traceback
        # Whole requests are answered, one after the other on a connection kept.
        phone = http.client.HTTPConnection(host, port, timeout=5)
        for _ in range(2):
            phone.request("GET", "/api/state")
            assert phone.getresponse().read() and phone.sock is not None
        phone.close()
    finally:
        stop()


def test_a_thousand_event_streams_from_one_phone_leave_room_for_the_others(store):
    """The attack: 1,000 event streams from one address, about 30 kB each (67 MB, over the
    unit's MemoryMax). Now it gets STREAMS_EACH, the rest a 429 or a closed connection,
    and another phone's stream its state at once."""
    (host, port), stop = served(store)
    try:
        request = b"GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n"
        attack = flood((host, port), 1000, sent=request)
        statuses = []
        for sock in attack:
            sock.setblocking(True)
            sock.settimeout(5)
            with contextlib.suppress(OSError):
                statuses.append(sock.recv(12)[9:12])
        assert statuses.count(b"200") == STREAMS_EACH
        assert statuses.count(b"429") == CONNECTIONS_EACH - STREAMS_EACH
        with socket.create_connection((host, port), timeout=5) as phone:
            phone.sendall(request)
            got = b""
            while b"event: state" not in got:
                got += phone.recv(65536)
            assert got.startswith(b"HTTP/1.1 200 ")
        for sock in attack:
            sock.close()
    finally:
        stop()


@settings(max_examples=150)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from("take give"), st.integers(0, 5), st.integers(0, 20)),
        max_size=80,
    ),
    each=st.integers(1, 5),
    total=st.integers(1, 12),
)
def test_a_client_holds_its_share_and_takes_only_from_one_holding_more(steps, each, total):
    slots = Slots(each, total)
    held: list = []
    ended: list = []
    for action, who, pick in steps:
        client = f"10.0.0.{who}"
        if action == "give" and held:
            place = held.pop(pick % len(held))
            slots.give_back(place)
            continue
        mine, before = slots.of(client), {f"10.0.0.{n}": slots.of(f"10.0.0.{n}") for n in range(6)}
        place = slots.take(client, lambda: ended.append(True))
        if place is None:
            # Refused only at its own bound, or when no one holds two more than it.
            assert mine >= each or (len(slots) >= total and max(before.values()) < mine + 2)
        else:
            held.append(place)
            if sum(before.values()) >= total:  # all taken: one place was taken from another
                assert ended
                taken_from = [c for c, n in before.items() if slots.of(c) == n - 1]
                assert taken_from and all(before[c] >= mine + 2 for c in taken_from)
                ended.clear()
                held = [p for p in held if p.held]
        assert len(slots) <= total and all(slots.of(c) <= each for c in before)
        assert len(slots._held) == len({p.client for p in held if p.held})  # none empty


def test_a_client_is_its_address_and_an_ipv6_one_its_network():
    assert client_of("192.168.1.23") == "192.168.1.23"
    assert client_of("::ffff:192.168.1.23") == "192.168.1.23"
    assert client_of("2001:db8:1:2:aaaa::1") == client_of("2001:db8:1:2:bbbb::2")
    assert client_of("2001:db8:1:2::1") != client_of("2001:db8:1:3::1")
    assert client_of("::1") == "::1"
    assert client_of("testclient") == "testclient"


def test_the_descriptors_bound_the_connections_in_all():
    guard = Guard()
    guard.fit(UNIT_NOFILE)
    assert guard.connections.total == 128  # the unit's LimitNOFILE leaves room
    guard.fit(200)
    assert guard.connections.total == (200 - 64) // 2  # each may send a sound too


def test_the_units_limits_hold_the_bounds():
    """referee-web.service: its descriptors hold every connection and the spare ones."""
    unit = (ROOT / "systemd" / "referee-web.service").read_text()
    nofile = int(unit.split("\nLimitNOFILE=", 1)[1].split("\n", 1)[0])
    guard = Guard()
    guard.fit(nofile)
    assert guard.connections.total == Guard().connections.total


# The log


class Clock:
    def __init__(self):
        self.s = 1000.0

    def __call__(self):
        return self.s


def logged(records):
    """What a handler with the page's filter writes of the records, a line each."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    clock = Clock()
    handler.addFilter(Bursts(clock))
    for at, record in records:
        clock.s = 1000.0 + at
        handler.handle(record)
    return out.getvalue()


def record(msg, *args, name="uvicorn.error", error=None):
    exc_info = None
    if error is not None:
        try:
            raise error
        except OSError:
            exc_info = sys.exc_info()
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, exc_info)


def test_a_burst_in_the_pages_log_is_one_line():
    refused = "refused a connection from %s: it holds %d"
    accept = "socket.accept() out of system resource"
    records = [(n / 1000, record(refused, ATTACKER, n)) for n in range(10_000)]
    records += [
        (n / 1000, record(accept, error=OSError(errno.EMFILE, "Too many open files")))
        for n in range(10_000)
    ]
    records.append((QUIET_S + 11, record(refused, ATTACKER, 3)))
    records.append((QUIET_S + 11, record(accept, error=OSError(errno.EMFILE, "Too many"))))
    text = logged(records)
    lines = text.splitlines()
    assert text.count("Traceback") == 1  # a traceback once: the first of its kind
    assert lines[0] == f"uvicorn.error: refused a connection from {ATTACKER}: it holds 0"
    assert lines[-2] == (
        f"uvicorn.error: refused a connection from {ATTACKER}: it holds 3"
        f" (9999 more like it in {QUIET_S + 11:.0f} s)"
    )
    assert lines[-1] == (
        f"uvicorn.error: {accept}: OSError: [Errno 24] Too many"
        f" (9999 more like it in {QUIET_S + 11 - 0.001:.0f} s)"
    )
    assert len(text) < 2000


def test_many_kinds_of_lines_are_a_few_lines_a_minute():
    records = [(n / 100, record(f"line {n}")) for n in range(1000)]
    records.append((QUIET_S + 20, record("one more")))
    lines = logged(records).splitlines()
    assert len(lines) == LINES + 1
    assert lines[-1] == f"uvicorn.error: one more ({1000 - LINES} other lines left out before it)"


@settings(max_examples=60)
@given(
    lines=st.lists(st.text(st.characters(codec="ascii", exclude_characters="\n"), max_size=300)),
    kept=st.integers(1, 4000),
)
def test_a_log_moved_aside_keeps_its_last_whole_lines_under_its_bound(
    tmp_path_factory, lines, kept
):
    """The other writer goes on writing while one process moves the log aside (it found the
    lock taken): the file is then past the bound by what it wrote. What goes to .1 is the
    last whole lines that fit under the bound, never more (CI once saw .1 at 1,013,088)."""
    path = tmp_path_factory.mktemp("log") / LOG_NAME
    text = "".join(f"{line}\n" for line in lines).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, text)
        keep_small(fd, kept)
    finally:
        os.close(fd)
    kept_path = path.with_name(LOG_NAME + ".1")
    if len(text) < kept:
        assert path.read_bytes() == text and not kept_path.exists()
        return
    aside = kept_path.read_bytes()
    assert path.read_bytes() == b""
    assert len(aside) <= kept and text.endswith(aside)
    # whole lines: it starts where a line starts, and the line before it would not fit
    start = len(text) - len(aside)
    if start:
        assert text[start - 1 : start] == b"\n"
        line_before = text.rfind(b"\n", 0, start - 1) + 1
        assert len(text) - line_before > kept


def test_the_log_beside_the_store_stays_small_whoever_writes_it(tmp_path, monkeypatch):
    """The daemon's log and its page's, in the one file beside the store (`run --web` in a
    terminal): a flood of lines from both keeps it under KEPT_BYTES, the lines before in
    referee.log.1, under it too; on a 48 MB disk, before, it filled the disk in 11 s."""
    store = tmp_path / "referee.db"
    line = "x" * 200
    page = (  # the page's process: writes to the same file, its standard error
        "import logging; from referee.terminal_log import StderrLog\n"
        "handler = StderrLog(); logging.basicConfig(handlers=[handler], level=logging.INFO)\n"
        f"for n in range(15_000): logging.info('page %d {line}', n)\n"
        "logging.info('page done')\n"
    )
    with stderr_to_log(store) as path:
        assert path is not None
        # The daemon's standard error, which pytest holds: its descriptor, the file now.
        monkeypatch.setattr(sys, "stderr", open(2, "w", closefd=False))  # noqa: SIM115
        logger = logging.getLogger("daemon")
        logger.propagate = False  # to the file alone, as the daemon's log is
        handler = StderrLog()
        logger.addHandler(handler)
        try:
            writer = subprocess.Popen([sys.executable, "-c", page], cwd=ROOT)
            for n in range(15_000):
                logger.warning("daemon %d %s", n, line)
            assert writer.wait(60) == 0
            logger.warning("daemon done")
        finally:
            logger.removeHandler(handler)
            logger.propagate = True
    kept = path.with_name(LOG_NAME + ".1")
    assert path.stat().st_size <= KEPT_BYTES + 300
    assert kept.stat().st_size <= KEPT_BYTES + 300
    text = path.read_text()
    assert text.endswith("daemon done\n") and "\0" not in text, text[-300:]
    assert sorted(p.name for p in tmp_path.iterdir()) == [LOG_NAME, LOG_NAME + ".1"]
