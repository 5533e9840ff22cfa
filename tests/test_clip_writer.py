"""Each call's clip, cut from the microphone's ring once the ring holds its window, by a
thread of its own and the clips' cutter, a real process: the presses where their sound
is; a stall, a full disk or a cutter that dies no trouble for more than a clip."""

import os
import select
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from referee.audio.capture import Capture
from referee.audio.clip_writer import STALL_NS, STOP_S, ClipWriter
from referee.audio.clips import ClipStore, ClipWindow
from referee.audio.wav import read_mono
from tests.fake_capture import CLICK, MS, NS_PER_S, FakeCard

from .conftest import ROOT

START_NS = 5_000 * NS_PER_S
ORIGIN_NS = START_NS - 60 * NS_PER_S  # the game began a minute before the card did
RATE = 48_000
CUT_S = 60.0  # a cutter started (a fresh Python importing numpy) and a clip cut, when busy


def run(card: FakeCard, capture: Capture, until_ns: int) -> None:
    """The card captures and the ring is read every 20 ms, up to until_ns."""
    while card.now_ns < until_ns:
        card.advance(20 * MS)
        capture.pump(0)


def writer(tmp_path, card: FakeCard, capture: Capture, told: list[str], folder=None) -> ClipWriter:
    """Clips into tmp_path/clips (or folder), by a cutter of their own."""
    return ClipWriter(
        capture,
        ClipStore(folder or tmp_path / "clips", max_bytes=10**9),
        window=ClipWindow(NS_PER_S, 2 * NS_PER_S),
        told=told.append,
        clock=lambda: card.now_ns,
    )


def call(card: FakeCard, capture: Capture, clips: ClipWriter, at_ns: int) -> None:
    """P1 calls at_ns; the ring is read past the clip's window, until the clip is cut."""
    run(card, capture, at_ns)
    clips.press(1, at_ns - ORIGIN_NS, ORIGIN_NS, 1, at_ns)
    run(card, capture, at_ns + 2 * NS_PER_S + 100 * MS)
    assert clips.wait_cut(CUT_S)


