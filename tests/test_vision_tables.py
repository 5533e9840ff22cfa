"""Rendered tables whose every card is known (tools/vision/render.py): the cards found
and read, none invented, a card partly hidden or cut by the frame's edge never read
surely, and nothing on a table of things that are not cards.

The readings come from the trained model (referee/vision/cards.onnx): the properties run
derandomized, the same examples every run."""

import json
import math

import cv2
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.cli import main
from referee.vision import find_cards as find_cards_module
from referee.vision.card import Face, all_faces
from referee.vision.find_cards import find_cards
from referee.vision.layout import Layout, read_frame
from tools.vision.render import HIDDEN, Placed, Table, cover, draw_card, exposed, render_table

DECK = all_faces()
DISTRACTORS = ("hand", "cable", "box", "phone", "paper")
# The properties (hypothesis) render and read three tables or more each, 0.5 to 1.2 s of
# CPU a property, 9 s in all: marked slow, `make test-slow` runs them (CI runs both) and
# `make test` keeps the tables of fixed seeds, within its minute on two cores.
SOME = settings(max_examples=3, deadline=None, derandomize=True)


def _table(seed: int, count: int, **options) -> Table:
    rng = np.random.default_rng(seed)
    faces = [DECK[i] for i in rng.choice(81, count, replace=False)]
    return render_table(faces, rng, size=(960, 720), **options)


def _under(table: Table, layout: Layout) -> list[Placed | None]:
    """The true card under each card read (the one whose corners hold its middle)."""
    out: list[Placed | None] = []
    for card in layout.cards:
        middle = np.mean(card.corners, axis=0)
        under = [
            p
            for p in table.cards
            if cv2.pointPolygonTest(p.corners.astype(np.float32), tuple(map(float, middle)), False)
            >= 0
        ]
        out.append(under[0] if under else None)
    return out


def test_a_table_of_twelve_is_read_whole_and_right():
    table = _table(12, 12, top="cloth", light="day")
    layout = read_frame(table.image)
    under = _under(table, layout)
    assert len(layout.cards) == 12
    assert all(u is not None for u in under)
    assert [c.face for c in layout.cards if c.sure] == [
        u.face for c, u in zip(layout.cards, under, strict=True) if c.sure
    ]
    assert sum(c.sure for c in layout.cards) >= 11


def _foreshortened(seed: int, count: int, squash: float) -> tuple[np.ndarray, list[Face]]:
    """A table seen from low down, the cards' long side pointing away: the frame squashed
    along it by `squash`, so that a card looks about as wide as it is long, or wider (the
    far row of pclewis/set-solver's angle.jpg, tools/vision/labels/pclewis)."""
    table = _table(seed, count, top="cloth", light="day")
    corners = table.cards[0].corners
    sides = [corners[1] - corners[0], corners[2] - corners[1]]
    along = max(sides, key=lambda v: float(np.hypot(*v)))
    height, width = table.image.shape[:2]
    size = (
        (width, round(height * squash))
        if abs(along[1]) > abs(along[0])
        else (round(width * squash), height)
    )
    image = cv2.resize(table.image, size, interpolation=cv2.INTER_AREA)
    return image, [p.face for p in table.cards]


def test_a_card_foreshortened_to_a_square_is_found_and_read():
    image, faces = _foreshortened(0, 6, 0.66)
    layout = read_frame(image)
    assert sorted(map(str, (c.face for c in layout.cards if c.sure))) == sorted(map(str, faces))


def test_cards_foreshortened_past_a_square_are_found_and_read():
    """From lower still, the far cards look wider across than along (vimalloc/set-solver's
    filter_cards3): their symbols stand the other way to their sides, and say so."""
    image, faces = _foreshortened(0, 6, 0.5)
    layout = read_frame(image)
    sure = [c.face for c in layout.cards if c.sure]
    assert len(sure) >= 4
    assert all(face in faces for face in sure)


