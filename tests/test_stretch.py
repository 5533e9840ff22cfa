"""The pitch-kept replay: a WSOLA stretch on synthetic signals, its length, its pitch, and
where its onsets land."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.audio.onsets import find_onsets
from referee.audio.stretch import stretched, stretched_blocks

RATE = 48_000
MS = RATE // 1000


def tone(hz: float, seconds: float, amplitude: float = 0.5) -> np.ndarray:
    """A voice-like tone: a fundamental and its next two harmonics."""
    t = np.arange(round(seconds * RATE)) / RATE
    waves = [amplitude / k * np.sin(2 * np.pi * k * hz * t) for k in (1, 2, 3)]
    return np.sum(waves, axis=0).astype(np.float32)


def dominant_hz(signal: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(signal * np.hanning(len(signal))))
    return float(np.fft.rfftfreq(len(signal), 1 / RATE)[np.argmax(spectrum)])


def first_loud(signal: np.ndarray, level: float) -> int:
    return int(np.flatnonzero(np.abs(signal) > level)[0])


def burst_at(onset: int, seconds: float = 1.0, hz: float = 220.0) -> np.ndarray:
    """Faint noise, then a voiced "shout" from `onset` on."""
    noise = 0.002 * np.random.default_rng(onset).standard_normal(round(seconds * RATE))
    signal = noise.astype(np.float32)
    signal[onset:] += tone(hz, seconds)[: len(signal) - onset]
    return signal


@settings(max_examples=20)
@given(
    length=st.integers(0, 3000),
    slowdown=st.floats(1, 8),
    anchors=st.lists(st.integers(0, 3000), max_size=4),
)
def test_it_lasts_slowdown_times_as_long(length, slowdown, anchors):
    signal = np.random.default_rng(length).uniform(-1, 1, length).astype(np.float32)
    out = stretched(signal, slowdown, RATE, anchors)
    assert len(out) == round(length * slowdown)
    assert out.dtype == np.float32 and np.all(np.isfinite(out))


@pytest.mark.parametrize("hz", [110.0, 220.0, 440.0, 1000.0, 3000.0])
def test_the_pitch_is_kept(hz):
    out = stretched(tone(hz, 0.5), 4, RATE)
    assert len(out) == 4 * round(0.5 * RATE)
    assert dominant_hz(out[RATE // 10 : -RATE // 10]) == pytest.approx(hz, rel=0.02)


def test_the_level_is_kept():
    signal = tone(220.0, 0.5)
    out = stretched(signal, 4, RATE)[RATE // 10 : -RATE // 10]
    rms = float(np.sqrt(np.mean(signal.astype(np.float64) ** 2)))
    assert float(np.sqrt(np.mean(out.astype(np.float64) ** 2))) == pytest.approx(rms, rel=0.1)


@pytest.mark.parametrize("onset_s", [0.2, 0.4123, 0.75])
def test_an_onset_found_by_the_boxs_detector_is_heard_at_slowdown_times_its_time(onset_s):
    onset = round(onset_s * RATE)
    signal = burst_at(onset)
    [found] = find_onsets(signal, RATE)
    out = stretched(signal, 4, RATE, [found.sample])
    heard = first_loud(out, 0.05)
    assert abs(heard - 4 * onset) <= 3 * MS  # a few ms of the slowed sound
    # Without the anchor, WSOLA lets the shout be heard tens of ms early (pre-echo).
    unpinned = first_loud(stretched(signal, 4, RATE), 0.05)
    assert 4 * onset - unpinned > 20 * MS


@pytest.mark.parametrize("apart_ms", [80, 130, 200])
def test_two_shouts_close_together_each_land_in_place(apart_ms):
    first = round(0.3 * RATE)
    second = first + apart_ms * MS
    signal = burst_at(first, hz=180.0)
    signal[second:] += tone(260.0, 1.0)[: len(signal) - second]
    out = stretched(signal, 4, RATE, [first, second])  # as the clip marks them
    assert abs(first_loud(out, 0.05) - 4 * first) <= 3 * MS
    # The second voice (its own pitch) is heard from its place on, not before it.
    window = 50 * MS

    def second_voice(at: int) -> float:
        piece = out[at : at + window]
        spectrum = np.abs(np.fft.rfft(piece * np.hanning(len(piece))))
        freqs = np.fft.rfftfreq(len(piece), 1 / RATE)
        return float(spectrum[np.abs(freqs - 260.0) < 15].max() / spectrum.max())

    assert second_voice(4 * second - window) < 0.05
    assert second_voice(4 * second) > 0.5


@settings(max_examples=20)
@given(
    clicks=st.lists(st.integers(1, 3999), min_size=1, max_size=5, unique=True),
    slowdown=st.sampled_from([2, 3.5, 4, 8]),
)
def test_nothing_after_an_anchor_is_heard_before_its_place(clicks, slowdown):
    """Silence with a click at each anchor: the stretch is silent up to the first one's
    place, and whatever no anchor marks cannot come from after an anchor."""
    signal = np.zeros(4_000, np.float32)
    signal[clicks] = 1.0
    out = stretched(signal, slowdown, RATE, clicks)
    first = min(clicks)
    assert not np.any(out[: round(first * slowdown)])
    assert out[round(first * slowdown)] != 0  # the click itself, at its place


def test_it_is_made_a_piece_at_a_time_and_the_pieces_are_the_whole():
    signal = burst_at(round(0.3 * RATE))
    pieces = list(stretched_blocks(signal, 4, RATE, [round(0.3 * RATE)]))
    assert len(pieces) > 10 and max(len(p) for p in pieces) <= RATE // 10 + RATE // 100
    assert np.array_equal(np.concatenate(pieces), stretched(signal, 4, RATE, [round(0.3 * RATE)]))


def test_no_speeding_up():
    with pytest.raises(ValueError, match="slowed, not sped up"):
        stretched(np.zeros(10, np.float32), 0.5, RATE)


def test_a_marked_click_is_heard_once_and_an_unmarked_one_over_and_over():
    signal = np.zeros(RATE // 2, np.float32)
    signal[10_000] = 1.0
    marked = np.flatnonzero(np.abs(stretched(signal, 4, RATE, [10_000])) > 0.2)
    assert marked.tolist() == [40_000]
    unmarked = np.flatnonzero(np.abs(stretched(signal, 4, RATE)) > 0.2)
    assert len(unmarked) > 3 and unmarked[0] < 40_000 - 40 * MS  # why varispeed is the default


def test_a_long_replay_is_made_in_little_memory():
    """The frames are summed a piece at a time, not for the whole replay at once: 4x of a
    3 s clip held 10.6 MB at its highest, as long as it played; 1.4 MB now."""
    samples = np.random.default_rng(0).normal(0.0, 0.2, 3 * 48_000)
    tracemalloc.start()
    try:
        made = sum(len(block) for block in stretched_blocks(samples, 4, 48_000))
        highest = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert made == 4 * len(samples)
    assert highest < 3 * 2**20
