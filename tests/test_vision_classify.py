"""The classifier: its working memory (issue 32, "at most 60 MB more with the camera on"):
a layout is read a few cards at a time, and what the network reads is never the same as
when it read the whole layout in one batch; and cards as real photos show them (a
shadow's sharp edge, glare, a worn ink, a blur) read surely, never wrongly."""

import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.vision import classify
from referee.vision.card import all_faces
from referee.vision.find_cards import CARD_H, CARD_W
from tools.vision import dataset

DECK = all_faces()

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


# What real photos do to cards (MODEL.md: the cards the classifier left unsure or read
# wrong), each alone, rendered as the training renders them but from another seed.
HARD_LOOKS = ("shade", "glare", "worn", "blur")


def test_cards_under_what_real_photos_do_are_read_surely_and_never_wrongly():
    rng = np.random.default_rng(2026)
    faces = [DECK[i] for i in rng.choice(81, 40)] * len(HARD_LOOKS)
    looks = [frozenset({look}) for look in HARD_LOOKS for _ in range(40)]
    flats = [dataset.rendered_flat(f, rng, look) for f, look in zip(faces, looks, strict=True)]
    readings = classify.read(flats)
    right = [r.sure and r.face == f for r, f in zip(readings, faces, strict=True)]
    wrong = [r.sure and r.face != f for r, f in zip(readings, faces, strict=True)]
    by_look = {look: sum(right[i * 40 : i * 40 + 40]) for i, look in enumerate(HARD_LOOKS)}
    assert not any(wrong)
    assert sum(right) >= 0.9 * len(faces), f"read right and surely, of 40 each: {by_look}"
