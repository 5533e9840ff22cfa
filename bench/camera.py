"""The camera's process at its frame rate: its share of a core, its memory, and the daemon's.

    .venv/bin/python bench/camera.py [--seconds 30]

The real camera's process (referee/camera/watch.py, started by camera/process.py as the
daemon starts it, reading FRAMES_PER_S frames a second) on a folder, the fake camera,
in two phases of --seconds each:

  still    the folder unchanged: the process looks for a new frame each time, finds none
           (a table nobody touches); the baseline of its cost.
  moving   a new frame put in the folder five times a second, so that every frame the
           process reads is a new one it reads whole: rendered tables of 12 to 18 cards,
           1280 x 960 JPEGs, as a USB camera gives them (bench/vision.py's).

With --snapshots the process keeps its frames for each call's snapshot (camera/snapshot.py)
and is asked for one every 3 s of the moving phase, written to a clips folder under /var/tmp.

For each: frames read a second; the process's CPU (utime + stime from /proc/PID/stat,
as a share of one core); its memory at the end (VmRSS, VmHWM) and at its highest over the
phase (sampled every SAMPLE_S from /proc/PID/smaps_rollup: Rss, Pss, and Pss_Anon, its
own anonymous pages, which no other process shares); and this process's, standing for the
daemon's end (the reader thread, the wire's parse; no OpenCV, no numpy): its VmRSS and
RssAnon before the camera's process started and at the end, and the reader thread's CPU.
Frames are rendered in a process of their own, so this one never loads OpenCV.

Targets (issue 32): at most 60 MB more with the camera on. As bench/vision.py, the verdict
is the anonymous memory's: the camera's process's Pss_Anon at its highest, and what the
daemon's end grew. Its PSS also counts the pages of the libraries it maps (OpenCV's,
numpy's OpenBLAS, libpython), page cache that the kernel may take back and that every
process mapping them shares; it is printed too. The exit status is 1 when it is missed.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import header, load, store_dir  # noqa: E402

from referee.audio.clips import clip_name  # noqa: E402
from referee.camera import watch  # noqa: E402
from referee.camera.process import CameraProcess  # noqa: E402
from referee.inbox import Inbox, Seen  # noqa: E402
from referee.units import NS_PER_S  # noqa: E402

MEMORY_MB = 60
SAMPLE_S = 0.5
FEED_HZ = 5
POOL = 16  # frames rendered, put in the folder in turn
TICK_S = os.sysconf("SC_CLK_TCK")

RENDER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import cv2, numpy as np
from referee.vision.card import all_faces
from tools.vision.render import render_table
rng = np.random.default_rng(32)
deck = all_faces()
for i in range({POOL}):
    n = (12, 15, 18)[i % 3]
    faces = [deck[j] for j in rng.choice(81, n, replace=False)]
    table = render_table(faces, rng, size=(1280, 960))
    cv2.imwrite(f"{{sys.argv[1]}}/{{i:02d}}.jpg", table.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
"""


def status(pid: int | str) -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon in MB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM", "RssAnon")}


