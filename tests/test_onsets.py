"""The voice onset detector (referee/audio/onsets.py): on espeak-ng shouts over noise
(tests/shouts.py; bench/onsets.py measures many more), and its properties on any input."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from referee.audio import onsets
from referee.audio.onsets import find_onsets

from . import shouts, voices

RATE = shouts.SAMPLE_RATE
MS = RATE // 1000

needs_espeak = pytest.mark.skipif(
    shouts.missing_tools() is not None, reason=shouts.missing_tools() or ""
)


@pytest.fixture(scope="session")
def clips():
    """A few clips, made once a session (espeak-ng's shouts are cached as well)."""
    return {
        (kind, snr): [shouts.clip(kind, snr, seed) for seed in range(3)]
        for kind in ("white", "pink")
        for snr in (20, 10)
    }


@needs_espeak
@pytest.mark.parametrize("kind", ["white", "pink"])
@pytest.mark.parametrize(("snr", "within_ms"), [(20, 3), (10, 10)])
def test_the_first_onset_is_the_shouts(clips, kind, snr, within_ms):
    for clip in clips[kind, snr]:
        onsets = find_onsets(clip.signal, RATE)
        assert onsets, clip.label
        assert abs(onsets[0].sample - clip.onsets[0]) <= within_ms * MS, clip.label


GERMAN = [i for i, (voice, _, _) in enumerate(shouts.VOICES) if voice.startswith("de")]


@needs_espeak
@pytest.mark.parametrize("kind", ["white", "pink"])
@pytest.mark.parametrize(("snr", "within_ms"), [(20, 3), (10, 10)])
def test_a_voiced_start_is_found_too(kind, snr, within_ms):
    # German "Set" starts with a voiced /z/ with little hiss: under pink noise at 10 dB
    # only the voiced band's rise sustained over 30 ms shows it.
    for voice in GERMAN:
        for seed in range(2):
            clip = shouts.clip(kind, snr, seed, voice=voice)
            onsets = find_onsets(clip.signal, RATE)
            assert onsets, clip.label
            assert abs(onsets[0].sample - clip.onsets[0]) <= within_ms * MS, clip.label


@pytest.mark.parametrize("seed", range(3))
def test_a_quiet_hum_that_lasts_is_an_onset(seed):
    # Harmonics of 130 Hz, 6.5 dB over pink noise in 150-1000 Hz: under the voiced band's
    # 10 dB for a short rise, over its sustained 4.5 dB. Faded in over 5 ms, so that its
    # start is no click in the sibilant band.
    rng = np.random.default_rng(seed)
    noise = 0.01 * shouts.noise("pink", 2 * RATE, rng)
    t = np.arange(2 * RATE) / RATE
    hum = sum(np.sin(2 * np.pi * 130 * k * t + rng.uniform(0, 2 * np.pi)) for k in range(2, 8))
    hz = np.fft.rfftfreq(len(noise), 1 / RATE)
    in_band = (hz >= 150) & (hz <= 1000)
    noise_power = np.sum(np.abs(np.fft.rfft(noise)[in_band]) ** 2) / len(noise) ** 2 * 2
    hum *= np.sqrt(3.5 * noise_power / np.mean(hum**2))
    hum[: 5 * MS] *= 0.5 - 0.5 * np.cos(np.pi * np.arange(5 * MS) / (5 * MS))
    at = int(rng.integers(RATE // 2, RATE))
    signal = noise.copy()
    signal[at:] += hum[: len(signal) - at]
    found = find_onsets(signal, RATE)
    assert found
    assert abs(found[0].sample - at) <= 10 * MS
    assert found[0].band == "voiced"


@needs_espeak
def test_two_shouts_apart_are_both_found():
    clip = shouts.clip("white", 20, 1, gaps_s=(0.12,))
    found = [o.sample for o in find_onsets(clip.signal, RATE)]
    for onset in clip.onsets:
        assert min(abs(f - onset) for f in found) <= 10 * MS, clip.label


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["white", "pink"]))
def test_noise_alone_has_hardly_an_onset(seed, kind):
    rng = np.random.default_rng(seed)
    noise = shouts.noise(kind, 3 * RATE, rng) * 10 ** rng.uniform(-4, -0.5)
    assert len(find_onsets(noise, RATE)) <= 1


def test_silence_has_no_onset():
    assert find_onsets(np.zeros(RATE), RATE) == []


@settings(max_examples=15, deadline=None)
@given(st.integers(RATE // 5, 2 * RATE), st.integers(0, 2**32 - 1))
@example(at=9600, seed=1557630)  # the low band's rise in the noise, 71 ms in
@example(at=45606, seed=3157413685)  # the noise's own onset 42 ms before the click
def test_a_click_anywhere_is_found_to_within_a_millisecond(at, seed):
    # The refinement's band filter is causal: a zero-phase one rang before the click and
    # placed it 1-3 ms early (1000 seeds: 0.33 ms at worst now).
    signal = 1e-3 * np.random.default_rng(seed).standard_normal(3 * RATE)
    signal[at] += 0.5
    found = find_onsets(signal, RATE)
    clicks = [o for o in found if abs(o.sample - at) <= MS]
    others = [o for o in found if o not in clicks]
    # The noise starts an onset of its own now and then, as noise alone does (at most one
    # in 3 s: test_noise_alone_has_hardly_an_onset): in 7 of 2,898 such signals, each a
    # soft one, most in the low band (its floor still young in the first 0.2 s). One
    # within refractory_s before the click takes its place (1 of the 2,898).
    assert len(others) <= 1 and all(o.soft for o in others), found
    refractory = onsets.DEFAULT.refractory_s * RATE
    assert len(clicks) == 1 or any(0 < at - o.sample <= refractory for o in others), found


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.integers(0, 3000), elements=st.floats(-1e6, 1e6)))
def test_any_finite_signal_gives_sorted_onsets_inside_it(signal):
    found = find_onsets(signal, 8000)
    assert [o.sample for o in found] == sorted(o.sample for o in found)
    assert all(0 <= o.sample < len(signal) and o.t == o.sample / 8000 for o in found)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_infinity_is_a_value_error(bad):
    signal = np.zeros(RATE)
    signal[100] = bad
    with pytest.raises(ValueError, match="NaN or infinity"):
        find_onsets(signal, RATE)


def test_empty_or_shorter_than_a_frame_has_no_onsets():
    assert find_onsets(np.array([]), RATE) == []
    assert find_onsets(np.ones(10), RATE) == []


@pytest.mark.parametrize("rate", [0, -48000, float("nan")])
def test_a_sample_rate_that_is_not_positive_is_a_value_error(rate):
    with pytest.raises(ValueError, match="sample rate"):
        find_onsets(np.zeros(100), rate)


def test_a_signal_of_two_channels_is_a_value_error():
    with pytest.raises(ValueError, match="one dimension"):
        find_onsets(np.zeros((100, 2)), RATE)


def test_a_click_in_white_noise_is_not_placed_by_the_quiet_test_before_it():
    """Found by the property above (seed 187): the voiced band's sustained test took the
    click's few frames, tens of dB up, as a quiet voice from 16 ms before it."""
    signal = 1e-3 * np.random.default_rng(187).standard_normal(3 * RATE)
    signal[43_422] += 0.5
    [found] = find_onsets(signal, RATE)
    assert abs(found.sample - 43_422) <= 3 * MS


@pytest.mark.parametrize("width", [1, 2, 3, 4, 99, 100, 500])
def test_the_floors_medians_are_numpys_to_the_bit(width):
    """Without np.median's check for masked arrays, which imports numpy.ma."""
    values = np.random.default_rng(width).normal(-60.0, 12.0, (2, width))
    assert np.array_equal(onsets._medians(values), np.median(values, axis=1, keepdims=True))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.sampled_from([30.0, 300.0, 3000.0]))
