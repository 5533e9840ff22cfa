"""The phone as the camera (docs/web.md, "Photo"): how long from a photo sent to the box's
reading of it, and what it costs the page's and the camera's memory.

    .venv/bin/python bench/phone.py [--photos 6] [--out FILE]

`referee run` (its terminal display into /dev/null, its keyboard a pty nobody types on,
`[camera] source = "off"`) and `referee web` (bench/web.py's `serving`) run as processes
of their own on a fresh store. A judge signs in and sends a rendered table
(tests/camera_frames.py, a 1024x768 JPEG of 12 cards) --photos times, each once the last
was answered: the first starts the camera's process, the others find it running. For
each, the time from the request's first byte to the page's answer with the reading
(`"read": true`). Then a 16 MB photo (the bound: a PNG whose header is checked whole)
sent as fast as the socket takes it: the page's highest RSS (VmHWM) before and after,
and its anonymous memory (RssAnon) before and after (the file's pages, mapped to check
its header, are the page cache's: VmHWM counts them, RssAnon does not). The camera's
process's RSS, the daemon's before the first photo and after the last, and how long the
loop spends on a phone's first photo (Watching.phone, measured here, in this process,
with OpenCV loaded: the camera's process is started by its reader's thread). The load
(/proc/loadavg) at the start and the end. The output goes to --out too
(bench/results/phone-COMMIT.txt).
"""

import argparse
import http.client
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.web import rss_mb, serving  # noqa: E402
from referee.rules import Settings  # noqa: E402
from referee.store.paths import pin_path  # noqa: E402
from referee.store.pin import ensure_pin, read_pin  # noqa: E402
from referee.store.store import Store  # noqa: E402
from tests.camera_frames import set_table  # noqa: E402


def login(port: int, store: Path) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"}
    body = json.dumps({"pin": read_pin(pin_path(store))})
    connection.request("POST", "/api/login", body, {**headers, "Host": f"127.0.0.1:{port}"})
    answer = connection.getresponse()
    answer.read()
    cookie = answer.getheader("set-cookie") or ""
    return cookie.split(";")[0]


def send(port: int, cookie: str, data: bytes, kind: str) -> tuple[float, int, dict]:
    """The photo sent: seconds to its answer, the status and the answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "Content-Type": kind,
        "Origin": f"http://127.0.0.1:{port}",
        "Host": f"127.0.0.1:{port}",
        "Cookie": cookie,
    }
    started = time.monotonic()
    connection.request("POST", "/api/photo", data, headers)
    answer = connection.getresponse()
    body = json.loads(answer.read())
    return time.monotonic() - started, answer.status, body


def big_png(size: int) -> bytes:
    """A PNG of about `size` bytes that the header check walks whole: one IDAT of
    incompressible bytes (its checksum over all of them), a 2000x2000 image."""
    header = struct.pack(">IIBBBBB", 2000, 2000, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    signature = b"\x89PNG\r\n\x1a\n"
    rest = len(signature) + 25 + 12 + 12
    return (
        signature
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", os.urandom(size - rest))
        + chunk(b"IEND", b"")
    )


def loop_start_ms() -> float:
    """Watching.phone on a fresh folder: what the loop spends on a phone's first photo
    (the camera's process is started by its reader's thread, not the loop)."""
    from referee.config import default_config
    from referee.daemon.watching import Watching
    from referee.inbox import Inbox

    inbox = Inbox()
    watching = Watching(default_config().camera, inbox)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        assert watching.phone(Path(folder)) is None
        took = (time.perf_counter() - started) * 1000
        watching.close()
    inbox.close()
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=6)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    out = args.out or ROOT / "bench" / "results" / f"phone-{commit}.txt"
    lines = [
        f"bench/phone.py at {commit}",
        f"load at the start: {Path('/proc/loadavg').read_text().strip()}",
    ]
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "referee.db"
        with Store.open(store) as opened:
            opened.new_game(Settings(players=2), lobby=False)
        ensure_pin(pin_path(store))
        keys, terminal = os.openpty()  # the keyboard is a terminal's: one nobody types on
        command = [sys.executable, "-m", "referee", "run", "--store", str(store)]
        command += ["--input", "keyboard", "--display", "terminal"]  # drawn to nowhere
        daemon = subprocess.Popen(
            command, stdin=terminal, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 30
            while not store.with_suffix(".sock").exists():
                assert time.monotonic() < deadline and daemon.poll() is None, "no daemon"
                time.sleep(0.05)
            with serving(store) as (page, port):
                cookie = login(port, store)
                daemon_before = rss_mb(daemon.pid)
                photo = set_table()
                times = []
                for n in range(args.photos):
                    took, status, body = send(port, cookie, photo, "image/jpeg")
                    assert status == 200 and body["read"], (status, body)
                    times.append(took)
                    lines.append(
                        f"photo {n + 1} ({len(photo) // 1024} kB JPEG, {len(body['cards'])} cards):"
                        f" answered with its reading in {took * 1000:.0f} ms"
                        + (" (the camera's process started)" if n == 0 else "")
                    )
                rest = times[1:]
                if rest:
                    lines.append(
                        f"photos 2-{len(times)}: median {statistics.median(rest) * 1000:.0f} ms,"
                        f" slowest {max(rest) * 1000:.0f} ms"
                        " (the camera reads its folder twice a second)"
                    )
                hwm_before = rss_mb(page.pid, "VmHWM")
                anon_before = rss_mb(page.pid, "RssAnon")
                png = big_png(16 << 20)
                took, status, body = send(port, cookie, png, "image/png")
                lines.append(
                    f"a 16 MB PNG: {status} in {took * 1000:.0f} ms"
                    f" ({body.get('error') or 'read: ' + str(body.get('read'))})"
                )
                lines.append(
                    f"the page: VmHWM {hwm_before:.1f} MB before it,"
                    f" {rss_mb(page.pid, 'VmHWM'):.1f} MB after;"
                    f" RssAnon {anon_before:.1f} MB before, {rss_mb(page.pid, 'RssAnon'):.1f} MB,"
                    f" RssFile {rss_mb(page.pid, 'RssFile'):.1f} MB after"
                )
                camera = subprocess.run(
                    ["pgrep", "-P", str(daemon.pid), "-f", "referee.camera.watch"],
                    capture_output=True,
                    text=True,
                ).stdout.split()
                if camera:
                    lines.append(f"the camera's process: RSS {rss_mb(int(camera[0])):.1f} MB")
                lines.append(
                    f"the daemon: RSS {daemon_before:.1f} MB before the first photo,"
                    f" {rss_mb(daemon.pid):.1f} MB after the last"
                )
        finally:
            daemon.terminate()
            daemon.wait(10)
            os.close(keys)
            os.close(terminal)
    starts = sorted(loop_start_ms() for _ in range(5))
    lines.append(
        f"the loop on a phone's first photo (Watching.phone, this process, RSS"
        f" {rss_mb(os.getpid()):.0f} MB): median {statistics.median(starts):.1f} ms,"
        f" slowest {starts[-1]:.1f} ms"
    )
    lines.append(f"load at the end: {Path('/proc/loadavg').read_text().strip()}")
    text = "\n".join(lines)
    print(text)
    out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