@pytest.mark.slow
@SOME
@given(st.integers(0, 2**31), st.integers(3, 12), st.floats(0.4, 0.8))
def test_a_foreshortened_card_is_never_read_surely_wrong(seed, count, squash):
    image, faces = _foreshortened(seed, count, squash)
    layout = read_frame(image)
    assert len(layout.cards) <= count
    assert all(c.face in faces for c in layout.cards if c.sure)


@pytest.mark.slow
@SOME
@given(
    st.integers(0, 2**31), st.integers(3, 21), st.lists(st.sampled_from(DISTRACTORS), max_size=3)
)
def test_no_card_is_invented_and_none_read_surely_is_wrong(seed, count, distractors):
    table = _table(seed, count, distractors=tuple(distractors))
    layout = read_frame(table.image)
    for card, under in zip(layout.cards, _under(table, layout), strict=True):
        assert under is not None, f"a card invented at {card.box}"
        if card.sure:
            assert card.face == under.face


@pytest.mark.slow
@SOME
@example(5019, 11)  # a palm's edge over a card's end taken for its side: read surely once
@given(st.integers(0, 2**31), st.integers(6, 15))
def test_a_card_under_a_hand_is_never_read_surely(seed, count):
    table = _table(seed, count, over_cards=("hand",))
    layout = read_frame(table.image)
    for card, under in zip(layout.cards, _under(table, layout), strict=True):
        assert under is not None
        if under.visible < 0.9:
            assert not card.sure, f"{under.face}, {under.visible:.0%} of it showing, read surely"


@pytest.mark.slow
@SOME
@example(10, 12, "black", 1.46)  # three red striped ovals read surely open before
@given(
    st.integers(0, 2**31),
    st.integers(6, 15),
    st.sampled_from(["cloth", "wood", "black", "white"]),
    st.floats(0.5, 1.5),
)
def test_cards_overexposed_are_never_read_surely_open_or_striped_wrong(seed, count, top, stops):
    """A camera exposing for a dark table blows the cards' paper out, and the faint ink
    with it: stripes fade to open. (A purple whose paper has its red blown may read red:
    MODEL.md, a limit left.)"""
    table = _table(seed, count, top=top)
    image = exposed(table.image, stops)
    layout = read_frame(image)
    for card, under in zip(layout.cards, _under(table, layout), strict=True):
        assert under is not None
        if card.sure:
            assert card.face.shading == under.face.shading, f"{under.face} read {card.face}"


def _framed(table: Table, left: int, top: int) -> Table:
    """The table as a frame that begins `left` and `top` pixels further in would show it:
    each card moved, and cut where a corner is out of the frame."""
    image = np.ascontiguousarray(table.image[top:, left:])
    height, width = image.shape[:2]
    cards = []
    for p in table.cards:
        corners = p.corners - (left, top)
        inside = bool(np.all((corners >= 0) & (corners < (width, height))))
        assert p.ink is not None
        cards.append(Placed(p.face, corners, p.visible, not inside, p.ink - (left, top)))
    return Table(image, cards)


def _ink_shows(card: Placed, image: np.ndarray) -> bool:
    height, width = image.shape[:2]
    assert card.ink is not None
    return bool(np.all((card.ink >= 0) & (card.ink <= (width, height))))


