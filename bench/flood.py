"""One client against the page: a real phone is still answered within a second while
another address holds a thousand connections (issue 29; docs/web.md, "Limits").

    .venv/bin/python bench/flood.py [--seconds 6] [--out FILE]

`referee web` runs as its unit runs it (bench/web.py's `serving`, its descriptors limited
to the unit's LimitNOFILE, 1024), its log in a file. Each case an attacker, a process of
its own (this file with --attack), does one thing for the case's seconds, and a phone,
from an address of its own, asks meanwhile for the state, the history and the stats (a
new connection each, as a phone's fetch may), one after the other, and then opens an
event stream:

    none      nothing: the baseline, in the same run;
    hold      1,100 connections from one address, each with half a request line, held;
    reopen    the same, and each one the server closes opened again at once (at most
              ATTACKS_PER_S connections a second: a laptop on the Wi-Fi);
    streams   1,100 event streams from one address, reopened likewise;
    spread    1,100 connections with half a request line from 40 addresses, reopened;
    sounds    100 downloads of a clip's WAV at once from 10 addresses, each downloaded
              again as soon as it is done.

For each: the phone's answers (median and slowest, ms; failed: none or not 200 within
5 s), its stream's first state (ms), the server's CPU (% of a core over the case), its
RSS at the end and highest (VmHWM), what its log grew by, its open descriptors at the
end, and the attacker's connections made and still open at the end. The exit status is
1 if a phone's answer or stream took a second or more, or failed. The output is written
to --out too (bench/results/flood-COMMIT.txt by default).
"""

import argparse
import contextlib
import json
import selectors
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from machine import header, load, store_dir
from web import cpu_s, phone_address, rss_mb, serving

import referee
from referee.audio.clips import Clip, ClipStore, Marker
from referee.rules import Press, Settings
from referee.store.paths import clips_folder
from referee.store.store import Store

ROOT = Path(__file__).resolve().parents[1]
NOFILE = 1024  # systemd/referee-web.service's LimitNOFILE
CONNECTIONS = 1100  # the issue's: past the 1,024 descriptors of the unit
ATTACKS_PER_S = 2000
SLOW_S = 1.0  # a phone's answer this slow fails the run
PHONE = 0  # bench/web.py's phone_address: 127.0.0.10
HALF = b"GET /api/sta"
CASES = ["none", "hold", "reopen", "streams", "spread", "sounds"]
RATE = 48_000


# The attacker, a process of its own: `flood.py --attack KIND --port PORT [--wav NAME]`.


def attack(kind: str, port: int, wav: str) -> None:
    """Places the case's connections, says `ready`, and keeps at it until its standard
    input ends; then prints {"made": connections made, "open": open now} and returns."""
    if kind == "spread":
        sources = [f"127.0.1.{1 + n % 40}" for n in range(CONNECTIONS)]
    elif kind == "sounds":
        sources = [f"127.0.2.{1 + n % 10}" for n in range(100)]
    else:
        sources = ["127.0.0.2"] * CONNECTIONS
    request = {
        "streams": b"GET /api/events HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        "sounds": (
            f"GET /api/clips/{wav}.wav HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        ).encode(),
    }.get(kind, HALF)
    again = kind != "hold"
    selector = selectors.DefaultSelector()  # epoll: a thousand sockets and more
    made = 0
    budget, budget_at = float(ATTACKS_PER_S), time.monotonic()

    def open_one(source: str) -> None:
        nonlocal made
        sock = socket.socket()
        sock.setblocking(False)
        sock.bind((source, 0))
        sock.connect_ex(("127.0.0.1", port))
        selector.register(sock, selectors.EVENT_WRITE, source)
        made += 1

    for source in sources:
        open_one(source)
    selector.register(sys.stdin, selectors.EVENT_READ, None)
    waiting: list[str] = []  # addresses whose connection was closed, to open again
    ready_said = False
    while True:
        if not ready_said and made >= len(sources):
            print("ready", flush=True)
            ready_said = True
        now = time.monotonic()
        budget = min(ATTACKS_PER_S, budget + (now - budget_at) * ATTACKS_PER_S)
        budget_at = now
        while waiting and budget >= 1:
            open_one(waiting.pop())
            budget -= 1
        for key, events in selector.select(0.01 if waiting else None):
            if key.data is None:  # standard input: the end
                socks = [k.fileobj for k in selector.get_map().values() if k.data is not None]
                print(json.dumps({"made": made, "open": len(socks)}), flush=True)
                return
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if events & selectors.EVENT_WRITE:
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    with contextlib.suppress(OSError):
                        sock.send(request)
                    selector.modify(sock, selectors.EVENT_READ, key.data)
                    continue
                closed = True
            else:
                try:
                    closed = sock.recv(65536) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
            if closed:
                selector.unregister(sock)
                sock.close()
                if again:
                    waiting.append(key.data)


# The benchmark


def phone_get(port: int, path: str) -> tuple[float, int]:
    """A phone's GET, on a new connection from its own address: seconds, status (0: no
    answer within 5 s)."""
    started = time.monotonic()
    try:
        with socket.create_connection(
            ("127.0.0.1", port), timeout=5, source_address=(phone_address(PHONE), 0)
        ) as sock:
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
            )
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        status = int(answer[9:12]) if answer.startswith(b"HTTP/1.1 ") else 0
    except OSError:
        status = 0
    return time.monotonic() - started, status


