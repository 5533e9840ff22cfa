"""The classifier's working memory (issue 32, "at most 60 MB more with the camera on"):
a layout is read a few cards at a time, and what the network reads is never the same as
when it read the whole layout in one batch."""

import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.vision import classify
from referee.vision.find_cards import CARD_H, CARD_W

SOME = settings(max_examples=6, deadline=None, derandomize=True)


def _flats(count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (CARD_H, CARD_W, 3), np.uint8) for _ in range(count)]


def test_a_layout_of_21_is_read_without_copies_of_its_whole_input():
    flats = _flats(21, 1)
    classify.probabilities(flats[:2])  # the network loaded, outside the count
    whole = 21 * 3 * classify.INPUT_H * classify.INPUT_W * 4  # the input, float32
    tracemalloc.start()
    try:
        classify.probabilities(flats)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The input once, and a batch turned at a time: not the input normalised into new
    # arrays, nor the whole layout turned (some 3 times the input at once).
    assert peak < 1.5 * whole, f"{peak / 2**20:.1f} MB held for a {whole / 2**20:.1f} MB input"


@SOME
@given(count=st.integers(0, 21), batch=st.integers(1, 9))
def test_the_readings_are_the_same_whatever_the_batch(count, batch):
    flats = _flats(count, count)
    saved = classify.BATCH
    try:
        classify.BATCH = 32  # every card in one pass
        whole = classify.probabilities(flats)
        classify.BATCH = batch
        by_batches = classify.probabilities(flats)
    finally:
        classify.BATCH = saved
    for a, b in zip(whole, by_batches, strict=True):
        assert np.array_equal(a, b)
