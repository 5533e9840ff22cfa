"""What the microphone's capture costs at rest, and how close its samples' times are.

    .venv/bin/python bench/capture.py [--seconds 20] [--periods 10,20,50]

A soak is one long row of the box's period: `--seconds 3600 --periods 50`.

Cost: the capture's reader thread (referee/audio/capture.py) reading and stamping 48 kHz
mono for --seconds at a card's pace, as CPU % of one core (the process's CPU time over the
wall time: nothing else runs in it). The card is a real capture card where this machine
has one (`find_capture_device`), and in every case the fake one of the tests at real-time
pace (tests/fake_capture.py's RealTimeCard, which makes its samples too: its cost is
counted in, so the fake's rows are an upper bound). One row a card period; the box's
(pcm.PERIOD_US) is the one held to the target. Beside each, a thread that only wakes once
a period: the floor of any reader.

Marker error: clicks at known monotonic moments, found in the ring by those moments, on the
fake card at simulated pace: for each drift, jitter and overrun case, the error's p50, p95
and largest, over 8 cards of 12 s each.

Targets (issue 17, "Cost" and "One clock"): at most 2 % of one core on this machine (5 % on
a Pi 4); a press's marker within 3 ms of its sound at p95. The exit status is 1 when one
is missed.
"""

import argparse
import logging
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from machine import header, percentile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests/

from referee.audio.capture import Capture
from referee.audio.pcm import PERIOD_US, AlsaCapture, CapturePcm, find_capture_device
from tests.fake_capture import MS, RealTimeCard, scenario

COST_TARGET = 2.0  # % of one core
MARKER_TARGET_MS = 3.0
PERIODS_MS = (10, 20, 50)
FLOOR_S = 60.0


def cpu_percent(run: Callable[[], None], seconds: float) -> float:
    """CPU % of one core used by this process while `run` is under way for `seconds`."""
    wall, cpu = time.monotonic(), time.process_time()
    run()
    time.sleep(seconds)
    return 100 * (time.process_time() - cpu) / (time.monotonic() - wall)


def cost(pcm: CapturePcm, seconds: float) -> tuple[float, int, int]:
    """CPU % of one core while the reader runs for `seconds`; frames read; overruns."""
    capture = Capture(pcm)
    percent = cpu_percent(capture.start, seconds)
    capture.close()
    written = capture.sound(0, time.monotonic_ns() + 10**9).samples.size
    return percent, written, capture.overruns


def floor(period_ms: int, seconds: float) -> float:
    """CPU % of a thread that only wakes once a period: what any reader costs at least."""
    stop = threading.Event()

    def wake() -> None:
        due = time.monotonic()
        while not stop.is_set():
            due += period_ms / 1000
            time.sleep(max(0.0, due - time.monotonic()))

    percent = cpu_percent(threading.Thread(target=wake).start, seconds)
    stop.set()
    return percent


def cost_table(seconds: float, periods_ms: list[int]) -> bool:
    print(f"\n## Capture at rest: 48 kHz mono, {seconds:g} s a row")
    print("| card | period | CPU % of one core | frames kept | overruns |")
    print("|---|---:|---:|---:|---:|")
    met = True
    device = find_capture_device()
    for period_ms in periods_ms:
        # Each card opened just before its run: a card runs from the moment it is opened.
        cards: list[tuple[str, Callable[[], CapturePcm]]] = [
            ("fake, real-time", lambda: RealTimeCard(period=48 * period_ms))  # noqa: B023
        ]
        if device is not None:
            cards.insert(0, (device, lambda: AlsaCapture(device, period_us=period_ms * 1000)))  # noqa: B023
        for name, open_card in cards:
            percent, frames, overruns = cost(open_card(), seconds)
            if period_ms == PERIOD_US // 1000:  # the box's; the others for comparison
                met &= percent <= COST_TARGET and overruns == 0
            print(f"| {name} | {period_ms} ms | {percent:.2f} | {frames} | {overruns} |")
        # A comparison, not a verdict: a minute tells it as well as a soak's hour.
        floor_s = min(seconds, FLOOR_S)
        percent = floor(period_ms, floor_s)
        print(f"| (a thread that only wakes, {floor_s:g} s) | {period_ms} ms | {percent:.2f} | | |")
    if device is None:
        print("\n(no capture card on this machine: /proc/asound lists none)")
    return met


def marker_table() -> bool:
    logging.getLogger("referee.audio.capture").setLevel(logging.ERROR)  # the overruns made
    print("\n## Marker error: a click found in the ring by its monotonic time (fake card)")
    print("| drift ppm | jitter ms | stamps | overruns | clicks | p50 ms | p95 ms | max ms |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    met = True
    for ppm in (-200, 0, 200):
        for jitter_ms in (0.0, 1.0):
            for late_only in (True, False):
                for overruns in (0, 3):
                    errors: list[float] = []
                    for seed in range(8):
                        at = [random.Random(seed).uniform(1, 10) for _ in range(overruns)]
                        *_, found = scenario(ppm, round(jitter_ms * MS), late_only, at, seed)
                        errors += [abs(e) / MS for e in found]
                    p95 = percentile(errors, 95)
                    met &= p95 <= MARKER_TARGET_MS
                    kind = "late" if late_only else "either way"
                    print(
                        f"| {ppm} | {jitter_ms:g} | {kind} | {overruns} | {len(errors)} "
                        f"| {percentile(errors, 50):.3f} | {p95:.3f} | {max(errors):.3f} |"
                    )
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--periods", default=",".join(map(str, PERIODS_MS)), help="the cards' periods, ms"
    )
    args = parser.parse_args()
    try:
        periods_ms = [int(p) for p in args.periods.split(",")]
    except ValueError:
        parser.error(f"--periods {args.periods}: whole milliseconds, comma-separated")
    header("# The microphone's capture (issue 17)")
    met = cost_table(args.seconds, periods_ms)
    met &= marker_table()
    print(
        f"\ntargets ({COST_TARGET:g} % of one core, marker p95 {MARKER_TARGET_MS:g} ms): "
        f"{'met' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