def test_16_bit_samples_give_the_floats_onsets_to_the_bit(seed, level):
    """The clips' cutter gives the ring's samples as they are (no float copy of a clip)."""
    rng = np.random.default_rng(seed)
    samples = rng.normal(0.0, level, RATE).clip(-32768, 32767).astype(np.int16)
    at = int(rng.integers(RATE // 4, RATE - RATE // 8))
    samples[at : at + 2000] = rng.normal(0.0, 8000.0, 2000).clip(-32768, 32767)
    floats = samples.astype(np.float32) / 32768.0  # as Sound.floats() makes them
    assert find_onsets(samples, RATE) == find_onsets(floats, RATE)


@needs_espeak
def test_a_second_shout_over_the_first_is_marked_soft_and_the_first_is_not():
    """Issue 30: the screen marks how sure an onset is. A shout from the room's level is a
    sharp start; a second one over the first one's vowel rises a few dB over it at most,
    and is soft, whatever it lands on."""
    clip = shouts.clip("white", 20, 1, gaps_s=(0.12,))
    found = find_onsets(clip.signal, RATE)
    first = min(found, key=lambda o: abs(o.sample - clip.onsets[0]))
    second = min(found, key=lambda o: abs(o.sample - clip.onsets[1]))
    assert not first.soft and first.strength_db >= onsets.SURE_DB, clip.label
    assert second.soft, clip.label


def test_a_second_voice_with_no_hiss_over_a_first_one_is_found():
    """Issue 30: a second real voice that starts with no /s/ shows in the voiced band only,
    over the first voice: the voiced band may start an onset over a sound (rising 10 dB
    over its recent level), and such an onset is soft."""
    rng = np.random.default_rng(3)
    t = np.arange(2 * RATE) / RATE
    signal = 1e-3 * rng.standard_normal(len(t))
    starts = [RATE // 2, RATE // 2 + 150 * MS]
    for at, (pitch, level) in zip(starts, [(120.0, 0.02), (190.0, 0.1)], strict=True):
        voice = level * sum(np.sin(2 * np.pi * pitch * k * t) / k for k in range(1, 5))
        voice[:at] = 0.0
        voice[at : at + 5 * MS] *= 0.5 - 0.5 * np.cos(np.pi * np.arange(5 * MS) / (5 * MS))
        signal += voice
    found = find_onsets(signal, RATE)
    for at in starts:
        assert min(abs(o.sample - at) for o in found) <= 10 * MS, [o.sample for o in found]
    second = min(found, key=lambda o: abs(o.sample - starts[1]))
    assert second.band == "voiced" and second.soft


needs_voices = pytest.mark.skipif(voices.missing() is not None, reason=voices.missing() or "")


def test_the_real_voices_come_with_the_tests():
    """The recordings are the repository's (tests/recordings/), so no run skips the tests
    on people: a detector judged on a synthesizer alone missed most real pairs (issue 30).
    Each half has people saying /s/ words and others."""
    assert voices.missing() is None
    for half in (voices.TUNED, voices.HELD_OUT):
        assert {v.speaker for v in voices.speakers(half)} == set(half)
        assert sum(v.sibilant for v in voices.speakers(half)) >= 6
        assert sum(not v.sibilant for v in voices.speakers(half)) >= 12


@needs_voices
def test_real_voices_second_onsets_found_in_order_are_marked_soft():
    """On recorded people the screen never shows a second voice's start as sure: in the
    held-out speakers' /s/ pairs over other people talking, every second onset found in
    order is soft (bench/onsets.py measures how often they are found at all)."""
    for seed in range(6):
        clip = voices.clip(voices.HELD_OUT, 20, seed, pair="two people", sibilant=True)
        found = find_onsets(clip.signal, RATE)
        near = [o for o in found if abs(o.sample - clip.onsets[1]) <= 20 * MS]
        assert all(o.soft for o in near), clip.label


@needs_voices
def test_real_voices_are_resampled_with_their_true_onsets_inside():
    assert len(voices.voices()) >= 30
    for voice in voices.voices():
        assert 0 < voice.onset < len(voice.samples), voice
        assert voice.speaker in voices.TUNED + voices.HELD_OUT


def test_a_voice_is_heard_where_it_rises_over_the_rest():
    """The benchmark's heard onset (tests/voices.py): a voice 30 dB under the room from its
    true onset is not heard until it rises over it; a second voice 20 dB under a first one
    in every band is heard where the first one stops."""
    rng = np.random.default_rng(5)
    room = 0.01 * rng.standard_normal(RATE)
    voice = 0.1 * rng.standard_normal(RATE)
    voice[: RATE // 4] = 0.0
    voice[RATE // 4 : RATE // 2] *= 10 ** (-30 / 20) / 10  # 30 dB under the room
    assert abs(voices.heard(voice, room, RATE // 4) - RATE // 2) <= 5 * MS
    first = 0.1 * rng.standard_normal(RATE)
    first[RATE // 2 :] = 0.0
    second = 0.01 * rng.standard_normal(RATE)
    second[: RATE // 4] = 0.0
    assert abs(voices.heard(second, first + 0.001 * room, RATE // 4) - RATE // 2) <= 5 * MS
    assert voices.heard(np.zeros(RATE), room, RATE // 4) is None


@needs_voices
def test_real_voices_are_heard_at_or_after_their_true_onsets():
    """en-GB "car" rises over -40 dB of its peak with a rumble under 150 Hz, 165 ms before
    its /k/: no listener hears that under the others' talk, and the benchmark took it for
    the voice's start (every pair with it was lost whatever the detector did)."""
    car = voices.clip(voices.HELD_OUT, 20, 1, pair="two people")
    assert car.label.startswith("en-GB car"), car.label
    assert car.heard[0] is not None and car.heard[0] - car.onsets[0] >= 150 * MS, car.heard
    for seed in range(4):
        clip = voices.clip(voices.HELD_OUT, 20, seed, pair="same voice", sibilant=True)
        assert all(h is not None and h >= t for h, t in zip(clip.heard, clip.onsets, strict=True))


def found_in_order(found: list[int], truth: list[int]) -> bool:
    """Each true onset has a found one within 20 ms, the nearest ones in the same order."""
    nearest = [min(range(len(found)), key=lambda i: abs(found[i] - t)) for t in truth]
    near = all(abs(found[i] - t) <= 20 * MS for i, t in zip(nearest, truth, strict=True))
    return near and nearest == sorted(set(nearest))


@needs_voices
@pytest.mark.parametrize(
    ("pair", "seed"), [("same voice", 14), ("same voice", 21)], ids=["en-GB", "it"]
)
def test_a_second_voice_heard_first_in_its_low_harmonics_is_found(pair, seed):
    """A voice's start is heard first in 100-300 Hz as often as not under others' talk: the
    low band finds these pairs (en-GB "ball" then "pet", Italian "sa" then "go"), which the
    sibilant and voiced bands alone missed, against their true onsets and where heard."""
    clip = voices.clip(voices.HELD_OUT, 20, seed, pair=pair)
    found = [o.sample for o in find_onsets(clip.signal, RATE)]
    assert found_in_order(found, clip.onsets), clip.label
    assert None not in clip.heard and found_in_order(found, clip.heard), clip.label


@needs_voices
def test_an_onset_in_the_low_band_alone_is_soft():
    """A rise in 100-300 Hz alone may be a rumble as well as a voice: never a sharp mark.
    In these clips (seeds 12 and 27) the low band rose 12 dB from the others' talk alone."""
    low = []
    for half in (voices.TUNED, voices.HELD_OUT):
        for seed in (12, 27):
            clip = voices.clip(half, 20, seed)
            low += [o for o in find_onsets(clip.signal, RATE) if o.band == "low"]
    assert any(o.strength_db >= onsets.SURE_DB for o in low)
    assert all(o.soft for o in low), [o for o in low if not o.soft]


def bursts(seconds: float, seed: int) -> np.ndarray:
    """Murmur with hisses and hums at random moments, some longer than a block's margins:
    sounds that go on across the blocks OnsetFinder decides one at a time."""
    rng = np.random.default_rng(seed)
    n = round(seconds * RATE)
    signal = 0.01 * rng.standard_normal(n)
    for _ in range(round(2 * seconds)):
        at, length = int(rng.integers(0, n - RATE)), int(rng.integers(RATE // 50, RATE))
        if rng.random() < 0.5:
            signal[at : at + length] += 0.3 * rng.standard_normal(length)
        else:
            signal[at : at + length] += 0.2 * np.sin(2 * np.pi * 300 * np.arange(length) / RATE)
    return signal


@settings(max_examples=3, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    block=st.sampled_from([900, 1777, 4000]),
    cuts=st.lists(st.integers(1, 12 * RATE - 1), max_size=12),
)
def test_a_recording_in_pieces_has_the_onsets_of_the_whole(seed, block, cuts):
    """`referee listen`'s way, a block at a time (small ones here: many block edges, each
    inside a sound or in the quiet after one): the same onsets, to the sample."""
    signal = bursts(12.0, seed)
    whole = find_onsets(signal, RATE)
    # Bursts that overlap may leave ten onsets or fewer (seed 54434: ten, about one seed in
    # seventy): too few block edges inside sounds, so another recording is drawn. A finder
    # that found too few in every one would leave none to run: hypothesis fails it.
    assume(len(whole) > 10)
    finder = onsets.OnsetFinder(RATE, block_frames=block)
    found = []
    for piece in np.split(signal, sorted(set(cuts))):
        found += finder.feed(piece)
    found += finder.end()
    assert [(o.sample, o.band, o.soft) for o in found] == [
        (o.sample, o.band, o.soft) for o in whole
    ]
    assert [o.strength_db for o in found] == pytest.approx([o.strength_db for o in whole])


def test_a_recording_in_pieces_takes_the_memory_of_a_block_whatever_its_length():
    """A 2 GB file read whole took 9 times its size (issue 29): in pieces, a recording four
    times as long takes no more at its highest."""
    rate = 8000  # the cost is in frames: a recording this long at 48 kHz is seconds of CPU

    def highest(seconds: int) -> int:
        signal = 0.01 * np.random.default_rng(seconds).standard_normal(seconds * rate)
        tracemalloc.start()
        try:
            finder = onsets.OnsetFinder(rate, block_frames=1000)  # 1 s: many blocks
            for piece in np.split(signal, seconds):  # as mono_pieces gives them: a second
                finder.feed(piece)
            finder.end()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    short, long = highest(10), highest(40)
    assert long < 1.1 * short, (short, long)
