"""The clips' cutter: each call's clip made in a process of its own, beside the daemon.

Forked by the daemon at its start (cutter_process.py, through referee/linux/children.py), before
its first thread, so that it shares the daemon's interpreter and numpy; or, to take the
place of one that died, started anew as `python -m referee.audio.cutter`. A clip's voice
onsets take about 0.1 s of CPU here (more on a Pi), in numpy calls that hold the GIL
milliseconds at a time: in the daemon's process the main loop waited for them, and a
press was decided that much later (docs/design.md, "Decisions"). Here they have a
GIL of their own.

On its standard input, first a line of JSON that says where the clips go and the
microphone's rate (`{"folder": ..., "max_bytes": ..., "rate": ...}`: a cutter forked
at the daemon's start knows neither yet); then one window of the microphone's ring at a
time: a line of JSON (the call, its presses, the sound's first sample's time, its sample
period, its gaps and its rate, which another microphone plugged in may change: what clip_of
needs) and then the samples, 16-bit little-endian. On its
standard output, one line of JSON once the detector has run once (`{"ready": true}`: its
first run is slow, and is nobody's clip's), then one a window: `{"saved": NAME, "onsets":
N}` or `{"lost": WHY}` (the disk refused it), each with the log records it made (`"log"`),
which the daemon logs as its own: its standard error is left for a crash. It ends when its
standard input does (the daemon closed it, or died). The signals that stop the daemon are
the daemon's to act on: it closes this process once the clip under way is saved.

It runs at a lower priority (NICE): a clip has a second, a press has a millisecond, and
on a busy CPU the loop's threads must not wait for the cutter's turn to end.
"""

import json
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from referee.linux.allocator import give_back_free_memory
from referee.linux.signals import QUIT_SIGNALS

from .clips import ClipStore, clip_of
from .onsets import find_onsets
from .samples import Gap, Sound

WARM_S = 0.25  # of sound with a click in it: every path of the detector runs once
# Added to the daemon's niceness: a main loop woken on a CPU the cutter holds waited up to
# 4 ms for it without (bench/results/latency-2026-11-26-cutter.txt).
NICE = 10
SAMPLE = np.dtype("<i2")

log = logging.getLogger(__name__)

Reply = dict[str, Any]


@dataclass(frozen=True)
class Window:
    """A call's sound, as the writer takes it from the ring."""

    game: int
    call_ns: int  # the game time of its first press
    origin_ns: int  # the monotonic time at the game clock's 0
    presses: tuple[tuple[int, int], ...]  # (player, monotonic ns)
    sound: Sound

    def header(self) -> bytes:
        """The line sent ahead of the samples."""
        sound = self.sound
        return (
            json.dumps(
                {
                    "game": self.game,
                    "call_ns": self.call_ns,
                    "origin_ns": self.origin_ns,
                    "presses": self.presses,
                    "first_ns": sound.first_ns,
                    "period_ns": sound.period_ns,  # a float: its repr comes back exactly
                    "gaps": [(gap.start_ns, gap.end_ns, gap.lost) for gap in sound.gaps],
                    "rate": sound.rate,
                    "samples": len(sound.samples),
                }
            ).encode()
            + b"\n"
        )

    def samples(self) -> memoryview:
        return self.sound.samples.astype(SAMPLE, copy=False).data.cast("B")


def read_window(requests: BinaryIO) -> Window | None:
    """The next window, or None at the end of the input (a window cut short is its end)."""
    line = requests.readline()
    if not line.endswith(b"\n"):
        return None
    head = json.loads(line)
    size = int(head["samples"]) * SAMPLE.itemsize
    data = requests.read(size)
    if len(data) < size:
        return None
    sound = Sound(
        np.frombuffer(data, SAMPLE),
        int(head["first_ns"]),
        float(head["period_ns"]),
        tuple(Gap(int(start), int(end), int(lost)) for start, end, lost in head["gaps"]),
        int(head["rate"]),
    )
    presses = tuple((int(player), int(t_ns)) for player, t_ns in head["presses"])
    return Window(int(head["game"]), int(head["call_ns"]), int(head["origin_ns"]), presses, sound)


def cut(window: Window, clips: ClipStore) -> Reply:
    """Find the voice onsets, place each press on its sample, save the clip."""
    # The 16-bit samples as they came, not floats: a copy of the clip less at once (the
    # cutter's memory is the microphone's cost), and the WAV holds the ring's own samples.
    samples = window.sound.samples
    onsets = find_onsets(samples, window.sound.rate) if len(samples) else []
    clip = clip_of(
        window.sound,
        game=window.game,
        call_ns=window.call_ns,
        origin_ns=window.origin_ns,
        presses=window.presses,
        onsets=[o.sample for o in onsets],
        soft=[o.sample for o in onsets if o.soft],
    )
    try:
        path = clips.save(clip, samples)
    except OSError as err:
        return {"lost": err.strerror or str(err)}
    return {"saved": path.name, "onsets": len(onsets)}


class LogRecords(logging.Handler):
    """The log records made since the last reply, to go with the next one."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[tuple[int, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.levelno, record.name, record.getMessage()))


def forward_logs() -> LogRecords:
    """Every log record of this process (warnings too), kept for the next reply."""
    records = LogRecords()
    logging.basicConfig(level=logging.INFO, handlers=[records], force=True)
    logging.captureWarnings(True)
    return records


def serve(
    requests: BinaryIO, replies: BinaryIO, clips: ClipStore, rate: int, records: LogRecords
) -> None:
    """Warm the detector (at the microphone's rate at the daemon's start: a window says
    its own), say so, then cut each window until the input ends."""

    def reply(said: Reply) -> None:
        said["log"], records.records = records.records, []
        replies.write(json.dumps(said).encode() + b"\n")
        replies.flush()

    warm = np.zeros(round(WARM_S * rate))
    warm[len(warm) // 2] = 0.5
    find_onsets(warm, rate)
    reply({"ready": True})
    while (window := read_window(requests)) is not None:
        reply(cut(window, clips))
        # After the reply, not before: the writer waits for it. Between two calls the
        # cutter holds nothing; glibc kept what the cut freed (0.7 MB), counted in the
        # microphone's 20 MB for as long as the table talks.
        give_back_free_memory()


def setup(folder: Path, max_bytes: int, rate: int) -> bytes:
    """The first line a cutter is sent: where its clips go, and the microphone's rate."""
    said = {"folder": str(folder.absolute()), "max_bytes": max_bytes, "rate": rate}
    return json.dumps(said).encode() + b"\n"


def main(requests: BinaryIO, replies: BinaryIO) -> int:
    """The cutter's life: set up as its first line says, then serve until its input ends
    (at once, before that line: the daemon needed no clip)."""
    for sig in QUIT_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    records = forward_logs()
    try:
        os.nice(NICE)
    except OSError as err:  # a sandbox that forbids setpriority: the daemon's, then
        log.warning("the clips' cutter runs at the daemon's priority: %s", err)
    line = requests.readline()
    if not line.endswith(b"\n"):
        return 0
    said = json.loads(line)
    clips = ClipStore(Path(said["folder"]), int(said["max_bytes"]))
    serve(requests, replies, clips, int(said["rate"]), records)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.stdin.buffer, sys.stdout.buffer))