def rollup(pid: int) -> dict[str, float]:
    """Rss, Pss, Pss_Anon in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, value = line.partition(":")
        if name in ("Rss", "Pss", "Pss_Anon"):
            out[name] = int(value.split()[0]) / 1024
    return out


def cpu_s(path: str) -> float:
    """utime + stime of a process or a thread, in seconds."""
    fields = Path(path).read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICK_S


def phase(
    camera: CameraProcess,
    seen: list[Seen],
    seconds: float,
    feed: list[Path],
    folder: Path,
    calls: bool = False,
) -> dict[str, float]:
    pid = camera.process.pid
    reader = next(t.native_id for t in threading.enumerate() if t.name == "camera")
    start_cpu, start_reader = cpu_s(f"/proc/{pid}/stat"), cpu_s(f"/proc/self/task/{reader}/stat")
    start_seen, started = len(seen), time.monotonic()
    most = rollup(pid)
    n = 0
    stop = threading.Event()
    while (left := started + seconds - time.monotonic()) > 0:
        if feed:
            # Written aside and renamed in: the camera's process never sees half a frame.
            aside = folder / ".next.part"
            shutil.copyfile(feed[n % len(feed)], aside)
            stamp = time.time_ns()
            os.utime(aside, ns=(stamp, stamp))
            aside.rename(folder / f"frame{n % 2}.jpg")
            if calls and n % (3 * FEED_HZ) == 0:  # a call every 3 s
                camera.snap(clip_name(1, (n + 1) * NS_PER_S), time.monotonic_ns())
            n += 1
        stop.wait(min(left, 1 / FEED_HZ if feed else SAMPLE_S))
        for key, value in rollup(pid).items():
            most[key] = max(most[key], value)
    took = time.monotonic() - started
    return {
        "frames/s": (len(seen) - start_seen) / took,
        "cpu": (cpu_s(f"/proc/{pid}/stat") - start_cpu) / took,
        "reader cpu": (cpu_s(f"/proc/self/task/{reader}/stat") - start_reader) / took,
        **{f"{k} most": v for k, v in most.items()},
        **status(pid),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="each phase's length")
    parser.add_argument("--snapshots", action="store_true", help="each call's snapshot on")
    args = parser.parse_args()
    header("bench/camera.py: the camera's process at its frame rate (issue 32)")
    print(f"{watch.FRAMES_PER_S} frames a second at most; nice {watch.NICE}; OpenCV on one thread")
    print(f"snapshots: {'on, a call every 3 s' if args.snapshots else 'off'}")
    with tempfile.TemporaryDirectory(prefix="referee-camera-") as tmp:
        pool, folder = Path(tmp, "pool"), Path(tmp, "frames")
        pool.mkdir()
        folder.mkdir()
        subprocess.run([sys.executable, "-c", RENDER, str(pool)], check=True)
        feed = sorted(pool.glob("*.jpg"))
        shutil.copyfile(feed[0], folder / "first.jpg")
        before = status("self")
        inbox = Inbox()
        seen: list[Seen] = []
        got = threading.Event()

        def put(item: object) -> None:
            if isinstance(item, Seen):
                seen.append(item)
                got.set()

        clips = store_dir()
        snapshots = (Path(clips.name), 200 * 2**20) if args.snapshots else None
        camera = CameraProcess(str(folder), put, snapshots=snapshots)  # type: ignore[arg-type]
        try:
            assert got.wait(60), "no reading from the camera's process"
            time.sleep(1.0)  # its first frames past (the model warmed)
            results = {
                "still": phase(camera, seen, args.seconds, [], folder),
                "moving": phase(camera, seen, args.seconds, feed, folder, args.snapshots),
            }
            after = status("self")
        finally:
            camera.close()
            inbox.close()
            written = len(list(Path(clips.name).glob("*.jpg")))
            clips.cleanup()
    print(f"at end: {load()}")
    if args.snapshots:
        print(f"snapshots written: {written}")
    print()
    print(
        f"{'phase':<8}{'frames/s':>9}{'CPU of a core':>15}{'reader CPU':>12}"
        f"{'VmRSS':>9}{'VmHWM':>9}{'Rss most':>10}{'Pss most':>10}{'Pss_Anon most':>15}"
    )
    for name, r in results.items():
        print(
            f"{name:<8}{r['frames/s']:>9.2f}{r['cpu'] * 100:>14.1f}%{r['reader cpu'] * 100:>11.2f}%"
            f"{r['VmRSS']:>6.1f} MB{r['VmHWM']:>6.1f} MB{r['Rss most']:>7.1f} MB"
            f"{r['Pss most']:>7.1f} MB{r['Pss_Anon most']:>12.1f} MB"
        )
    print()
    grown = after["RssAnon"] - before["RssAnon"]
    print(
        f"the daemon's end (this process): VmRSS {before['VmRSS']:.1f} -> {after['VmRSS']:.1f} MB,"
        f" RssAnon {before['RssAnon']:.1f} -> {after['RssAnon']:.1f} MB ({grown:+.1f})"
    )
    cost = results["moving"]["Pss_Anon most"] + max(0.0, grown)
    verdict = "met" if cost <= MEMORY_MB else "MISSED"
    whole = results["moving"]["Pss most"] + max(0.0, grown)
    print(f"the camera on costs {cost:.1f} MB anonymous (its process's Pss_Anon at most, and"
          f" the daemon's growth): {verdict} (at most {MEMORY_MB} MB);"
          f" {whole:.1f} MB with its libraries' pages")  # fmt: skip
    return 0 if cost <= MEMORY_MB else 1


if __name__ == "__main__":
    sys.exit(main())