def test_a_card_the_frames_edge_only_grazes_is_read_surely():
    """The frame's edge through a card's rim, far from its symbols (a card laid at the
    table's edge of the picture: pclewis/set-solver's boards have 8): every symbol shows,
    and the card reads as it would whole."""
    table = _table(3, 9, top="cloth", light="day")
    index, first = min(enumerate(table.cards), key=lambda p: p[1].corners[:, 0].min())
    edge, far = first.corners[:, 0].min(), first.corners[:, 0].max()
    framed = _framed(table, round(edge + 0.03 * (far - edge)), 0)
    layout = read_frame(framed.image)
    under = _under(framed, layout)
    read = [c for c, u in zip(layout.cards, under, strict=True) if u is framed.cards[index]]
    assert framed.cards[index].cut
    assert [(c.face, c.sure) for c in read] == [(first.face, True)]


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.integers(0, 2**31), st.integers(3, 15), st.floats(0.0, 0.7), st.booleans())
def test_a_card_whose_ink_the_frames_edge_cuts_is_never_read_surely(seed, count, into, across):
    """The frame's edge anywhere through a card, from its paper to past its middle: read
    surely only where every symbol shows, and then right."""
    table = _table(seed, count)
    axis = 0 if across else 1
    first = min(table.cards, key=lambda p: p.corners[:, axis].min())
    edge = first.corners[:, axis].min()
    far = first.corners[:, axis].max()
    at = max(0, round(edge + into * (far - edge)))
    framed = _framed(table, at, 0) if across else _framed(table, 0, at)
    layout = read_frame(framed.image)
    for card, under in zip(layout.cards, _under(framed, layout), strict=True):
        assert under is not None, f"a card invented at {card.box}"
        if card.sure:
            assert _ink_shows(under, framed.image), f"{under.face} read surely, its ink cut"
            assert card.face == under.face


