"""Every SET among the cards read surely: pure (the SET test itself: tests/test_claim.py)."""

from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from referee.vision.card import all_faces
from referee.vision.sets import find_sets

DECK = all_faces()


def test_the_deck_is_81_different_cards():
    assert len(set(DECK)) == 81


@given(st.lists(st.sampled_from(DECK), unique=True, max_size=21), st.data())
def test_a_set_is_found_iff_it_is_among_the_sure_cards(cards, data):
    unsure = data.draw(st.sets(st.integers(0, max(len(cards) - 1, 0))))
    faces = [None if i in unsure else f for i, f in enumerate(cards)]
    found = set(find_sets(faces))
    for i, j, k in combinations(range(len(cards)), 3):
        sure = all(faces[x] is not None for x in (i, j, k))
        expected = sure and all(
            len({v[n] for v in (cards[i].values(), cards[j].values(), cards[k].values())}) != 2
            for n in range(4)
        )
        assert ((i, j, k) in found) == expected
