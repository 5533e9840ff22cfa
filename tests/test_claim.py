"""The SET a caller takes, as the camera sees it (referee/claim.py), and the SET test and
its reason in words (referee/faces.py): pure."""

from itertools import combinations

from hypothesis import assume, given
from hypothesis import strategies as st

from referee import faces
from referee.claim import taken
from referee.inbox import SeenCard

FACES = [(n, c, s, p) for n in range(3) for c in range(3) for s in range(3) for p in range(3)]
W, H = 100, 150  # a card's box, portrait
COLUMNS = 7  # a table's cells, a card's size and a gap apart
CELLS = [(30 + 140 * (i % COLUMNS), 20 + 190 * (i // COLUMNS)) for i in range(COLUMNS * 4)]
NUDGE = 20  # a nudge in x and in y: under half the short side (50) in all


def one_set_rule(a, b, c) -> list[bool]:
    """Each attribute: two of one value and one of another (not a SET's), by the book."""
    return [len({x, y, z}) == 2 for x, y, z in zip(a, b, c, strict=True)]


def test_the_deck_has_exactly_one_third_for_any_two_cards():
    for a, b in combinations(FACES, 2):
        assert sum(faces.is_set(a, b, c) for c in FACES if c not in (a, b)) == 1


@given(st.permutations(FACES).map(lambda deck: deck[:3]))
def test_a_set_is_judged_one_iff_it_is_and_the_reason_names_what_fails(three):
    a, b, c = three
    failing = one_set_rule(a, b, c)
    assert faces.is_set(a, b, c) == (not any(failing))
    why = faces.why_not(a, b, c)
    assert (why is None) == (not any(failing))
    parts = [] if why is None else why.split("; ")
    assert len(parts) == sum(failing)
    for part, attribute in zip(parts, [i for i, f in enumerate(failing) if f], strict=True):
        values = {x[attribute] for x in three}
        named = faces.ATTRIBUTES[attribute][1]
        assert all(str(named[v]) in part for v in values), (part, values)


def test_the_reason_in_words():
    assert faces.why_not((0, 0, 0, 1), (1, 0, 0, 1), (2, 1, 0, 1)) == "two red, one green"
    assert faces.why_not((0, 0, 0, 1), (1, 1, 0, 1), (2, 2, 0, 0)) == "two ovals, one diamond"
    assert faces.why_not((0, 0, 0, 0), (0, 1, 1, 1), (2, 2, 1, 2)) == (
        "two 1s, one 3; two striped, one solid"
    )
    assert faces.words((2, 0, 1, 1)) == "3 red striped ovals"
    assert faces.words((0, 2, 2, 2)) == "1 purple open squiggle"


@st.composite
def layouts(draw, least=3):
    """A table: different faces in different cells, each sure or not."""
    n = draw(st.integers(least, 21))
    chosen = draw(st.permutations(FACES))[:n]
    cells = draw(st.permutations(range(len(CELLS))))[:n]
    sure = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return [
        SeenCard(face, s, (*CELLS[cell], W, H))
        for face, cell, s in zip(chosen, cells, sure, strict=True)
    ]


def nudged(draw, cards):
    """The cards a hand nudged, each a little, and read again (the order changes too)."""
    moved = [
        SeenCard(
            c.face,
            c.sure,
            (
                c.box[0] + draw(st.integers(-NUDGE, NUDGE)),
                c.box[1] + draw(st.integers(-NUDGE, NUDGE)),
                W,
                H,
            ),
        )
        for c in cards
    ]
    return draw(st.permutations(moved))


@given(layouts(), st.data())
def test_three_cards_taken_are_the_claim(before, data):
    gone = data.draw(st.sets(st.sampled_from(range(len(before))), min_size=3, max_size=3))
    after = nudged(data.draw, [c for i, c in enumerate(before) if i not in gone])
    claim = taken(before, after)
    assert claim is not None
    assert sorted(claim.cards, key=before.index) == [before[i] for i in sorted(gone)]
    three = [c.face for c in claim.cards]
    assert (claim.why_not is None) == faces.is_set(*three)
    if all(c.sure for c in claim.cards):
        assert claim.verdict == faces.is_set(*three)
    else:
        assert claim.verdict is None  # an unsure card: never a verdict


@given(layouts(), st.data())
def test_an_unsure_reading_at_a_cards_place_is_that_card(before, data):
    gone = data.draw(st.sets(st.sampled_from(range(len(before))), min_size=3, max_size=3))
    after = [
        SeenCard(data.draw(st.sampled_from(FACES)), False, c.box) if i % 2 else c
        for i, c in enumerate(before)
        if i not in gone
    ]
    claim = taken(before, after)
    assert claim is not None and set(claim.cards) == {before[i] for i in gone}


@given(layouts(least=0), st.data())
def test_cards_that_only_moved_a_little_are_no_claim(before, data):
    assert taken(before, nudged(data.draw, before)) is None


@given(layouts(least=0), st.data())
def test_cards_missing_but_not_three_are_no_claim(before, data):
    kept = data.draw(st.sets(st.sampled_from(range(len(before))) if before else st.nothing()))
    assume(len(before) - len(kept) != 3)
    after = nudged(data.draw, [c for i, c in enumerate(before) if i in kept])
    assert taken(before, after) is None


@given(layouts(least=4), st.data())
def test_a_card_that_was_not_there_is_no_claim(before, data):
    """Four gone and one come (a hand read as a card, a card dealt), or three gone and a
    kept card read surely as another face: a card replaced."""
    gone = data.draw(st.sets(st.sampled_from(range(len(before))), min_size=4, max_size=4))
    after = nudged(data.draw, [c for i, c in enumerate(before) if i not in gone])
    free = [cell for cell in CELLS if cell not in {c.box[:2] for c in before}]
    come = SeenCard(data.draw(st.sampled_from(FACES)), data.draw(st.booleans()), (0, 0, W, H))
    where = data.draw(st.sampled_from(free))
    assert taken(before, [*after, SeenCard(come.face, come.sure, (*where, W, H))]) is None
    kept = [c for i, c in enumerate(before) if i not in list(gone)[:3]]
    sure = [i for i, c in enumerate(kept) if c.sure]
    assume(sure)
    i = data.draw(st.sampled_from(sure))
    other = next(f for f in FACES if f not in {c.face for c in before})
    kept[i] = SeenCard(other, True, kept[i].box)
    assert taken(before, kept) is None