def killed(pid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """Kill a process and wait for its end (without taking its exit status: the writer's)."""
    ends = os.pidfd_open(pid)
    try:
        os.kill(pid, sig)
        assert select.select([ends], [], [], 10)[0]
    finally:
        os.close(ends)


def test_a_calls_clip_has_each_press_where_its_sound_is(tmp_path, monkeypatch):
    # Not in this process: the clips' cutter saves them.
    monkeypatch.setattr(ClipStore, "save", lambda *args: pytest.fail("saved in the daemon"))
    shout = START_NS + 5 * NS_PER_S + 123_456  # P2's press, and the sound it made
    card = FakeCard(ppm=150, clicks=[shout], seed=3)
    capture = Capture(card)
    told: list[str] = []
    clips = writer(tmp_path, card, capture, told)
    try:
        run(card, capture, shout)
        clips.press(1, shout - ORIGIN_NS, ORIGIN_NS, 2, shout)
        clips.press(1, shout - ORIGIN_NS, ORIGIN_NS, 4, shout + 4_200_000)  # 4.2 ms later
        run(card, capture, shout + 2 * NS_PER_S + 100 * MS)
        assert clips.wait_cut(CUT_S)
    finally:
        clips.close()
    [kept] = ClipStore(tmp_path / "clips", max_bytes=10**9).clips()
    clip = kept.clip
    assert (clip.game, clip.call_ns, clip.sample_rate) == (1, shout - ORIGIN_NS, RATE)
    assert abs(clip.first_ns - (shout - ORIGIN_NS - NS_PER_S)) < NS_PER_S / RATE
    samples, rate = read_mono(kept.sound)
    assert rate == RATE
    # 3 s of the monotonic clock, at the card's own pace (150 ppm fast).
    assert abs(len(samples) - 3 * RATE * (1 + 150e-6)) <= 2
    [click] = np.flatnonzero(samples > 0.5 * CLICK / 32768)
    p2, p4 = clip.presses
    assert p2.player == 2 and abs(p2.sample - click) <= 0.5 * RATE / 1000  # 0.5 ms
    assert p4.player == 4 and abs(p4.sample - p2.sample - 4.2 * RATE / 1000) <= 1
    assert told == [] and clips.saved == 1


def test_a_stalled_microphone_holds_a_clip_no_longer_than_its_stall(tmp_path):
    call = START_NS + 2 * NS_PER_S
    card = FakeCard(seed=1)
    capture = Capture(card)
    clips = writer(tmp_path, card, capture, [])
    try:
        run(card, capture, call + NS_PER_S)  # the card stops a second into the clip's after
        clips.press(1, call - ORIGIN_NS, ORIGIN_NS, 1, call)
        assert not clips.wait_cut(0.2)
        card.advance(2 * NS_PER_S + STALL_NS)  # its clock goes on, nothing is read
        assert clips.wait_cut(CUT_S)
    finally:
        clips.close()
    [kept] = ClipStore(tmp_path / "clips", max_bytes=10**9).clips()
    assert 1.9 * RATE <= kept.samples <= 2.1 * RATE  # what the ring held: 1 s before, 1 after


def test_a_disk_that_refuses_loses_the_clip_and_says_so(tmp_path):
    taken = tmp_path / "clips"
    taken.write_text("a file where the folder should be")
    call = START_NS + 2 * NS_PER_S
    card = FakeCard(seed=2)
    capture = Capture(card)
    told: list[str] = []
    clips = writer(tmp_path, card, capture, told, folder=taken)
    try:
        run(card, capture, call)
        clips.press(1, call - ORIGIN_NS, ORIGIN_NS, 3, call)
        run(card, capture, call + 2 * NS_PER_S + 100 * MS)
        assert clips.wait_cut(CUT_S)
    finally:
        clips.close()
    assert clips.lost == 1 and len(told) == 1 and told[0].startswith("clips: 1 lost (")
    assert told[0].endswith("the ledger is whole")


def test_closing_while_a_clip_is_cut_does_not_hang(tmp_path):
    """close() while the last clip was being cut used to be missed: the thread then waited
    for a press for ever, and the daemon's exit with it."""
    call = START_NS + 2 * NS_PER_S
    card = FakeCard(seed=5)
    capture = Capture(card)
    clips = writer(tmp_path, card, capture, [])
    run(card, capture, call + 3 * NS_PER_S)  # the ring holds the window already
    clips.press(1, call - ORIGIN_NS, ORIGIN_NS, 1, call)  # due at once: cut now...
    closing = threading.Thread(target=clips.close)  # ...while the box stops
    closing.start()
    closing.join(CUT_S)
    assert not closing.is_alive()


def test_a_cutter_that_dies_loses_one_clip_and_the_next_is_cut_by_another(tmp_path):
    card = FakeCard(seed=6)
    capture = Capture(card)
    told: list[str] = []
    clips = writer(tmp_path, card, capture, told)
    try:
        assert clips.warm.wait(CUT_S)
        first = clips.cutter_pid
        assert first is not None
        killed(first)
        call(card, capture, clips, START_NS + 2 * NS_PER_S)
        assert told == ["clips: 1 lost (their cutter died: killed by SIGKILL); the ledger is whole"]
        assert clips.cutter_pid not in (first, None)  # started again, for the next clip
        call(card, capture, clips, START_NS + 6 * NS_PER_S)
        assert (clips.lost, clips.saved) == (1, 1)
    finally:
        clips.close()
    [kept] = ClipStore(tmp_path / "clips", max_bytes=10**9).clips()
    assert kept.clip.call_ns == START_NS + 6 * NS_PER_S - ORIGIN_NS


@pytest.mark.parametrize(
    ("python", "why"),
    [
        ("/bin/false", "exit status 1"),  # a Python that ends at once
        ("/nonexistent/python", "not started: No such file or directory"),
    ],
)
def test_a_cutter_that_fails_at_its_start_twice_is_given_up_in_one_line(
    tmp_path, monkeypatch, caplog, python, why
):
    monkeypatch.setattr(sys, "executable", python)
    card = FakeCard(seed=7)
    capture = Capture(card)
    told: list[str] = []
    clips = writer(tmp_path, card, capture, told)
    try:
        clips.press(1, 0, ORIGIN_NS, 1, ORIGIN_NS)  # waits for a cutter...
        assert clips.wait_cut(CUT_S)  # ...and is dropped with it
        assert told == [
            f"clips: off (their cutter failed twice at its start: {why}); the ledger is whole"
        ]
        # Two starts, no more; then given up.
        said = [r.levelname for r in caplog.records if why in r.getMessage()]
        assert said == ["WARNING", "WARNING", "ERROR"]
        assert clips.given_up and not clips.warm.is_set()
        clips.press(1, 0, ORIGIN_NS, 2, ORIGIN_NS)  # no more clips, no more starts
        assert clips.wait_cut(0)
    finally:
        clips.close()
    run(card, capture, START_NS + 2 * NS_PER_S)  # the ring goes on: REPLAY plays from it
    assert len(capture.sound(START_NS + NS_PER_S, START_NS + 2 * NS_PER_S).samples) > 0.9 * RATE


def test_the_daemons_stop_does_not_wait_for_a_cutter_that_hangs(tmp_path):
    call_ns = START_NS + 2 * NS_PER_S
    card = FakeCard(seed=8)
    capture = Capture(card)
    clips = writer(tmp_path, card, capture, [])
    assert clips.warm.wait(CUT_S)
    cutter = clips.cutter_pid
    assert cutter is not None
    os.kill(cutter, signal.SIGSTOP)  # it will read no window and say nothing
    run(card, capture, call_ns + 3 * NS_PER_S)
    clips.press(1, call_ns - ORIGIN_NS, ORIGIN_NS, 1, call_ns)  # due at once, handed over
    began = time.monotonic()
    clips.close()
    assert time.monotonic() - began < 2 * STOP_S + 5
    with pytest.raises(ProcessLookupError):
        os.kill(cutter, 0)  # killed, and its end taken


# A disk of its own (a user and mount namespace), filled up, then given room again.
FULL_DISK = """
set -e
mount -t tmpfs -o size=1m tmpfs "$DISK"
dd if=/dev/zero of="$DISK/filler" bs=64k count=14 2>/dev/null
"$PY" - <<'EOF'
import os
from pathlib import Path
from referee.audio.capture import Capture
from tests.fake_capture import FakeCard, NS_PER_S
from tests.test_clip_writer import START_NS, call, writer
disk = Path(os.environ["DISK"])
card = FakeCard(seed=9)
capture = Capture(card)
told = []
clips = writer(disk, card, capture, told)
call(card, capture, clips, START_NS + 2 * NS_PER_S)
print("told:", told)
print("left:", sorted(p.name for p in (disk / "clips").iterdir()))
(disk / "filler").unlink()
call(card, capture, clips, START_NS + 6 * NS_PER_S)
clips.close()
print("saved, lost:", clips.saved, clips.lost)
EOF
"""


def test_a_full_disk_loses_the_clip_not_the_cutter(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    env = {"DISK": disk, "PY": sys.executable, "PATH": "/usr/bin:/bin", "PYTHONPATH": ROOT}
    done = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", FULL_DISK],
        env={k: str(v) for k, v in env.items()},
        capture_output=True,
        text=True,
        timeout=4 * CUT_S,
        cwd=ROOT,
    )
    if done.returncode and "unshare" in done.stderr:
        pytest.skip(f"no user namespaces here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "told: ['clips: 1 lost (No space left on device); the ledger is whole']" in lines
    assert "left: []" in lines  # nothing of it: no part, no WAV without its JSON
    assert "saved, lost: 1 1" in lines
