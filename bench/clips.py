"""How soon a call's clip is on the disk after its window closes, under load and stalls.

    .venv/bin/python bench/clips.py [--calls 12] [--gap 1.2]

The real capture (referee/audio/capture.py: its reader thread and its 30 s ring) reads a
fake 48 kHz card at a card's pace (tests/fake_capture.py's RealTimeCard, 50 ms periods,
as the box's); the real ClipWriter (referee/audio/clip_writer.py) is told of each call's
presses as the main loop tells it, takes each window from the ring and hands it to the
clips' cutter, its process (referee/audio/cutter.py), which finds the voice onsets and
writes the WAV and its JSON (synced, renamed) to a real ClipStore on the disk (/var/tmp).
The cutter is started and warm before the first call, as at the box's start. A call every
--gap seconds, each with one to four presses in its first 300 ms; the clips' windows (1 s
before the first press, 2 s after) overlap, as a lively table's do. A clip is ready when
the writer has the cutter's answer that it is saved (its JSON, written last, is on the
disk); its delay is that moment less its window's end (the first press + 2 s), on
CLOCK_MONOTONIC: the wait for the ring to hold the window's end (a card period; the writer
looks every 50 ms), then the making (the window sent to the cutter, the voice onsets, the
WAV and the JSON written and synced, the answer).

Conditions, each in the same run on the same calls:
  idle      nothing else runs: the baseline;
  hogs      a busy process on every core (bench/machine.py's Hogs);
  gil       a thread of this process (the daemon's) holds the GIL 100 ms, lets it go
            150 ms, and so on (bench/box.py's Staller), as a main loop drawing slow frames
            would;
  slow      the clips folder on a slow SD card: every sync 5 to 50 ms late, 300 ms once
            in 50 (tests/slow_fsync.c; this script runs again with it loaded);
  slow+gil  both.

Target (issue 17, "Cost"): every clip ready at most 1 s after its window closes. The exit
status is 1 when one is late or missing.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from box import Staller
from machine import Hogs, header, load, percentile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/

from referee.audio.capture import Capture  # noqa: E402
from referee.audio.clip_writer import ClipWriter, _Call  # noqa: E402
from referee.audio.clips import ClipStore, ClipWindow  # noqa: E402
from referee.audio.samples import Sound  # noqa: E402
from tests import slow_fsync  # noqa: E402
from tests.fake_capture import RealTimeCard  # noqa: E402

TARGET_S = 1.0
NS_PER_S = 1_000_000_000
WINDOW = ClipWindow(before_ns=NS_PER_S, after_ns=2 * NS_PER_S)  # the defaults
IN_PROCESS = ("idle", "hogs", "gil")
ON_SLOW_DISK = ("slow", "slow+gil")
GIL_HOLD_MS, GIL_FREE_MS = 100, 150
START_S = 60.0  # the cutter's start: a fresh Python importing numpy, on a busy machine


class TimedWriter(ClipWriter):
    """The real writer, noting when it learns that each call's clip is saved."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.ready: dict[int, int] = {}  # call_ns -> when the cutter said it is saved
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def _cut(self, call: _Call) -> bool:
        saved = self.saved
        going_on = super()._cut(call)
        if self.saved > saved:
            self.ready[call.call_ns] = time.monotonic_ns()
        return going_on


@contextmanager
def gil_stalls() -> Iterator[None]:
    """The GIL held GIL_HOLD_MS, let go GIL_FREE_MS, and so on, by a thread of this
    process. Held in a loop rather than asked for at a pace: on a busy machine a hold
    lasts longer than asked, and holds asked for at a pace would pile up into one."""
    staller = Staller()
    stop = threading.Event()

    def stall() -> None:
        while not stop.wait(GIL_FREE_MS / 1000):
            staller.hold(GIL_HOLD_MS)

    stalling = threading.Thread(target=stall, daemon=True)
    stalling.start()
    try:
        yield
    finally:
        stop.set()
        stalling.join()


def load_for(condition: str) -> Callable[[], object]:
    if condition == "hogs":
        return Hogs
    if condition.endswith("gil"):
        return gil_stalls
    return nullcontext


