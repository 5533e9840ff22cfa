"""`referee web` at rest and at a press: its memory and CPU with 0 and 10 event streams,
and how long an input written to the store takes to reach every stream.

    .venv/bin/python bench/web.py [SECONDS]     # each case's rest, 60 s by default

The server runs as `referee web` does (its own process, uvicorn); the streams are plain
sockets in this process, reading. Its RSS is /proc's VmRSS at the end of each case, its
CPU the process's user and system time over the case. Then 20 inputs are written to the
store by another connection, as the daemon writes them, each 0.5 s after the one before,
and the time from its commit to its event on each of the 10 streams is taken. Last, with
the streams open, 10 phones open a game of CLIPS calls' clips at once: each asks for the
list, every clip's waveform (the whole clip and the zoom around its presses, a TV's width)
and its sound; the RSS after, and the highest it reached (VmHWM).
"""

import argparse
import contextlib
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from referee.audio.clips import Clip, ClipStore, Marker
from referee.page_socket import bind
from referee.rules import Press, Settings, Verdict
from referee.store.paths import clips_folder
from referee.store.store import Store

STREAMS = 10
# A state event on a phone: when it arrived (time.monotonic_ns(), the clock of the box's
# edges) and the game time of the latest input in its state, in ms (None: no game in it).
Arrival = tuple[int, float | None]
INPUTS = 20
CLIPS = 30  # a long game's calls, each as the box cuts it by default: 3 s at 48 kHz
RATE = 48_000


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Stream:
    """An event stream read from a plain socket: the state events counted as they come.
    `phone`: which phone it is, from an address of its own (127.0.0.10 on): the page
    bounds the streams of one address (docs/web.md, "Limits")."""

    def __init__(self, port: int, phone: int = 0) -> None:
        self.sock = socket.create_connection(
            ("127.0.0.1", port), source_address=(phone_address(phone), 0)
        )
        self.sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        self.sock.settimeout(10)
        self.seen = self.got = 0
        self.buffer = b""  # what came after the last whole event
        self.states: list[bytes] = []  # the data of the state events the last read completed
        self.next_state()  # the state now

    def take(self) -> int:
        """One read of what has come (waiting for some): the state events it completed (an
        event once its blank line came: its data whole) counted, and their data lines in
        `states`. How many bytes came: 0 once the server has ended the stream."""
        data = self.sock.recv(65536)
        *events, self.buffer = (self.buffer + data).split(b"\n\n")
        self.states = [e.rpartition(b"\ndata: ")[2] for e in events if b"event: state\n" in e]
        self.got += len(self.states)
        return len(data)

    def next_state(self) -> None:
        """Wait for the next state event (its whole line)."""
        while self.got <= self.seen:
            if not self.take():
                raise ConnectionError("the server ended the event stream")
        self.seen += 1


def phone_address(phone: int) -> str:
    """The loopback address a phone's requests come from (a phone's own on the Wi-Fi)."""
    return f"127.0.0.{10 + phone % 240}"


def free_port() -> int:
    """A port of this computer no one listens on: the one the system chose, let go."""
    probe = bind("127.0.0.1:0")
    port = int(probe.getsockname()[1])
    probe.close()
    return port


@contextlib.contextmanager
def serving(
    store: Path, env: dict[str, str] | None = None, log: Path | None = None, nofile: int = 0
) -> Iterator[tuple[subprocess.Popen, int]]:
    """`referee web` on the store as the box runs it, its own process (uvicorn): it and its
    port, once it serves an event stream (started, the store read); stopped (SIGTERM) when
    the `with` ends. `env`: its environment, this process's by default; `log`: the file
    its standard error goes to (none by default); `nofile`: its descriptors' limit, as
    its unit's LimitNOFILE (this process's by default)."""
    port = free_port()

    def limited() -> None:
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    logged = subprocess.DEVNULL if log is None else log.open("ab")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee",
            "web",
            "--store",
            str(store),
            "--listen",
            f"127.0.0.1:{port}",
        ],
        stderr=logged,
        env=env,
        preexec_fn=limited,  # nothing but setrlimit, before exec
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                Stream(port).sock.close()  # served: started, the store read
                break
            except ConnectionRefusedError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"`referee web` did not serve {store}") from None
                time.sleep(0.05)
        yield server, port
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if log is not None:
            logged.close()


def phone_counts(given: str) -> list[int]:
    """The benchmarks' --phones (argparse's type): how many phones follow the page, or
    numbers of them, a run each ("0,10": none, then 10)."""
    try:
        counts = [int(n) for n in given.split(",")]
    except ValueError:
        counts = [-1]
    if min(counts) < 0:
        raise argparse.ArgumentTypeError(f"{given}: a number of phones, or numbers: 0, 10 or 0,10")
    return list(dict.fromkeys(counts))  # each once


