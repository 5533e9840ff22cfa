"""Which three cards make a SET, and every SET among the cards read surely: pure."""

from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from referee.vision.card import Face, all_faces
from referee.vision.sets import find_sets, is_set, why_not

DECK = all_faces()


def test_the_deck_is_81_different_cards():
    assert len(set(DECK)) == 81


def test_any_two_cards_have_exactly_one_third_that_makes_a_set():
    for a, b in combinations(DECK[:20], 2):
        thirds = [c for c in DECK if c not in (a, b) and is_set(a, b, c)]
        assert len(thirds) == 1


def test_why_not_names_the_attribute_that_is_two_and_one():
    a = Face(1, "red", "solid", "oval")
    b = Face(2, "red", "solid", "oval")
    c = Face(3, "green", "solid", "oval")
    assert why_not(a, b, c) == "color: two red, one green"
    assert why_not(a, b, Face(3, "red", "solid", "oval")) is None


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
