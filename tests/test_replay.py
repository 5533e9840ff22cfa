"""A clip replayed slowed down: the sound played, the cursor, the waveform drawn."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from referee.audio.clips import Clip, Marker
from referee.audio.pcm import AlsaPlayback
from referee.audio.replay import Replay, slowed, waveform
from referee.audio.replay_player import ReplayPlayer
from referee.config import ReplayPitch
from referee.units import NS_PER_S

RATE = 48_000


@settings(max_examples=50)
@given(
    samples=arrays(np.float32, st.integers(2, 400), elements=st.floats(-1, 1, width=32)),
    slowdown=st.sampled_from([1, 2, 4, 8]),
)
def test_varispeed_keeps_every_sample_in_its_place_slowed(samples, slowdown):
    out = slowed(samples, slowdown)
    assert len(out) == (len(samples) - 1) * slowdown + 1
    assert np.allclose(out[::slowdown], samples, atol=1e-6)  # the originals, in order
    assert out.min() >= samples.min() - 1e-6 and out.max() <= samples.max() + 1e-6


@pytest.mark.parametrize("slowdown", [1, 1.5, 4, 7.3])
def test_a_piece_at_a_time_is_the_whole_interpolation_to_the_bit(slowdown):
    samples = np.random.default_rng(3).normal(0.0, 0.3, 3 * 4801 + 7)
    at = np.arange(round((len(samples) - 1) * slowdown) + 1) / slowdown
    whole = np.interp(at, np.arange(len(samples)), samples).astype(np.float32)
    assert np.array_equal(slowed(samples, slowdown), whole)


def test_a_click_stays_as_sharp_only_later():
    """An onset keeps its edge: a step at sample 1000 is at 4000, as steep per original
    sample (one sample's rise spread over four)."""
    samples = np.zeros(2000, np.float32)
    samples[1000:] = 1.0
    out = slowed(samples, 4)
    assert np.flatnonzero(out > 0)[0] == 3997 and out[4000] == 1.0


def test_no_speeding_up():
    with pytest.raises(ValueError, match="slowed, not sped up"):
        slowed(np.zeros(10, np.float32), 0.5)


def test_the_cursor_moves_at_a_quarter_of_the_pace_and_stops_at_the_end():
    clip = Clip(1, 5 * NS_PER_S, RATE, 4 * NS_PER_S, (Marker(2, RATE),))
    replay = Replay(clip, samples=3 * RATE, started_ns=100 * NS_PER_S, slowdown=4)
    assert replay.length_ns == 12 * NS_PER_S
    assert replay.sample_at(100 * NS_PER_S) == 0
    assert replay.sample_at(104 * NS_PER_S) == RATE  # 4 s heard: the clip's first second
    assert replay.sample_at(99 * NS_PER_S) == 0
    assert replay.sample_at(200 * NS_PER_S) == 3 * RATE
    assert not replay.over(111 * NS_PER_S) and replay.over(112 * NS_PER_S)


@settings(max_examples=50)
@given(
    samples=arrays(np.float32, st.integers(0, 3000), elements=st.floats(-1, 1, width=32)),
    columns=st.integers(1, 700),
)
def test_the_waveform_shows_every_peak(samples, columns):
    lows, highs = waveform(samples, columns)
    assert len(lows) == len(highs) == columns
    assert np.all(lows <= highs)
    if len(samples):
        assert highs.max() == samples.max() and lows.min() == samples.min()


def test_the_player_plays_through_alsa_and_a_missing_speaker_is_said():
    """ALSA's null device runs the real ctypes path on any machine."""
    player = ReplayPlayer(lambda rate: AlsaPlayback("null", rate=rate))
    assert player.play(np.zeros(RATE, np.float32), RATE, 4) is None
    player.stop()  # waits until the device is closed
    assert not player.playing
    missing = ReplayPlayer(lambda rate: AlsaPlayback("no-such-speaker", rate=rate))
    said = missing.play(np.zeros(RATE, np.float32), RATE, 4)
    assert said is not None and said.startswith("playback device 'no-such-speaker'")
    assert not missing.playing


class Speaker:
    """A playback device that keeps what it is given, for the player's thread to fill."""

    def __init__(self) -> None:
        self.written: list[np.ndarray] = []
        self.closed = threading.Event()

    def write(self, samples: np.ndarray) -> None:
        self.written.append(samples.copy())

    def drain(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def close(self) -> None:
        self.closed.set()


@pytest.mark.parametrize("pitch", list(ReplayPitch))
def test_the_player_slows_as_the_settings_say(pitch):
    speaker = Speaker()
    player = ReplayPlayer(lambda rate: speaker, pitch)  # type: ignore[arg-type, return-value]
    t = np.arange(RATE // 2) / RATE
    samples = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    assert player.play(samples, RATE, 4, anchors=[RATE // 4]) is None
    assert speaker.closed.wait(10)  # played to its end
    heard = np.concatenate(speaker.written).astype(np.float32) / 32767
    assert abs(len(heard) - 4 * len(samples)) <= 4
    middle = heard[RATE // 2 : -RATE // 2]
    spectrum = np.abs(np.fft.rfft(middle * np.hanning(len(middle))))
    peak = np.fft.rfftfreq(len(middle), 1 / RATE)[np.argmax(spectrum)]
    assert peak == pytest.approx(440 / 4 if pitch is ReplayPitch.VARISPEED else 440, rel=0.02)
