"""Each call's snapshot (camera/snapshot.py): what it costs the camera's process and the
daemon, and how large it is.

    .venv/bin/python bench/snapshot.py [--calls 50]

Rendered tables of 12, 15, 18 and 21 cards, 1280 x 960 (a USB camera's frames, as
bench/camera.py's), on the disk under /var/tmp as the clips are beside the store:

  frame    Snapshots.frame: a frame shrunk and kept, at every frame the process reads
           (the cost with no call at all), against read_frame, the frame's reading
  told     Snapshots.told: what the frames' loop spends on a call (the frame handed on)
  write    until its writer's thread has it encoded, written whole (fsync) and the clips'
           budget kept (prune), in a folder already holding 700 clips and 700 snapshots
           (the default 200 MB), as many times as --calls
  snap     CameraProcess.snap: the daemon's loop writing the line on the process's input
  size     each table's snapshot in bytes

Baseline: the frame's reading (read_frame) in the same run. Its figures are the median and
the slowest of each.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import header, load  # noqa: E402

from referee.audio.clips import ClipStore, clip_name  # noqa: E402
from referee.camera.process import CameraProcess  # noqa: E402
from referee.camera.snapshot import KEPT, SIDE_PX, Snapshots  # noqa: E402
from referee.units import NS_PER_S  # noqa: E402
from referee.vision.card import all_faces  # noqa: E402
from referee.vision.layout import read_frame  # noqa: E402
from tools.vision.render import render_table  # noqa: E402

KEPT_CLIPS = 700  # the default 200 MB of 3 s clips at 48 kHz


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} ms, slowest {max(values):6.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    header("bench/snapshot.py: each call's snapshot (issue 32, item 8)")
    rng = np.random.default_rng(8)
    deck = all_faces()
    tables = {
        n: render_table([deck[j] for j in rng.choice(81, n, replace=False)], rng, size=(1280, 960))
        for n in (12, 15, 18, 21)
    }
    with tempfile.TemporaryDirectory(prefix="referee-bench-", dir="/var/tmp") as tmp:
        clips = ClipStore(Path(tmp) / "clips", max_bytes=200 * 2**20)
        clips.folder.mkdir()
        wav = b"\0" * 288_044
        for i in range(KEPT_CLIPS):
            name = clip_name(1, (i + 1) * NS_PER_S)
            (clips.folder / f"{name}.wav").write_bytes(wav)
            (clips.folder / f"{name}.json").write_text("{}")
            (clips.folder / f"{name}.jpg").write_bytes(b"\xff\xd8\xff" + b"\0" * 50_000)
        snaps = Snapshots(clips)
        shrink, reading = [], []
        for _ in range(5):
            for table in tables.values():
                started = time.perf_counter()
                snaps.frame(time.monotonic_ns(), table.image)
                shrink.append(1000 * (time.perf_counter() - started))
                started = time.perf_counter()
                read_frame(table.image)
                reading.append(1000 * (time.perf_counter() - started))
        print(f"frames shrunk to {SIDE_PX} px, the last {KEPT} kept")
        print(f"frame    shrunk and kept   {ms(shrink)}")
        print(f"         read (baseline)   {ms(reading)}")
        told, write, sizes = [], [], {}
        for i in range(args.calls):
            n = (12, 15, 18, 21)[i % 4]
            snaps.frame(time.monotonic_ns(), tables[n].image)
            name = clip_name(2, (i + 1) * NS_PER_S)
            started = time.perf_counter()
            snaps.told(f"snap {name} {time.monotonic_ns()}".encode())
            told.append(1000 * (time.perf_counter() - started))
            snaps.wait()
            write.append(1000 * (time.perf_counter() - started))
            sizes[n] = (clips.folder / f"{name}.jpg").stat().st_size
        print(f"told     {args.calls} calls         {ms(told)}  (the frames' loop's share)")
        print(f"write    {args.calls} calls         {ms(write)}  (encoded, fsync, budget kept)")
        # The daemon's end: a line on a process that reads it.
        camera = CameraProcess("bench", lambda item: None, command=["sh", "-c", "cat >/dev/null"])
        snap = []
        for i in range(1000):
            started = time.perf_counter()
            camera.snap(clip_name(3, i), time.monotonic_ns())
            snap.append(1000 * (time.perf_counter() - started))
        camera.close()
        us = f"median {1000 * statistics.median(snap):.1f} us, slowest {1000 * max(snap):.1f} us"
        print(f"snap     1000 lines        {us}  (the loop's cost a call)")
        print("size     " + ", ".join(f"{n} cards {b / 1000:.1f} kB" for n, b in sizes.items()))
        frame_bytes = SIDE_PX * (SIDE_PX * 960 // 1280) * 3  # BGR, shrunk from 1280 x 960
        print(f"memory   {KEPT} frames kept: {KEPT * frame_bytes / 2**20:.1f} MB")
        files = sum(1 for _ in os.scandir(clips.folder))
        print(f"folder   {files} files after, the clips' budget kept")
    print(f"at end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