@pytest.mark.xfail(
    strict=True,
    reason="cards.onnx reads 3 of 26 such blotted cards surely; the models trained with"
    " covers read none, but were not taken (referee/vision/MODEL.md)",
)
@pytest.mark.slow
@SOME
@example(102, 8, "blot")  # a blot over the third of 3 squiggles: read surely before
@example(107, 13, "blot")  # one below 2 ovals, where a third would lie: read surely before
@given(st.integers(0, 2**31), st.integers(6, 15), st.sampled_from(["blot", "hand"]))
def test_a_card_partly_hidden_is_never_read_surely(seed, count, kind):
    """A blot (a cup, a phone) or fingers over a share of a card's middle (render.HIDDEN):
    what shows may be another card (two of three symbols), so the camera must say it
    cannot see it, where under a shadow or glare it reads on."""
    table = _table(seed, count, top="cloth", light="day")
    rng = np.random.default_rng(seed)
    hidden: dict[int, float] = {}
    for i in rng.choice(count, max(1, count // 3), replace=False):
        mask = np.zeros(table.image.shape[:2], np.uint8)
        cv2.fillConvexPoly(mask, table.cards[i].corners.astype(np.int32), 255)
        share = cover(table.image, rng, mask, table.cards[i].corners, (kind,))
        if share:
            hidden[int(i)] = share
    assert hidden
    layout = read_frame(table.image)
    for card, under in zip(layout.cards, _under(table, layout), strict=True):
        assert under is not None
        i = next(j for j, p in enumerate(table.cards) if p is under)
        if i in hidden:
            assert HIDDEN[0] <= hidden[i] <= HIDDEN[1]
            assert not card.sure, f"{under.face}, {hidden[i]:.0%} of its middle hidden, read surely"


@pytest.mark.slow
@SOME
@given(st.integers(0, 2**31), st.lists(st.sampled_from(DISTRACTORS), min_size=1, max_size=5))
def test_no_card_on_a_table_of_things_that_are_not_cards(seed, distractors):
    rng = np.random.default_rng(seed)
    table = render_table(
        [], rng, size=(960, 720), distractors=tuple(distractors), card_px=rng.uniform(120, 260)
    )
    assert read_frame(table.image).cards == ()


def test_look_prints_each_photo_as_one_json_object(tmp_path, capsys):
    paths = []
    for seed in (1, 2):
        table = _table(seed, 12)
        paths.append(tmp_path / f"table{seed}.jpg")
        cv2.imwrite(str(paths[-1]), table.image)
    assert main(["look", "--json", *map(str, paths)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line in lines:
        body = json.loads(line)
        for card in body["cards"]:
            assert {"number", "color", "shading", "shape", "box", "sure"} <= card.keys()
            assert card["number"] in (1, 2, 3) and len(card["box"]) == 4
        for s in body["sets"]:
            assert len(s) == 3 and all(body["cards"][i]["sure"] for i in s)


def _read_right(table: Table) -> tuple[int, list[str]]:
    """How many cards are read surely and right; and any read surely wrong, or invented."""
    layout = read_frame(table.image)
    bad = []
    right = 0
    for card, under in zip(layout.cards, _under(table, layout), strict=True):
        if under is None:
            bad.append(f"a card invented at {card.box}")
        elif card.sure and card.face != under.face:
            bad.append(f"{under.face} read surely as {card.face}")
        else:
            right += card.sure
    return right, bad


@pytest.mark.slow
@SOME
@given(st.integers(0, 2**31), st.integers(6, 12), st.floats(0.2, 0.4))
def test_cards_across_the_edge_of_a_shadow_are_found_and_read(seed, count, shade):
    # A hand's or a lamp's shadow across the cards (pclewis/set-solver's shadow*.jpg): the
    # paper in the shade is darker, its margin still paper.
    table = _table(seed, count, top="cloth", light="day", shade=shade)
    right, bad = _read_right(table)
    assert not bad
    assert right >= count - 1


# A shadow's edge, sharp and compressed, leaves a dark fringe on its dark side (a JPEG's
# ringing, a camera's sharpening) that is a seam to the finder, and notched the cards it
# crosses: the finder found 9 and 8 of these twelve whole before it looked at the bright
# regions with no edge cut out, 11 and 9 before it looked at them with no seam either.
@pytest.mark.parametrize("seed", [4, 7])
def test_cards_across_a_shadows_sharp_edge_are_found_whole(seed):
    table = _table(seed, 12, top="cloth", light="day", shade=0.35)
    found, invented = _found_whole(table)
    assert not invented
    assert found == 12


# A lamp's shadow is lit by the room, the paper beside it by the lamp: the shade is of
# another colour than the light (pclewis/set-solver's shadow*.jpg: a brown shade beside
# white paper), and still paper. Tables where the warm shade lost cards before it was
# taken for paper (10 of 12, 5 of 6, 5 of 6).
@pytest.mark.parametrize(
    ("seed", "count", "shade"),
    [
        (381654049, 12, 0.292211551880437),
        (2180442, 6, 0.29995880575325357),
        (2103511158, 6, 0.2691684440392759),
    ],
)
def test_cards_across_the_edge_of_a_warm_shadow_are_found_and_read(seed, count, shade):
    table = _table(seed, count, top="cloth", light="day", shade=shade, shade_tint=0.4)
    right, bad = _read_right(table)
    assert not bad
    assert right == count


@pytest.mark.slow
@SOME
@given(st.integers(0, 2**31), st.integers(3, 12), st.floats(0.2, 0.45), st.floats(0, 0.6))
def test_cards_in_a_tinted_shade_are_never_invented_nor_read_surely_wrong(seed, count, shade, tint):
    # Skin is of another colour than paper too: a shade taken for paper must not let a
    # hand's or the table's colour pass for a card's paper.
    table = _table(seed, count, top="cloth", light="day", shade=shade, shade_tint=tint)
    _, bad = _read_right(table)
    assert not bad


@pytest.mark.slow
@SOME
@given(st.integers(0, 2**31), st.integers(3, 12))
def test_cards_laid_edge_to_edge_are_never_invented_nor_read_surely_wrong(seed, count):
    # The seams between cards touching (pclewis/set-solver's line.jpg) are cut out of the
    # bright regions: a cut that runs through a card must not make a card of its pieces.
    table = _table(seed, count, top="cloth", light="day", touching=True)
    _, bad = _read_right(table)
    assert not bad


# Cards edge to edge in a grid: two side by side make a card's shape, twice a card's size,
# which must not keep the seam between them as its own. Tables read 5 of 11 and 10 of 12
# before.
@pytest.mark.parametrize(("seed", "count", "read"), [(0, 11, 7), (39, 12, 12)])
def test_a_block_of_cards_in_a_cards_shape_is_cut_at_its_seams(seed, count, read):
    table = _table(seed, count, top="cloth", light="day", touching=True)
    right, bad = _read_right(table)
    assert not bad
    assert right >= read


def _row_edge_to_edge(faces: list[Face], reach: float) -> np.ndarray:
    """Cards side by side, portrait, on a dark table: the first apart, the others edge to
    edge, the seam between each two a faint line that fades out `reach` of the card's
    height from its ends (where the rounded corners meet, pclewis/set-solver's line.jpg):
    there the papers join."""
    long_, short, gap = 240, 154, 60
    image = np.full((long_ + 2 * gap, len(faces) * short + 3 * gap, 3), 40, np.uint8)
    left = [gap] + [2 * gap + i * short for i in range(1, len(faces))]
    for x, face in zip(left, faces, strict=True):
        image[gap : gap + long_, x : x + short] = np.rot90(draw_card(face, (long_, short)))
    ends = round(reach * long_)
    for x in left[2:]:
        image[gap + ends : gap + long_ - ends, x - 1 : x + 1] -= 30
    return cv2.GaussianBlur(image, (3, 3), 0)


def test_cards_edge_to_edge_whose_seams_fade_at_their_ends_are_found_apart():
    # The seams' straight lines drawn on across the block they lie in, at the size of the
    # card found apart; six cards in a row, no card's shape (a block of fewer, a card's
    # shape, is taken for one card until it is read, and keeps its seams).
    faces = [DECK[i] for i in (5, 31, 47, 70, 12, 58, 77)]
    layout = read_frame(_row_edge_to_edge(faces, 0.06))
    assert [c.face for c in layout.cards if c.sure] == faces


def _striped_shade(table: Table, rng: np.random.Generator, strength: float, tint: float) -> Table:
    """The shade of a lamp's arm or of fingers across the layout (pclewis/set-solver's
    shadow*.jpg): parallel bands narrower than a card, their edges sharp, each darkening
    the paper by `strength`, blue by `tint` more and red by `tint` less."""
    image = table.image
    height, width = image.shape[:2]
    card = float(np.median([np.hypot(*(p.corners[0] - p.corners[1])) for p in table.cards]))
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, math.pi)
    along = (xx * math.cos(angle) + yy * math.sin(angle)) / card
    period = rng.uniform(0.5, 0.8)  # of a card's long side
    inside = (along + rng.uniform(0, period)) % period < rng.uniform(0.3, 0.5) * period
    soft = cv2.GaussianBlur(inside.astype(np.float32), (0, 0), rng.uniform(0.7, 1.5))
    darker = strength * np.array([1 + tint, 1, 1 - tint], np.float32)
    table.image = np.clip(image * (1 - darker * soft[..., None]), 0, 255).astype(np.uint8)
    return table


def _found_whole(table: Table) -> tuple[int, list[str]]:
    """How many true cards the finder finds whole; and where it finds one that is none."""
    whole, invented = set(), []
    for found in find_cards(table.image):
        middle = tuple(map(float, found.corners.mean(axis=0)))
        under = [
            i
            for i, p in enumerate(table.cards)
            if cv2.pointPolygonTest(p.corners.astype(np.float32), middle, False) >= 0
        ]
        if not under:
            invented.append(f"a card found at {middle}")
        elif found.whole:
            whole.add(under[0])
    return len(whole), invented


# Each band's sharp edges are edges: they cut a card in pieces, none a card's shape, and
# the finder found 1 card of 33 whole on these three tables (8, 10 and 11 since) before it
# looked again at the bright regions with only the seams cut out, and judged the paper's
# light over bands narrower than a third of the card as well.
@pytest.mark.parametrize(("seed", "least"), [(0, 8), (2, 10), (4, 11)])
def test_cards_under_a_shade_in_bands_are_found(seed, least):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(6, 13))
    table = _table(seed, count, top=str(rng.choice(["cloth", "wood"])), light="day")
    found, invented = _found_whole(_striped_shade(table, rng, 0.4, 0.15))
    assert not invented
    assert found >= least


@pytest.mark.slow
@SOME
@given(
    st.integers(0, 2**31),
    st.integers(3, 15),
    st.floats(0.2, 0.55),
    st.floats(0, 0.4),
    st.lists(st.sampled_from(DISTRACTORS), max_size=3),
)
def test_a_shade_in_bands_invents_no_card_nor_reads_one_surely_wrong(
    seed, count, strength, tint, distractors
):
    # The bright regions looked at with no edge cut out join what lies on the table too
    # (paper, a phone's glare, a hand's edge): none of it may pass for a card.
    rng = np.random.default_rng(seed)
    table = _table(seed, count, distractors=tuple(distractors))
    _, bad = _read_right(_striped_shade(table, rng, strength, tint))
    assert not bad


# A webcam's frame, 1280 x 720, the cards some 130 px long: an outlined symbol's line is
# a pale pixel or two wide, which the flat card's check found in pieces (four blobs, or
# none as tall as a symbol) and took the card for no card. Tables where one card was
# lost so before the pieces were joined by a wider closing (11 of 12 each).
@pytest.mark.parametrize("seed", [9, 14])
def test_a_small_cards_pale_outlined_symbols_are_found(seed):
    rng = np.random.default_rng(seed)
    faces = [DECK[i] for i in rng.choice(81, 12, replace=False)]
    table = render_table(faces, rng, size=(1280, 720))
    layout = read_frame(table.image)
    assert sorted(str(c.face) for c in layout.cards if c.sure) == sorted(map(str, faces))


# A light table (a white cloth, a pale wood, a laptop's lid): the paper hardly lighter than
# the top, the border between them faint. The finder found 7 of these first twelve, and
# none of the second (a box and a phone beside them darken the frame, and the whole top is
# as bright as the cards), before it cut the faint edges out as well.
@pytest.mark.parametrize(("seed", "distractors"), [(15, ()), (9, ("box", "phone"))])
def test_a_light_table_is_read_whole_and_right(seed, distractors):
    table = _table(seed, 12, top="white", distractors=distractors)
    found, invented = _found_whole(table)
    assert not invented
    assert found == 12
    right, bad = _read_right(table)
    assert not bad
    assert right >= 11


# A laptop's lid (render.py's "silver"): its brushed metal by the lamp as light as the
# cards, their borders lost in its shine. The regions gave 5 and 6 of these twelve whole;
# the cards' symbols, and the faint border found about them, give 8 each.
@pytest.mark.parametrize("seed", [14, 21])
def test_cards_whose_border_no_region_gives_are_found_by_their_symbols(seed):
    table = _table(seed, 12, top="silver")
    found, invented = _found_whole(table)
    assert not invented
    assert found >= 8
    right, bad = _read_right(table)
    assert not bad
    assert right >= 8


# A shadow's sharp edge across a card may be taken for one of its sides: the card is found
# whole, its symbols off its middle. Looked for by its symbols as well, it is found as it
# lies: these tables' cards read right and surely were 4 of 6, 9 of 12 and 11 of 15.
@pytest.mark.parametrize(
    ("seed", "count", "shade", "right"),
    [(40, 6, 0.396, 5), (42, 12, 0.405, 10), (92, 15, 0.37, 12)],
)
def test_a_card_whose_outline_a_shadow_took_is_found_again_by_its_symbols(
    seed, count, shade, right
):
    table = _table(seed, count, shade=shade)
    read, bad = _read_right(table)
    assert not bad
    assert read >= right


def test_the_symbols_of_cards_found_overlapping_are_left_out():
    # Cards touching may be found one by one and as a block of two as well: each card's
    # symbols lie in two quadrilaterals found, and must be left out all the same (drawn
    # together, the polygons' overlap is left in).
    table = _table(3, 12)
    grey = cv2.cvtColor(table.image, cv2.COLOR_BGR2GRAY)

    def inside(card: np.ndarray, found: list[np.ndarray]) -> list[object]:
        short = min(np.hypot(*(card[1] - card[0])), np.hypot(*(card[2] - card[1])))
        symbols = find_cards_module._ink_symbols(table.image, grey, short, found)
        quad = card.astype(np.float32)
        return [
            s
            for s in symbols
            if cv2.pointPolygonTest(quad, tuple(map(float, s.centre)), False) >= 0
        ]

    card = next(p.corners for p in table.cards if inside(p.corners, []))
    along = card[1] - card[0]
    block = np.array([card[0], card[1] + along, card[2] + along, card[3]])
    assert inside(card, [block, card]) == []


@pytest.mark.slow
@SOME
@given(
    st.integers(0, 2**31),
    st.integers(3, 15),
    st.sampled_from(["white", "silver", "pale"]),
    st.lists(st.sampled_from(DISTRACTORS), min_size=1, max_size=3),
)
def test_a_light_table_with_things_on_it_invents_no_card(seed, count, top, distractors):
    # A faint edge is the grain's, a sheet of paper's, a laptop's logo's and rim's as well:
    # none may make a card, nor a card's piece be read surely wrong.
    table = _table(seed, count, top=top, distractors=tuple(distractors))
    _, invented = _found_whole(table)
    assert not invented
    _, bad = _read_right(table)
    assert not bad


def _fingertip(table: Table, i: int, reach: float) -> np.ndarray:
    """The table's image with a fingertip over the middle of card `i`'s short side (its
    corners 1 to 2), reaching `reach` of the card's length in from it, and as far out."""
    image = table.image.copy()
    corners = table.cards[i].corners
    side = (corners[1] + corners[2]) / 2
    inward = corners.mean(axis=0) - side
    length = float(np.linalg.norm(corners[0] - corners[1]))
    inward /= np.linalg.norm(inward)
    axes = (round(0.3 * length), round(0.14 * length))
    tip = (side + inward * (reach * length - axes[0])).round().astype(int)
    angle = math.degrees(math.atan2(inward[1], inward[0]))
    cv2.ellipse(image, tip, axes, angle, 0, 360, (94, 146, 206), -1)
    # Its nail, lighter: a hand is no flat colour.
    nail = (tip + inward * axes[0] * 0.7).round().astype(int)
    cv2.ellipse(image, nail, (axes[0] // 5, axes[1] // 2), angle, 0, 360, (110, 160, 215), -1)
    return image


# A finger over a card's edge (a hand holding it up to the camera, or resting on the
# table: pclewis/set-solver's finger2 and finger3) hides a little of its paper and none of
# its symbols: the card is read. Reaching its symbols, it is not: what shows may be
# another card. Before, two of the three held were not read surely.
@pytest.mark.parametrize("seed", [3, 8, 21])
def test_a_card_a_finger_holds_by_its_edge_is_read_until_the_finger_reaches_its_symbols(seed):
    table = _table(seed, 9, top="cloth", light="day")
    i = 4
    held = read_frame(_fingertip(table, i, 0.07))
    reached = read_frame(_fingertip(table, i, 0.45))
    for layout, sure in ((held, True), (reached, False)):
        card = next(
            (
                c
                for c, u in zip(layout.cards, _under(table, layout), strict=True)
                if u is table.cards[i]
            ),
            None,
        )
        if sure:
            assert card is not None and card.sure and card.face == table.cards[i].face
        else:
            assert card is None or not card.sure