def measure(condition: str, folder: Path, calls: int, gap_s: float, seed: int) -> dict:
    """Each call's delay from its window's end to its clip on the disk, in s."""
    store = ClipStore(folder, max_bytes=200 * 2**20)
    card = RealTimeCard()  # the box's period and buffer: 50 ms, 1 s
    capture = Capture(card)
    cutting: list[int] = []  # when the writer took each window from the ring
    sound = capture.sound

    def timed_sound(from_ns: int, to_ns: int) -> Sound:
        cutting.append(time.monotonic_ns())
        return sound(from_ns, to_ns)

    capture.sound = timed_sound  # type: ignore[method-assign]
    told: list[str] = []
    capture.start()
    writer = TimedWriter(capture, store, window=WINDOW, told=told.append)
    if not writer.warm.wait(START_S):
        raise RuntimeError(f"the clips' cutter was not ready in {START_S:g} s: {told}")
    ready = writer.ready
    rng = random.Random(seed)
    firsts: list[int] = []
    origin = time.monotonic_ns()
    with load_for(condition)():
        time.sleep(WINDOW.before_ns / NS_PER_S)  # the ring holds the first window's start
        for _ in range(calls):
            first = time.monotonic_ns()
            firsts.append(first)
            presses = sorted(rng.uniform(0, 0.3) for _ in range(rng.randint(0, 3)))
            writer.press(1, first - origin, origin, rng.randint(1, 4), first)
            for at in presses:
                time.sleep(max(0.0, first / NS_PER_S + at - time.monotonic()))
                writer.press(1, first - origin, origin, rng.randint(1, 4), time.monotonic_ns())
            time.sleep(max(0.0, first / NS_PER_S + gap_s - time.monotonic()))
        writer.wait_cut(WINDOW.after_ns / NS_PER_S + 5)
    writer.close()
    capture.close()
    delays = [
        (ready[f - origin] - (f + WINDOW.after_ns)) / NS_PER_S
        for f in firsts
        if f - origin in ready
    ]
    # Each clip in the order cut: its wait for the ring (and the writer), then its making.
    waits = [(c - (f + WINDOW.after_ns)) / NS_PER_S for c, f in zip(cutting, firsts, strict=False)]
    making = [(r - c) / NS_PER_S for c, r in zip(cutting, sorted(ready.values()), strict=False)]
    return {
        "condition": condition,
        "calls": calls,
        "saved": writer.saved,
        "missing": calls - len(delays),
        "lost": writer.lost,
        "overruns": capture.overruns,
        "delays": delays,
        "waits": waits,
        "making": making,
    }


def spread(values: list[float]) -> str:
    return f"{percentile(values, 50):.3f} / {max(values):.3f}" if values else "-"


def rows_on_the_slow_disk(args: argparse.Namespace) -> list[dict]:
    """This script again, in a process with the slow disk's shim loaded over the folder."""
    shim = slow_fsync.build()
    if shim is None:
        print("(no C compiler: the slow disk's rows are left out)")
        return []
    folder = Path(tempfile.mkdtemp(prefix="referee-bench-clips-slow-", dir="/var/tmp"))
    env = dict(os.environ, **slow_fsync.spread(shim, folder, seed=args.seed, log=folder / "syncs"))
    command = [sys.executable, __file__, "--child", str(folder), "--calls", str(args.calls),
               "--gap", str(args.gap), "--seed", str(args.seed)]  # fmt: skip
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        waits = slow_fsync.waits_ms(folder / "syncs")
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)
    print(f"slow disk: {len(waits)} syncs slowed, {sum(waits) / max(1, len(waits)):.0f} ms on"
          f" average, {max(waits, default=0)} ms at most")  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


def child(args: argparse.Namespace) -> int:
    for condition in ON_SLOW_DISK:
        folder = Path(args.child) / condition
        print(json.dumps(measure(condition, folder, args.calls, args.gap, args.seed)), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=12, help="calls under each condition")
    parser.add_argument("--gap", type=float, default=1.2, help="seconds between calls")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    header("# A call's clip on the disk after its window closes (bench/clips.py)")
    print(f"{args.calls} calls a condition, one every {args.gap:g} s; window 1 s + 2 s;"
          f" target: every clip within {TARGET_S:g} s")  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory(prefix="referee-bench-clips-", dir="/var/tmp") as tmp:
        for condition in IN_PROCESS:
            rows.append(measure(condition, Path(tmp) / condition, args.calls, args.gap, args.seed))
            print(f"{condition}: done; {load()}", flush=True)
    rows += rows_on_the_slow_disk(args)
    print()
    print(
        "| condition | clips | p50 s | p95 s | max s | of it, ring p50/max | of it, making"
        " p50/max | missing | lost | overruns | met? |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")  # fmt: skip
    missed = []
    for row in rows:
        delays = row["delays"] or [float("inf")]
        late = max(delays) > TARGET_S or row["missing"] or row["lost"]
        if late:
            missed.append(row["condition"])
        print(f"| {row['condition']} | {len(row['delays'])}/{row['calls']} |"
              f" {percentile(delays, 50):.3f} | {percentile(delays, 95):.3f} |"
              f" {max(delays):.3f} | {spread(row['waits'])} | {spread(row['making'])} |"
              f" {row['missing']} | {row['lost']} | {row['overruns']} |"
              f" {'NO' if late else 'yes'} |")  # fmt: skip
    print()
    print(f"at the end: {load()}")
    print("target met" if not missed else f"target NOT met: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