def phone_stream(port: int) -> float:
    """Seconds to an event stream's first state (inf: none within 5 s)."""
    started = time.monotonic()
    try:
        with socket.create_connection(
            ("127.0.0.1", port), timeout=5, source_address=(phone_address(PHONE), 0)
        ) as sock:
            sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
            got = b""
            while b"event: state\n" not in got:
                chunk = sock.recv(65536)
                if not chunk:
                    return float("inf")
                got += chunk
    except OSError:
        return float("inf")
    return time.monotonic() - started


def one_case(kind: str, port: int, pid: int, log: Path, wav: str, seconds: float) -> dict:
    """The case's row; the server's CPU and log from before the attacker starts."""
    logged, cpu, started = log.stat().st_size, cpu_s(pid), time.monotonic()
    attacker = None
    if kind != "none":
        attacker = subprocess.Popen(
            [sys.executable, __file__, "--attack", kind, "--port", str(port), "--wav", wav],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert attacker.stdout is not None and attacker.stdin is not None
        if attacker.stdout.readline() != "ready\n":
            raise RuntimeError(f"the attacker of {kind} did not start")
    answers: list[tuple[float, int]] = []
    asking = time.monotonic()
    while time.monotonic() - asking < seconds:
        for path in ("/api/state", "/api/games", "/api/stats"):
            answers.append(phone_get(port, path))
        time.sleep(0.1)
    stream_s = phone_stream(port)
    took = time.monotonic() - started
    row = {
        "case": kind,
        "median_ms": statistics.median(a for a, _ in answers) * 1000,
        "max_ms": max(a for a, _ in answers) * 1000,
        "asked": len(answers),
        "failed": sum(status != 200 for _, status in answers),
        "stream_ms": stream_s * 1000,
        "cpu": (cpu_s(pid) - cpu) / took * 100,
        "rss": rss_mb(pid),
        "hwm": rss_mb(pid, "VmHWM"),
        "log_bytes": log.stat().st_size - logged,
        "fds": sum(1 for _ in Path(f"/proc/{pid}/fd").iterdir()),
        "made": 0,
        "open": 0,
    }
    if attacker is not None:
        assert attacker.stdin is not None and attacker.stdout is not None
        attacker.stdin.close()
        row.update(json.loads(attacker.stdout.readline()))
        attacker.wait(10)
        attacker.stdout.close()
    return row


def a_clip(store: Path, game: int) -> str:
    """A call's clip beside the store, as the box cuts it by default: 3 s at 48 kHz."""
    noise = np.random.default_rng(1).standard_normal(3 * RATE).clip(-1, 1) * 0.3
    clip = Clip(game, 10**10, RATE, 9 * 10**9, (Marker(1, RATE),), ())
    ClipStore(clips_folder(store), max_bytes=2**40).save(clip, noise)
    return clip.name


def commit() -> str:
    found = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return found.stdout.strip() or "unknown"


class Tee:
    def __init__(self, path: Path) -> None:
        self.file = path.open("w")

    def write(self, text: str) -> int:
        sys.__stdout__.write(text)
        return self.file.write(text)

    def flush(self) -> None:
        sys.__stdout__.flush()
        self.file.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--attack", choices=CASES[1:], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--wav", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attack:
        attack(args.attack, args.port, args.wav)
        return 0
    out = args.out or ROOT / "bench" / "results" / f"flood-{commit()}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout = Tee(out)  # type: ignore[assignment]
    header(f"bench/flood.py at {commit()}: a phone against one client's flood")
    print(f"referee (and its `referee web`) from {Path(referee.__file__).parent}")
    with store_dir() as folder:
        store = Path(folder) / "referee.db"
        with Store.open(store) as opened:
            game = opened.new_game(Settings(players=4), lobby=False)
            opened.append(game, Press(player=2, t_ns=10**10))
        wav = a_clip(store, game)
        log = Path(folder) / "web.log"
        rows = []
        with serving(store, log=log, nofile=NOFILE) as (server, port):
            for kind in CASES:
                rows.append(one_case(kind, port, server.pid, log, wav, args.seconds))
        said = log.read_text(errors="replace").splitlines()
    print(f"at the end: {load()}")
    print(f"\n`referee web` (LimitNOFILE {NOFILE}), {args.seconds:g} s a case\n")
    print(
        "| case | phone: median (ms) | slowest (ms) | failed | its stream (ms) "
        "| CPU (% core) | RSS (MB) | highest | log (bytes) | fds | attacker: made | open |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['case']} | {r['median_ms']:.1f} | {r['max_ms']:.0f} "
            f"| {r['failed']} of {r['asked']} | {r['stream_ms']:.0f} | {r['cpu']:.0f} "
            f"| {r['rss']:.1f} | {r['hwm']:.1f} | {r['log_bytes']} | {r['fds']} "
            f"| {r['made']} | {r['open']} |"
        )
    print(f"\nthe page's log, {len(said)} lines:")
    for line in said[-12:]:
        print(f"    {line[:160]}")
    slow = [r["case"] for r in rows if r["failed"] or max(r["max_ms"], r["stream_ms"]) >= 1000]
    if slow:
        print(f"\nFAILED: a phone waited {SLOW_S:g} s or more, or was not answered: {slow}")
        return 1
    print(f"\nevery phone's answer and stream within {SLOW_S:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
