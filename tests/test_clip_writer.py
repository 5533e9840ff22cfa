"""Each call's clip, cut from the microphone's ring by a thread of its own once the ring
holds its window: the presses where their sound is, a stall or a full disk no trouble."""

import threading

import numpy as np

from referee.audio import clip_writer
from referee.audio.capture import Capture
from referee.audio.clip_writer import STALL_NS, ClipWriter
from referee.audio.clips import ClipStore, ClipWindow
from referee.audio.wav import read_mono
from tests.fake_capture import CLICK, MS, NS_PER_S, FakeCard

START_NS = 5_000 * NS_PER_S
ORIGIN_NS = START_NS - 60 * NS_PER_S  # the game began a minute before the card did
RATE = 48_000


def run(card: FakeCard, capture: Capture, until_ns: int) -> None:
    """The card captures and the ring is read every 20 ms, up to until_ns."""
    while card.now_ns < until_ns:
        card.advance(20 * MS)
        capture.pump(0)


def writer(tmp_path, card: FakeCard, capture: Capture, told: list[str], folder=None) -> ClipWriter:
    return ClipWriter(
        capture,
        ClipStore(folder or tmp_path / "clips", max_bytes=10**9),
        window=ClipWindow(NS_PER_S, 2 * NS_PER_S),
        told=told.append,
        clock=lambda: card.now_ns,
    )


def test_a_calls_clip_has_each_press_where_its_sound_is(tmp_path):
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
        assert clips.wait_cut(10)
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
        assert clips.wait_cut(10)
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
        assert clips.wait_cut(10)
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
    closing.join(10)
    assert not closing.is_alive()


def test_the_detector_runs_once_before_the_first_call(tmp_path, monkeypatch):
    """Its first run in a process holds the GIL about 100 ms: at the start, not at the first
    call's beep."""
    seen: list[int] = []
    detect = clip_writer.find_onsets

    def finding(samples, rate):
        seen.append(len(samples))
        return detect(samples, rate)

    monkeypatch.setattr(clip_writer, "find_onsets", finding)
    card = FakeCard()
    clips = writer(tmp_path, card, Capture(card), [])
    try:
        assert clips.warm.wait(10)
        assert seen == [round(clip_writer.WARM_S * card.rate)]  # and no call yet
    finally:
        clips.close()
