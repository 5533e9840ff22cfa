"""The layout's promises (referee/outputs/layout.py): the boxes tile their box, and a band
given a least height gets it whenever the bands' leasts fit."""

from hypothesis import given
from hypothesis import strategies as st
from pygame import Rect

from referee.outputs.layout import columns, fits_rows, rows

weights = st.lists(st.floats(0.01, 1.0), min_size=1, max_size=8)


def tiles(box: Rect, parts: list[Rect], gap: int, along: str) -> None:
    start, length = ("y", "height") if along == "rows" else ("x", "width")
    at = getattr(box, start)
    for part in parts:
        assert getattr(part, start) == at, "a part starts where the last one ended, gap after"
        assert getattr(part, length) >= 0
        at += getattr(part, length) + gap
    assert at - gap == getattr(box, start) + getattr(box, length), "no pixel lost at the end"


@given(weights, st.integers(0, 2000), st.integers(0, 20), st.data())
def test_rows_tile_the_box_and_each_gets_its_least_where_they_fit(shares, height, gap, data):
    least = data.draw(st.lists(st.integers(0, 200), min_size=len(shares), max_size=len(shares)))
    box = Rect(3, 7, 100, height)
    fits = fits_rows(box, least, gap)
    parts = rows(box, shares, gap, least)
    if gap * (len(shares) - 1) <= height:
        tiles(box, parts, gap, "rows")
    if fits:
        for part, need in zip(parts, least, strict=True):
            assert part.height >= need


def test_a_band_needing_48_px_of_a_shared_screen_gets_48():
    # The solitaire screen at 660x673: the key bar's share was 48.0 px, its edges rounded
    # to the nearest gave it 47, and its two lines were cut.
    parts = rows(Rect(11, 11, 638, 651), [0.08, 0.77, 0.08, 0.15], 11, [24, 0, 48, 59])
    assert parts[2].height >= 48


@given(weights, st.integers(0, 2000), st.integers(0, 20))
def test_columns_tile_the_box(shares, width, gap):
    if gap * (len(shares) - 1) <= width:
        tiles(Rect(5, 0, width, 50), columns(Rect(5, 0, width, 50), shares, gap), gap, "columns")