@contextlib.contextmanager
def following(
    store: Path, phones: int, env: dict[str, str] | None = None
) -> Iterator[Callable[[], list[list[Arrival]]]]:
    """`phones` phones following the page of the box whose ledger is `store`, from when the
    `with` begins: `referee web` (`serving`) and bench/phones.py, the process that reads
    their event streams. It yields the call that stops the phones and returns, for each,
    the state events it received after its first, as they arrived (`Arrival`s); the reader
    and the server stop when the `with` ends, whatever happened. With 0 phones neither
    runs. `env`: theirs."""
    if not phones:
        yield lambda: []
        return
    with serving(store, env) as (_, port):
        reader = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("phones.py")), str(port), str(phones)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        stdin, stdout = reader.stdin, reader.stdout
        assert stdin is not None and stdout is not None
        try:
            if stdout.readline() != "ready\n":
                raise RuntimeError(f"bench/phones.py: the {phones} phones' streams did not open")

            def received() -> list[list[Arrival]]:
                stdin.close()  # the reader's cue to stop
                arrivals = json.loads(stdout.readline())
                reader.wait(10)
                return [[(int(t), at_ms) for t, at_ms in phone] for phone in arrivals]

            yield received
        finally:
            if reader.poll() is None:
                reader.kill()
            reader.wait()
            for pipe in (stdin, stdout):
                pipe.close()


def at_rest(pid: int, seconds: float) -> tuple[float, float]:
    before, start = cpu_s(pid), time.monotonic()
    time.sleep(seconds)
    return rss_mb(pid), (cpu_s(pid) - before) / (time.monotonic() - start) * 100


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "referee.db"
        with Store.open(store) as opened:
            game = opened.new_game(Settings(players=4), lobby=False)
        with serving(store) as (server, port):
            time.sleep(1)  # settled, before its rest is measured
            rows = [("0 streams", *at_rest(server.pid, seconds))]
            streams = [Stream(port, n) for n in range(STREAMS)]
            rows.append((f"{STREAMS} streams", *at_rest(server.pid, seconds)))
            delays = press_to_streams(store, game, streams)
            rows.append((f"{STREAMS} streams, {INPUTS} inputs", rss_mb(server.pid), float("nan")))
            asked = clips_opened(store, game, port)
            rows.append(
                (f"{STREAMS} streams, {asked} clips' requests", rss_mb(server.pid), float("nan"))
            )
            rows.append(("the highest (VmHWM)", rss_mb(server.pid, "VmHWM"), float("nan")))
            for one in streams:
                one.sock.close()
    print(f"`referee web` at rest, {seconds:.0f} s a case ({os.cpu_count()} cores)\n")
    print("| case | RSS (MB) | CPU (% of a core) |")
    print("|---|---|---|")
    for name, rss, cpu in rows:
        print(f"| {name} | {rss:.1f} | {'' if cpu != cpu else f'{cpu:.2f}'} |")
    delays.sort()
    p95 = delays[int(0.95 * (len(delays) - 1))]
    print(f"\nAn input's commit to its event on each of {STREAMS} streams ({len(delays)} events):")
    print(f"median {statistics.median(delays):.1f} ms, p95 {p95:.1f} ms, max {delays[-1]:.1f} ms")


def press_to_streams(store: Path, game: int, streams: list[Stream]) -> list[float]:
    delays = []
    with Store.open(store) as daemon:
        for one in streams:
            one.next_state()  # the daemon holds the store now: its timers run
        for n in range(INPUTS):
            inp = Press(player=1 + n % 4, t_ns=(n + 1) * 10**9) if n % 2 == 0 else None
            inp = inp or Verdict(valid=True, t_ns=(n + 1) * 10**9)
            time.sleep(0.5)
            daemon.append(game, inp)
            committed = time.monotonic()
            for one in streams:
                one.next_state()
                delays.append((time.monotonic() - committed) * 1000)
    return delays


def clips_opened(store: Path, game: int, port: int) -> int:
    """CLIPS clips in the store's folder, opened by STREAMS phones at once; how many
    requests they made."""
    clips = ClipStore(clips_folder(store), max_bytes=2**40)
    noise = np.random.default_rng(1)
    for n in range(CLIPS):
        call_ns = (n + 1) * 10 * 10**9
        presses = (Marker(1, RATE), Marker(2, RATE + 200))
        clip = Clip(game, call_ns, RATE, call_ns - 10**9, presses, (RATE - 100,))
        clips.save(clip, 0.3 * noise.standard_normal(3 * RATE).clip(-1, 1))
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> bytes:
        """The answer, asked again when the server is busy, as the page does."""
        while True:
            try:
                with urllib.request.urlopen(f"{base}{path}") as answer:
                    return bytes(answer.read())
            except urllib.error.HTTPError as busy:
                if busy.code != 503:
                    raise
                time.sleep(float(busy.headers["Retry-After"]))

    def phone(_: int) -> int:
        listed = json.loads(get(f"/api/games/{game}/clips"))["clips"]
        for clip in listed:
            for query in ("columns=1389", f"columns=1389&from={RATE - 1500}&to={RATE + 1700}"):
                get(f"{clip['envelope']}?{query}")
            get(clip["wav"])
        return 1 + 3 * len(listed)

    with ThreadPoolExecutor(STREAMS) as phones:
        return sum(phones.map(phone, range(STREAMS)))


if __name__ == "__main__":
    main()
