"""The clips' cutter's own loop (referee/audio/cutter.py), on real files: a window in, a clip
on the disk and a line out; its detector warmed before the first window."""

import io
import json
import logging

import numpy as np
import pytest

from referee.audio import cutter
from referee.audio.clips import ClipStore
from referee.audio.cutter import LogRecords, Window, read_window, serve
from referee.audio.samples import Gap, Sound
from referee.audio.wav import read_mono

from .fake_capture import CLICK, NS_PER_S

RATE = 48_000
ORIGIN_NS = 4_000 * NS_PER_S
FIRST_NS = 5_000 * NS_PER_S  # the window's first sample
PERIOD_NS = NS_PER_S / RATE * (1 - 150e-6)  # a card 150 ppm fast


@pytest.fixture
def records():
    """What the cutter's process logs, as forward_logs gathers it there."""
    gathered = LogRecords()
    logger = logging.getLogger("referee")
    level = logger.level
    logger.addHandler(gathered)
    logger.setLevel(logging.INFO)
    yield gathered
    logger.removeHandler(gathered)
    logger.setLevel(level)


def window(call_s: float = 1.0, seconds: float = 3.0) -> Window:
    """A call at call_s into a window with a click there; P3 pressed 2 ms after it."""
    samples = np.zeros(round(seconds * RATE), np.int16)
    at = round(call_s * RATE)
    samples[at] = CLICK
    gap_ns = round(FIRST_NS + RATE // 2 * PERIOD_NS)  # 96 samples lost after that one
    sound = Sound(samples, FIRST_NS, PERIOD_NS, (Gap(gap_ns, gap_ns + 97 * 20_833, 96),), RATE)
    call_ns = round(sound.ns(at))
    presses = ((1, call_ns), (3, call_ns + 2_000_000))
    return Window(1, call_ns - ORIGIN_NS, ORIGIN_NS, presses, sound)


def requests(*windows: Window) -> io.BytesIO:
    return io.BytesIO(b"".join(w.header() + w.samples().tobytes() for w in windows))


def test_a_window_comes_across_whole():
    sent = window()
    got = read_window(requests(sent))
    assert got is not None
    assert (got.game, got.call_ns, got.origin_ns, got.presses) == (
        sent.game,
        sent.call_ns,
        sent.origin_ns,
        sent.presses,
    )
    assert got.sound.period_ns == PERIOD_NS  # exactly: the markers depend on it
    assert (got.sound.first_ns, got.sound.gaps) == (sent.sound.first_ns, sent.sound.gaps)
    assert np.array_equal(got.sound.samples, sent.sound.samples)


def test_a_window_cut_short_is_the_end_of_the_input():
    whole = requests(window()).getvalue()
    assert read_window(io.BytesIO(whole[:-1])) is None
    assert read_window(io.BytesIO(b"")) is None


def test_it_warms_the_detector_says_ready_then_saves_each_window(tmp_path, monkeypatch, records):
    seen: list[int] = []
    detect = cutter.find_onsets

    def finding(samples, rate):
        seen.append(len(samples))
        return detect(samples, rate)

    monkeypatch.setattr(cutter, "find_onsets", finding)
    replies = io.BytesIO()
    sent = window()
    serve(requests(sent), replies, ClipStore(tmp_path, max_bytes=10**9), RATE, records)
    ready, said = map(json.loads, replies.getvalue().splitlines())
    # Its first run (the slow one) before any window: at the start, not at a call.
    assert seen == [round(cutter.WARM_S * RATE), len(sent.sound.samples)]
    assert ready == {"ready": True, "log": []}
    [kept] = ClipStore(tmp_path, max_bytes=10**9).clips()
    assert said == {"saved": kept.sound.name, "onsets": 1, "log": []}
    clip = kept.clip
    assert (clip.game, clip.call_ns, clip.first_ns) == (1, sent.call_ns, FIRST_NS - ORIGIN_NS)
    assert [(m.player, m.sample) for m in clip.presses] == [(1, RATE), (3, RATE + 96)]
    assert abs(clip.onsets[0] - RATE) <= 5 * RATE // 1000  # the click (test_onsets.py: how near)
    assert clip.gaps == ((RATE // 2, 96),)
    samples, rate = read_mono(kept.sound)
    assert rate == RATE and int(np.argmax(samples)) == RATE


def test_what_it_logs_goes_with_its_reply(tmp_path, records):
    """Its standard error is left for a crash: the daemon logs these as its own."""
    replies = io.BytesIO()
    clips = ClipStore(tmp_path, max_bytes=400_000)  # one 3 s clip: the second makes room
    serve(requests(window(1.0), window(1.5)), replies, clips, RATE, records)
    _, first, second = map(json.loads, replies.getvalue().splitlines())
    assert first["log"] == []
    [(level, name, message)] = second["log"]
    assert (level, name) == (20, "referee.audio.clips")  # INFO
    assert message.endswith(f"{first['saved']} deleted: the clips may take 400000 bytes")


def test_a_disk_that_refuses_is_a_lost_clip_not_an_end(tmp_path, records):
    taken = tmp_path / "clips"
    taken.write_text("a file where the folder should be")
    replies = io.BytesIO()
    clips = ClipStore(taken, max_bytes=10**9)
    serve(requests(window(), window(1.5)), replies, clips, RATE, records)
    _, first, second = map(json.loads, replies.getvalue().splitlines())
    assert first == second == {"lost": "File exists", "log": []}
