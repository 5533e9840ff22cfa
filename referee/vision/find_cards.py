"""Where the cards lie in a frame: white quadrilaterals of a card's shape, each warped flat.

The frame is looked at shrunk to WORK_PX on its long side. The cards are the bright
regions the frame's edges close off: a brightness threshold (Otsu's, on the blurred grey
image, and one a little lower for a white-ish table) keeps what is lighter than the table,
and the edges (Canny, thickened) are cut out of it, which separates cards that touch and a
card from a table as light as it; and, looked at last, the seams a little darker than
the paper either side (cards laid edge to edge, too faint for the edges) are cut out
too, and where a block of cards stays joined, the seams' straight lines drawn on across
it. A shadow's sharp edge is an edge too, and cuts a card in pieces: the bright regions
are looked at once more with only the seams cut out, and a card's shape found there is
tried where a piece, or nothing, was. Each region's outline must be a convex
quadrilateral (four corners once its rounded corners are smoothed), filled by the
region, its sides in a card's proportion (89 x 57 mm, 1.56; seen at an angle, up to
3.2, or down to a square and past it when its long side points away, and then its
symbols tell which way it lies), its size like the other cards'. A region that is card-sized but cut
by the frame's edge, or not a whole quadrilateral (a hand over it), is kept as a card
*partly seen* only when it holds a symbol's ink and is not a hand's (`_a_hand`), and is
never read surely; but a card's shape at the frame's edge whose symbols lie in the middle
of what shows, as a card's lie in the middle of the card, has lost a sliver of paper only,
and is whole; and so is a card a hand dents (`_dented`) or lies over by its edge
(`_over_edge`) where what hides its paper stops short of its symbols. A hand as light as
the paper is cut out of the bright regions by its colour (`_skin`).

A card whose border no region gives (on a laptop's lid as light as its paper, under a
glare, a shade along its side) is found by its symbols instead, where two cards or more
were found as above: ink of a symbol's size and shape outside them, in ones, twos and
threes side by side; the nearest card found, moved onto them, says where its sides should
lie, and each side is taken at the paper's faint edge near there (`_by_symbols`). So is
a card found whole whose symbols lie off its middle: the outline taken was not the card's
(a shadow's sharp edge for one of its sides), and the card found so replaces it; it is
looked for where its flat card shows its symbols too, when a shade's tint joined them to
the shade.

What is found is checked again flat (`card_symbols`): a paper margin all round, and
ink inside, in one to three blobs side by side. The paper is judged against its own
light: a plane across the card, or, where a shadow's edge crosses it, the paper's level
in the shade (`lit_evenly`), judged over a third of the card, or over a ninth where a
lamp's arm or fingers cast bands of shade narrower than that. A sheet of paper, a
phone, a box or a hand fails one of these.
"""

from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np

WORK_PX = 960
# The flat card: landscape, its symbols side by side, width x height.
CARD_W, CARD_H = 132, 84
CARD_RATIO = 89 / 57
FLAT_CORNERS = np.array([(0, 0), (CARD_W, 0), (CARD_W, CARD_H), (0, CARD_H)], np.float32)
# Seen from a chair, not from above, a far card is foreshortened to twice its ratio; or,
# its long side receding, down to a square and past it (the ratio is long over short, 1 at
# least: past a square, its long side is the card's short one).
MIN_RATIO, MAX_RATIO = 1.0, 3.2
# Below this a card's sides do not say which way it lies: its symbols do.
SQUARISH = 1.2
# A card is at least this share of the frame's short side across its short side: 21 cards
# in a frame are some 1/6 of it each; 1/25 still leaves a symbol 3 px wide at WORK_PX.
MIN_CARD_SHARE = 1 / 25
# A whole card fills this much of its quadrilateral (its rounded corners, eroded), and of
# its convex hull: a hand over its edge leaves a dent.
RECTANGULAR = 0.8
SOLID = 0.95
# A seam between two cards touching: this much darker than the paper beside it.
SEAM = 6
EDGE_MARGIN = 4  # px at WORK_PX: a region this close to the frame's edge is cut by it
CUT = "cut by the edge of the frame"
# A card at the frame's edge is whole when the margins either side of its symbols differ
# by at most this share of the flat card (a sliver of at most some 8 % of the card hidden;
# the finder's corners leave the two within 2-4 % on cards in full view). Its symbols
# leave a fifth of the card's length and of its width at each side, so a card whose
# frame's edge reaches its ink shows a difference of 14 % or more.
CENTRED = 0.08


@dataclass
class Found:
    """A card-shaped region: its corners in the frame (x, y, clockwise, the first at the
    end of a long side so that the flat card is landscape), the flat card, and whether it
    is whole (False: cut by the frame's edge, or partly hidden)."""

    corners: np.ndarray
    flat: np.ndarray
    whole: bool
    why: str = ""


def find_cards(image: np.ndarray) -> list[Found]:
    """Every card-shaped region of `image` (BGR), flat; not yet read."""
    height, width = image.shape[:2]
    scale = min(1.0, WORK_PX / max(height, width))
    small = (
        image
        if scale == 1.0
        else cv2.resize(
            image, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA
        )
    )
    whole, partial = outlines(small)
    found: list[Found] = []
    # Found whole, but its symbols off its middle: the outline taken is not the card's (a
    # shadow's edge for one of its sides), and the card is looked for by its symbols too;
    # each with where its symbols lie in the shrunk frame, which say where the card is
    # when the ink there is not found as symbols (a shade's tint joins it).
    loose: list[tuple[Found, np.ndarray]] = []
    areas = [cv2.contourArea(ways[0].astype(np.float32)) for ways in whole]
    typical = float(np.median(areas)) if len(areas) >= 3 else None
    for alternatives in whole:
        # The first that looks like a card with the least closing: a wider one may pass a
        # piece of the card tried before the whole.
        best: tuple[Found, Symbols] | None = None
        # Its long side receding from a low camera, a card may look wider across than
        # along it, its symbols standing the other way: looked at so only where no
        # outline is a card as it lies, or a piece of one turned might pass before the
        # whole. A card seen the right way round has no symbols standing across it: they
        # lie flat and stretched (a single symbol some 14 px high of 84).
        for receding in (False, True):
            for quad in alternatives:
                card = _flat_card(image, quad, scale, typical, receding)
                if card is not None and (best is None or card[1].closing < best[1].closing):
                    best = card
                    if card[1].closing == CLOSINGS[0]:
                        break
            if best is not None:
                break
        if best is not None:
            found.append(best[0])
            if best[0].whole and not _centred(best[1], best[0].flat):
                loose.append((best[0], _symbols_middle(best[0], best[1]) * scale))
    # A region a hand dents (fingers over its edge, a thumb holding it): its hull's
    # quadrilateral is the card where what lies over the edge stays off its symbols.
    dented = [_dented(image, c, scale, typical) if why != CUT else None for c, why in partial]
    found += [d for d in dented if d is not None]
    partial = [p for p, d in zip(partial, dented, strict=True) if d is None]
    if found:
        found = _firmed(found, loose, _by_symbols(image, small, found, loose, scale, typical))
        sizes = np.array([sorted(_sides(f.corners * scale)) for f in found])
        card = np.median(sizes, axis=0)  # short side, long side
        seen = [f.corners * scale for f in found]
        # The found cards' paper, its warmth in the light there (the least of theirs: a hand
        # may have passed for one).
        paper = min(float(np.median(_warmth(paper_band(f.flat)))) for f in found)
        for contour, why in partial:
            if _inside(contour, seen):
                continue  # a piece of a card found by its symbols
            grazed = _grazed(image, contour, scale, typical) if why == CUT else None
            if grazed is not None:
                found.append(grazed)
            elif _partly_a_card(contour, card, small) and not _a_hand(contour, small, paper):
                corners = _box_of(contour) / scale
                found.append(Found(corners, warp(image, corners), False, why))
    return _no_blocks(found)


def _no_blocks(found: list[Found]) -> list[Found]:
    """The cards found, less any over the middles of two others of at most two thirds its
    size: cards touching whose seam a small frame blurs away (a webcam's 640 px) are found
    one by one, and together once more in a card's shape."""
    areas = [cv2.contourArea(f.corners.astype(np.float32)) for f in found]
    middles = [tuple(map(float, f.corners.mean(axis=0))) for f in found]
    kept = []
    for f, area in zip(found, areas, strict=True):
        quad = f.corners.astype(np.float32)
        within = sum(
            cv2.pointPolygonTest(quad, middle, False) >= 0
            for other, middle in zip(areas, middles, strict=True)
            if other <= 2 / 3 * area
        )
        if within < 2:
            kept.append(f)
    return kept


def _flat_card(
    image: np.ndarray,
    quad: np.ndarray,
    scale: float,
    typical: float | None,
    receding: bool = False,
) -> tuple[Found, "Symbols"] | None:
    """The card at `quad` (in the shrunk frame) flat, if it looks like one, and its symbols
    (`card_symbols`); `typical`: the cards' usual area there, when enough were found to
    say; `receding`: seen the other way too when its sides say which way it lies and its
    symbols do not stand so."""
    area = cv2.contourArea(quad.astype(np.float32))
    # Much larger or smaller than the others: a box, a sheet of paper, a symbol.
    if typical is not None and not _typical(area, typical):
        return None
    corners = quad / scale
    ways = [corners] if _ratio(quad) >= SQUARISH else [corners, np.roll(corners, 1, axis=0)]
    flats = [(c, flat, card_symbols(flat)) for c in ways for flat in [warp(image, c)]]
    if receding and len(ways) == 1 and flats[0][2] is None:
        rolled = np.roll(corners, 1, axis=0)
        flat = warp(image, rolled)
        flats.append((rolled, flat, card_symbols(flat)))
    # The way its symbols stand with the least closing: a wider one joins a pale outline's
    # pieces, and may join a card's ink seen the wrong way round into symbols as well.
    least = min((s.closing for _, _, s in flats if s is not None), default=None)
    if least is None:
        return None
    standing = [(c, flat, s) for c, flat, s in flats if s is not None and s.closing == least]
    corners, flat, symbols = standing[0]
    if len(standing) == 1:
        return Found(corners, flat, True), symbols
    # Square in the frame and its symbols stand either way: not read surely.
    return Found(corners, flat, False, "seen too slanted"), symbols


def _grazed(
    image: np.ndarray, contour: np.ndarray, scale: float, typical: float | None
) -> Found | None:
    """The card whose shape shows at the frame's edge (`contour`, in the shrunk frame),
    whole, if the frame hides a sliver of its paper only: its symbols lie in the middle of
    what shows, as they lie in the middle of a card."""
    quad = _card_shaped(contour)
    if quad is None:
        return None
    card = _flat_card(image, quad, scale, typical)
    if card is None or not card[0].whole or not _centred(card[1], card[0].flat):
        return None
    return card[0]


def _dented(
    image: np.ndarray, contour: np.ndarray, scale: float, typical: float | None
) -> Found | None:
    """The card whose region a hand dents (`contour`, in the shrunk frame), whole, if its
    hull fills a card's quadrilateral and, flat, what lies over its edge stays off its
    symbols (`card_symbols`), which lie in its middle."""
    quad = _quadrilateral(contour)
    if quad is None or not MIN_RATIO <= _ratio(quad) <= MAX_RATIO:
        return None
    hull = cv2.contourArea(cv2.convexHull(contour))
    area = cv2.contourArea(quad.astype(np.float32))
    if hull < RECTANGULAR * area:
        return None
    # As large as the cards found whole, where they say: a hand dents a card, it does not
    # grow or shrink it (and a flat card's look is a frame's time).
    if typical is not None and not 0.7 <= area / typical <= 1.4:
        return None
    card = _flat_card(image, quad, scale, typical)
    if card is None or not card[0].whole or not _centred(card[1], card[0].flat):
        return None
    # The dent, flat as the card, stops short of its symbols: else it may hide one (a
    # hand over a card's end, its edge taken for the card's side).
    x, y, w, h = cv2.boundingRect(quad.astype(np.float32))
    dent: np.ndarray = np.zeros((h + 2, w + 2), np.uint8)
    cv2.fillConvexPoly(dent, (quad - (x - 1, y - 1)).astype(np.int32), 255)
    cv2.drawContours(dent, [contour - (x - 1, y - 1)], -1, 0, -1)
    # Less the band the region's erosion leaves inside every side.
    dent = cv2.morphologyEx(dent, cv2.MORPH_OPEN, _closing(5))
    corners = card[0].corners * scale - (x - 1, y - 1)
    to_flat = cv2.getPerspectiveTransform(corners.astype(np.float32), FLAT_CORNERS)
    flat_dent = cv2.warpPerspective(dent, to_flat, (CARD_W, CARD_H), flags=cv2.INTER_NEAREST)
    if _reaches(flat_dent, card[1].box):
        return None
    return card[0]


def _reaches(mask: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether what `mask` holds (a flat card's) reaches into the symbols' `box` further
    than REACH: a fingertip by a symbol's tip, a pixel over its box, hides none of it."""
    x0, y0, x1, y1 = box
    return bool(mask[y0 + REACH : y1 - REACH, x0 + REACH : x1 - REACH].any())


# Pixels of a flat card (84 high) that a finger may lie within the symbols' box: its box
# is their ink's own, so a finger beside a symbol's tip touches it (noise moves it a pixel).
REACH = 2


def _centred(symbols: "Symbols", flat: np.ndarray) -> bool:
    """Whether a flat card's symbols lie in its middle, as a whole card's do: the margins
    either side of them within CENTRED of the card."""
    x0, y0, x1, y1 = symbols.box
    height, width = flat.shape[:2]
    return bool(
        abs(x0 - (width - x1)) <= CENTRED * width and abs(y0 - (height - y1)) <= CENTRED * height
    )


def _symbols_middle(found: Found, symbols: "Symbols") -> np.ndarray:
    """The middle of a flat card's symbols, in the frame (x, y)."""
    x0, y0, x1, y1 = symbols.box
    to_frame = cv2.getPerspectiveTransform(FLAT_CORNERS, found.corners.astype(np.float32))
    point = np.array([[[(x0 + x1) / 2, (y0 + y1) / 2]]], np.float32)
    middle: np.ndarray = cv2.perspectiveTransform(point, to_frame).reshape(2).astype(np.float64)
    return middle


def _firmed(
    found: list[Found], loose: list[tuple[Found, np.ndarray]], by_symbols: list[Found]
) -> list[Found]:
    """The cards found, each of the `loose` ones replaced by the card found by its symbols
    where it lies, if one was; and the other cards found by their symbols added."""
    out = []
    for f in found:
        if any(f is g for g, _ in loose):
            # The same card: either's middle within the other (the loose outline may lie
            # well off the card).
            same = next(
                (
                    g
                    for g in by_symbols
                    if _inside(g.corners, [f.corners]) or _inside(f.corners, [g.corners])
                ),
                None,
            )
            if same is not None:
                by_symbols = [g for g in by_symbols if g is not same]
                # Found again where it lay, its outline was the card's: its symbols are off
                # its middle for another reason (a blot over one), and it stays as it was.
                if not _alike(f.corners, same.corners):
                    f = same
        out.append(f)
    return out + by_symbols


def _alike(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two quadrilaterals (the same card's) have their corners within ALIKE of the
    card's short side of each other."""
    apart = np.linalg.norm(_clockwise(a) - _clockwise(b), axis=1).max()
    return bool(apart <= ALIKE * min(_sides(a)))


# Corners this close (of a card's short side) are the same outline: the finder's corners
# lie within some 3 % of the card's edge in full view; a shadow's edge taken for a side
# lies a tenth to a third of the card off it.
ALIKE = 0.1


def _by_symbols(
    image: np.ndarray,
    small: np.ndarray,
    found: list[Found],
    loose: list[tuple[Found, np.ndarray]],
    scale: float,
    typical: float | None,
) -> list[Found]:
    """The cards whose outline no region gave (a light table, a glare or a shade over the
    border), or gave wrong (`loose`), found from their symbols instead: ink blobs of a
    symbol's size and shape (`_ink_symbols`), outside the other cards found, side by side
    in ones, twos and threes (`_side_by_side`). The nearest card found, moved onto them and
    turned as they stand, says where the card's sides should be; each side is taken where
    the paper's edge is (`_snapped`), and the card is then checked flat as any other. Only
    where two cards or more were found firmly: their size says a symbol's."""
    quads = [f.corners * scale for f in found if not any(f is g for g, _ in loose)]
    if len(quads) < 2:
        return []
    short = float(np.median([min(_sides(q)) for q in quads]))
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    new: list[Found] = []
    now: list[np.ndarray] = []  # the new cards' quadrilaterals, in the shrunk frame
    groups = _side_by_side(_ink_symbols(small, grey, short, quads), short)
    # A loose card's symbols, as its flat card showed them, where the ink pass found none
    # there: it lies as the nearest card found does, moved onto them.
    places: list[tuple[np.ndarray, float | None, list[_Symbol]]] = [
        (np.mean([s.centre for s in g], axis=0), _standing(g) if len(g) > 1 else None, g)
        for g in groups
    ]
    for f, spot in loose:
        if not any(_inside(s.contour, [f.corners * scale]) for g in groups for s in g):
            places.append((spot, None, []))
    for middle, standing, group in places:
        if any(_inside(s.contour, now) for s in group) or _inside(middle.reshape(1, 2), now):
            continue  # a piece of a card found just now
        near = min(quads, key=lambda q: float(np.hypot(*(q.mean(axis=0) - middle))))
        # Its short side (corners 1 to 2) turned along the symbols' long axis.
        across = near[2] - near[1]
        if standing is None:
            standing = group[0].axis if group else float(np.arctan2(across[1], across[0]))
        turn = (standing - np.arctan2(across[1], across[0]) + np.pi / 2) % np.pi - np.pi / 2
        if len(group) <= 1 and abs(turn) < LONE_TURN:
            turn = 0.0  # a lone symbol's axis is the least sure: it lies as its neighbour
        c, s = np.cos(turn), np.sin(turn)
        guess = (near - near.mean(axis=0)) @ np.array([[c, s], [-s, c]]) + middle
        quad = _snapped(grey, guess)
        if quad is None or _inside(quad, quads + now):
            continue  # none there, or a card found already
        # As large as the card it was guessed from: not a piece that a hand's or the
        # frame's edge closes off.
        area = cv2.contourArea(quad.astype(np.float32))
        if not 0.7 <= area / cv2.contourArea(guess.astype(np.float32)) <= 1.4:
            continue
        card = _flat_card(image, _clockwise(quad), scale, typical)
        # Its symbols in its middle, as a whole card's are: where a hand or the frame's
        # edge hides a symbol and its side was taken there, they are not.
        if card is None or not card[0].whole or not _centred(card[1], card[0].flat):
            continue
        new.append(card[0])
        now.append(card[0].corners * scale)
    return new


def _standing(group: list["_Symbol"]) -> float:
    """Which way a card's symbols stand (their long axis, radians): across the line
    through their middles where there are two or three; a lone one's by its moments."""
    if len(group) == 1:
        return group[0].axis
    ends = [s.centre for s in group]
    apart = max((b - a for a in ends for b in ends), key=lambda v: float(np.hypot(*v)))
    return float(np.arctan2(apart[1], apart[0])) + np.pi / 2


# A lone symbol's axis by its moments leans some 20 degrees on a squiggle: a card of one
# symbol is taken to lie as the card beside it unless its symbol stands further off.
LONE_TURN = np.radians(35)


@dataclass(frozen=True)
class _Symbol:
    contour: np.ndarray
    centre: np.ndarray
    axis: float  # its long axis's direction, radians
    length: float


def _ink_symbols(
    small: np.ndarray, grey: np.ndarray, short: float, quads: list[np.ndarray]
) -> list[_Symbol]:
    """The blobs of ink in the shrunk frame, outside the cards found (`quads`), that may be
    a card's symbol: a strong colour, or a dark stroke on something lighter, closed into
    blobs; as long as a symbol is (about 0.6 of a card's `short` side), about half as wide."""
    high, low = _high_low(small)
    dark = cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, _closing(9)) > SYMBOL_DARK
    ink = (((high - low) > SYMBOL_CHROMA) | dark).astype(np.uint8) * 255
    # The found cards' own symbols left out at once: a layout of 21 has some 40. One at a
    # time: drawn together, where two overlap (a block of two cards found as one, and
    # each of them) would be left in.
    for q in quads:
        cv2.fillConvexPoly(ink, q.astype(np.int32), 0)
    ink = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, _closing(5))
    contours, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    symbols = []
    for contour in contours:
        m = cv2.moments(contour)
        if m["m00"] < 0.02 * short * short:
            continue
        centre = np.array([m["m10"], m["m01"]]) / m["m00"]
        # Its long axis by its moments: a diamond's least box lies along its sides.
        axis = 0.5 * float(np.arctan2(2 * m["mu11"], m["mu20"] - m["mu02"]))
        points = contour.reshape(-1, 2) - centre
        along = np.ptp(points @ (np.cos(axis), np.sin(axis)))
        wide = np.ptp(points @ (-np.sin(axis), np.cos(axis)))
        if (
            0.4 * short <= along <= 0.85 * short
            and 0.12 * short <= wide <= 0.5 * short
            and 1.4 <= along / max(wide, 1.0) <= 4.0
        ):
            symbols.append(_Symbol(contour, centre, axis, float(along)))
    return symbols


# Ink in the shrunk frame: a colour this strong (the highest channel over the lowest), or
# a stroke this much darker than what lies around it.
SYMBOL_CHROMA, SYMBOL_DARK = 45, 35


def _side_by_side(symbols: list[_Symbol], short: float) -> list[list[_Symbol]]:
    """The symbols in groups of one to three that stand as one card's do: alike in length,
    parallel, beside one another across their long axes (a squiggle's axis by its moments
    leans some 20 degrees: its neighbour lies up to 0.3 of its length along it), their
    middles closer than half a card's short side (a card's stand some 0.37 of it apart)."""
    group = list(range(len(symbols)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, a in enumerate(symbols):
        for j in range(i + 1, len(symbols)):
            b = symbols[j]
            apart = b.centre - a.centre
            distance = float(np.hypot(*apart))
            turned = abs((a.axis - b.axis + np.pi / 2) % np.pi - np.pi / 2)
            if (
                distance <= 0.55 * short
                and turned <= np.radians(20)
                and abs(a.length - b.length) <= 0.25 * max(a.length, b.length)
                and abs(apart @ (np.cos(a.axis), np.sin(a.axis))) <= 0.3 * a.length
            ):
                group[root(i)] = root(j)
    groups: dict[int, list[_Symbol]] = {}
    for i, symbol in enumerate(symbols):
        groups.setdefault(root(i), []).append(symbol)
    return [g for g in groups.values() if len(g) <= 3]


def _snapped(grey: np.ndarray, guess: np.ndarray) -> np.ndarray | None:
    """The card near `guess` (its corners in the shrunk frame, the first at a long side's
    start), its sides moved onto the paper's edges: the guess is warped flat with a margin
    around it, and each side found as a line through two points, one in each half of it
    (the guess may lie turned or skewed a little from the card), each at the first step
    from light paper to something darker met going out from the card (`_step`); None where
    a side has no such step."""
    w, h, m = CARD_W, CARD_H, SNAP_BAND
    target = np.array([(m, m), (m + w, m), (m + w, m + h), (m, m + h)], np.float32)
    to_flat = cv2.getPerspectiveTransform(guess.astype(np.float32), target)
    flat = cv2.GaussianBlur(
        cv2.warpPerspective(
            grey, to_flat, (w + 2 * m, h + 2 * m), borderMode=cv2.BORDER_REPLICATE
        ).astype(np.float32),
        (3, 3),
        0,
    )
    down, right = cv2.Sobel(flat, cv2.CV_32F, 0, 1), cv2.Sobel(flat, cv2.CV_32F, 1, 0)
    # Each side's halves within the card's middle three fifths (its rounded corners lie
    # outside them); looked for from the guess out to the margin, and in short of the
    # symbols, a fifth of the card in from its sides.
    across = (m + w // 5, m + w // 2, m + 4 * w // 5)
    along = (m + h // 5, m + h // 2, m + 4 * h // 5)
    lines = []
    for guessed, out, inward, horizontal in (
        (m, -1, h // 7, True),
        (m + h, 1, h // 7, True),
        (m, -1, w // 8, False),
        (m + w, 1, w // 8, False),
    ):
        a, half, b = across if horizontal else along
        steps = [
            _step(
                down[:, start:end].mean(axis=1) if horizontal else right[start:end].mean(axis=0),
                guessed,
                out,
                inward,
            )
            for start, end in ((a, b), (a, half), (half, b))
        ]
        whole, first, second = steps
        ends: tuple[tuple[float, float], tuple[float, float]]  # along the side, across it
        if (
            first is not None
            and second is not None
            and abs(second - first) <= SNAP_LEAN * (b - a) / 2
        ):
            ends = ((a + half - 1) / 2, first), ((half + b - 1) / 2, second)
        elif whole is not None:
            # The halves disagree (one met a symbol's or the table's edge): the side is
            # taken as the guess lies, where the step across its whole length is.
            ends = (a, whole), (b, whole)
        else:
            return None
        p, q = ((u, v, 1.0) if horizontal else (v, u, 1.0) for u, v in ends)
        lines.append(np.cross(p, q))
    top, bottom, left, right_ = lines
    corners = [
        np.cross(*pair) for pair in ((top, left), (top, right_), (bottom, right_), (bottom, left))
    ]
    flat_corners = np.array([c[:2] / c[2] for c in corners], np.float32).reshape(-1, 1, 2)
    back: np.ndarray = cv2.perspectiveTransform(flat_corners, np.linalg.inv(to_flat)).reshape(4, 2)
    return back.astype(np.float64)


def _step(profile: np.ndarray, guessed: int, out: int, inward: int) -> float | None:
    """Where along `profile` (a flat card's change of brightness across its side, the side
    guessed at `guessed`, `out` the way out of the card: -1 or 1) the paper's edge is: the
    first step down to something darker met going out from the card, in a band from
    `inward` inside the guess to SNAP_BAND outside it, where the step stands clear of what
    lies about it (SNAP_CLEAR times the band's usual change, and at least SNAP_LEAST grey
    levels a pixel); None where there is no such step."""
    lo, hi = (
        (guessed - SNAP_BAND, guessed + inward)
        if out < 0
        else (guessed - inward, guessed + SNAP_BAND)
    )
    lo, hi = max(lo, 1), min(hi, len(profile) - 1)
    step = -out * profile[lo:hi]
    top = float(step.max())
    if top < 4 * SNAP_LEAST:
        return None
    # A step the other way (a symbol's edge, the card's own shade) is no texture.
    if top < SNAP_CLEAR * float(np.median(np.abs(step[step > -top]))):
        return None
    # From the card outwards: its own edge, not a larger light thing's beyond it.
    order = range(len(step) - 1, -1, -1) if out < 0 else range(len(step))
    k = next(
        i
        for i in order
        if step[i] >= 0.5 * top
        and (i == 0 or step[i] >= step[i - 1])
        and (i == len(step) - 1 or step[i] >= step[i + 1])
    )
    return float(lo + k)


# How far around its guess a card's side is looked for (px of the flat card, 84 high), and
# how clear its step must stand: SNAP_CLEAR times the usual change in that band, and at
# least SNAP_LEAST grey levels a pixel (Sobel's 3 x 3 gives 4 times that).
SNAP_BAND = 16
# A side's two halves agree when they lean at most this much (across over along: some 11
# degrees) from the guess.
SNAP_LEAN = 0.2
SNAP_CLEAR = 3
SNAP_LEAST = 1


def _typical(area: float, typical: float) -> bool:
    """An area like the cards' `typical` one: not a box, a sheet of paper, a symbol."""
    return 0.4 * typical <= area <= 2.5 * typical


def _sides(quad: np.ndarray) -> tuple[float, float]:
    sides = _side_lengths(quad)
    return float((sides[1] + sides[3]) / 2), float((sides[0] + sides[2]) / 2)


def _a_hand(contour: np.ndarray, small: np.ndarray, paper: float) -> bool:
    """Whether a region (in the shrunk frame) is a hand's: warmer (`_warmth`, at its
    median) than the cards' `paper` by over HAND_WARMER. A hand at the frame's edge passes
    for a card cut by it otherwise, its knuckles' shade a symbol's size."""
    (x, y), filled = _filled(contour)
    h, w = filled.shape
    return bool(np.median(_warmth(small[y : y + h, x : x + w][filled > 0])) > paper + HAND_WARMER)


def _filled(contour: np.ndarray) -> tuple[tuple[int, int], np.ndarray]:
    """A region's box's corner (x, y) and its mask over that box (255 inside)."""
    x, y, w, h = cv2.boundingRect(contour)
    filled = np.zeros((h, w), np.uint8)
    cv2.drawContours(filled, [contour - (x, y)], -1, 255, -1)
    return (x, y), filled


def _warmth(pixels: np.ndarray) -> np.ndarray:
    """Each pixel's (N x 3, BGR) red over its blue, as a share of its red."""
    p = pixels.astype(np.float32)
    warmth: np.ndarray = (p[:, 2] - p[:, 0]) / np.maximum(p[:, 2], 1.0)
    return warmth


# A hand's warmth is 0.52 to 0.66 on pclewis/set-solver's finger boards, their cards' paper
# 0.17 to 0.21; a warm lamp warms both.
HAND_WARMER = 0.25


def _partly_a_card(contour: np.ndarray, card: np.ndarray, small: np.ndarray) -> bool:
    """A region that is what shows of a card: within a card's size (the cards' median,
    `card`: short and long side), a good part of one, mostly paper, and with a symbol's
    ink inside (a hole in the bright region, as tall as a symbol)."""
    (_, _), (w, h), _ = cv2.minAreaRect(contour)
    short, long_ = sorted((w, h))
    if short > 1.2 * card[0] or long_ > 1.2 * card[1]:
        return False  # larger than a card: a box, a sheet of paper
    area = cv2.contourArea(contour)
    if area < 0.3 * card[0] * card[1]:
        return False
    (x, y), filled = _filled(contour)
    bh, bw = filled.shape
    grey = cv2.cvtColor(small[y : y + bh, x : x + bw], cv2.COLOR_BGR2GRAY)
    inside = grey[filled > 0]
    paper = np.percentile(inside, 90)
    holes = ((filled > 0) & (grey < paper - 40)).astype(np.uint8)
    if holes.mean() > 0.35 * (filled > 0).mean():
        return False  # more ink than paper: a printed box, a screen
    _, _, stats, _ = cv2.connectedComponentsWithStats(holes)
    return any(
        max(s[cv2.CC_STAT_WIDTH], s[cv2.CC_STAT_HEIGHT]) > 0.4 * card[0]
        and s[cv2.CC_STAT_AREA] > 0.01 * card[0] * card[1]
        for s in stats[1:]
    )


def outlines(
    small: np.ndarray,
) -> tuple[list[list[np.ndarray]], list[tuple[np.ndarray, str]]]:
    """The whole cards' quadrilaterals in the shrunk frame, each place's in the order to
    try them, and the regions that may be cards partly seen (`_shapes`). Cards laid edge to
    edge whose seams the first cut left joined somewhere (a seam fades where the rounded
    corners meet) are looked at once more, their seams' straight lines drawn on to their
    ends (`_seam_lines`). A shadow's sharp edge across a card is an edge too, and cuts
    the card in pieces: the bright regions are looked at once more with only the seams cut
    out, and a card's shape found there is tried where a piece, or nothing, was found."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    blurred = cv2.GaussianBlur(grey, (5, 5), 0)
    otsu, _ = cv2.threshold(blurred, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    edges = cv2.Canny(blurred, 30, 90)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    levels = [otsu, otsu * 0.8]
    upper = blurred[blurred > otsu]
    if upper.size > 0.4 * blurred.size:
        # A light table: the cards are the lighter part of what is light, Otsu's again.
        levels.append(cv2.threshold(upper, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0])
    # Cards laid edge to edge are one bright region: the seam between them is a line a
    # little darker than the paper either side (the cards' edges, the gap's shade), too
    # faint for the edges. What is darker than its neighbourhood closed over is cut out
    # too, once, at the first level, last: a card found whole without it is kept as found.
    thin = cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, np.ones((5, 5), np.uint8)) > SEAM
    seams = cv2.dilate(thin.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    regions: list[tuple[np.ndarray, float]] = []
    for level in levels:
        regions += _pieces(blurred, level, edges, None)
    regions += _pieces(blurred, levels[0], edges, seams)
    whole, partial = _shapes(regions, small.shape[:2])
    blocks = _blocks(whole, regions, small.shape[:2])
    lines = (
        None
        if blocks is None
        else _seam_lines(
            thin & (blurred > levels[0]) & blocks,
            _regions_mask(blurred, levels[0], edges, seams),
            whole,
        )
    )
    if lines is not None:
        regions += _pieces(blurred, levels[0], edges, seams | lines)
        whole, partial = _shapes(regions, small.shape[:2])
    if any(why != CUT for _, why in partial):
        # A hand holding a card, or over it, as light as its paper, joins it in one
        # region: cut out where its colour is far from any paper's. Only where a region
        # may be a card partly hidden, and only the new regions' shapes: a frame's time.
        skin = _skin(small) > 0
        if np.count_nonzero(skin & (blurred > levels[0])) > SKIN_LEAST * skin.size:
            more_whole, more_partial = _shapes(
                _pieces(blurred, levels[0], edges, seams | skin), small.shape[:2]
            )
            seen = [_middle(q) for q in whole]
            whole += [
                q for q in more_whole if not any(_near(q.mean(axis=0), c, r) for c, r in seen)
            ]
            partial = _distinct([p for p in partial + more_partial if not _inside(p[0], whole)])
    # Its partly seen regions are not kept: a region of the table joined to something
    # bright without the edges between them is no card's part.
    shaded = _shaded(blurred, levels[0], thin, small.shape[:2]) + _faint(
        blurred, levels[0], small.shape[:2], whole
    )
    places = [[q] for q in whole]
    middles = [_middle(q) for q in whole]
    for quad in shaded:
        centre = quad.mean(axis=0)
        near = next((i for i, m in enumerate(middles) if _near(centre, *m)), None)
        if near is None:
            places.append([quad])
            middles.append(_middle(quad))
        elif not any(np.abs(quad - q).max() < SAME_PX for q in places[near]):
            places[near].append(quad)
    partial = [(c, why) for c, why in partial if not _inside(c, shaded)]
    return places, partial


def _skin(image: np.ndarray, paper: float = 0.0) -> np.ndarray:
    """Where `image` (BGR) is as warm as a hand: its red over its blue more than SKIN,
    and more than SKIN_OVER_PAPER over `paper`'s (the paper's own, where it is known; a
    mask, 255)."""
    b, _, r = cv2.split(image)
    warm = r.astype(np.int16) - b
    mask: np.ndarray = np.where(warm > max(SKIN, paper + SKIN_OVER_PAPER), 255, 0)
    return mask.astype(np.uint8)


# A hand's red over its blue: paper's 40 under pclewis/set-solver's warm lamp (and below 0
# under a cool light: a colour far from paper by its highest channel over its lowest would
# take that paper too), a hand's 90 to 110. A lamp warmer still takes the paper past it (a
# rendered one, 80 to 100): on a card, a hand is as far again over its own paper. A red
# symbol is as warm: it never reaches a card's border.
SKIN, SKIN_OVER_PAPER = 80, 45
# A hand as light as paper shows over at least this share of the frame: a fingertip.
SKIN_LEAST = 0.001


def _shaded(
    blurred: np.ndarray, level: float, thin: np.ndarray, shape: tuple[int, int]
) -> list[np.ndarray]:
    """The cards' quadrilaterals among the regions lighter than `level` with no edge cut
    out, only the seams: all of them, then the long ones only, SEAM_LONG pixels or more,
    not the specks that noise and a card's own rim leave along its side (they notch its
    outline, and a noisy card's is no card's shape), then none: the dark fringe that a
    JPEG's ringing or a camera's sharpening leaves along a shadow's edge is a seam too,
    and notches the card it crosses. Cards edge to edge, joined so, make a card's shape
    only two at a time (a seam across its middle): none passed for a card among 381
    rendered cards edge to edge, where the seams are cut first."""
    # Counted by pixels, over the seams' pixels only: OpenCV's components with their boxes,
    # or a look-up over the whole frame, take some times as long.
    _, labels = cv2.connectedComponents(thin.astype(np.uint8))
    where = np.flatnonzero(thin)
    label = labels.ravel()[where]
    long_ = np.zeros(thin.shape, bool)
    long_.ravel()[where[np.bincount(label)[label] >= SEAM_LONG]] = True
    quads: list[np.ndarray] = []
    for seams in (thin, long_, np.zeros_like(thin)):
        cut = cv2.dilate(seams.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        # Eroded once: twice found no more, on the tuning boards or rendered tables.
        quads += _shapes(_pieces(blurred, level, None, cut, erosions=(1,)), shape)[0]
    return quads


def _faint(
    blurred: np.ndarray, level: float, shape: tuple[int, int], whole: list[np.ndarray]
) -> list[np.ndarray]:
    """The cards' quadrilaterals on a light table (a white cloth, a pale wood, a laptop's
    lid): the paper hardly lighter than the top, or not at all, and the border between
    them, the paper's rim and the thin shadow under it, too faint for the edges above
    (Canny's 30 and 90): cut out at a third of those instead. The top is then one bright
    region around the cards, each card a region in a hole of it, and taken there too.
    Eroded twice, 2 px and then 4 (a 5 and a 9 px square): a faint border has gaps
    that a card's region leaks through to the table's, and 1 px, as the other passes
    begin, found no more. Where three cards or more were found whole (`whole`), only
    a quadrilateral of their size is kept: a symbol's outline, or the grain's, would
    otherwise move the cards' typical size that `find_cards` judges each by."""
    faint = cv2.dilate(cv2.Canny(blurred, *FAINT), np.ones((3, 3), np.uint8))
    quads = _shapes(_pieces(blurred, level, faint, None, (2, 4), nested=True), shape)[0]
    if len(whole) < 3:
        return quads
    typical = float(np.median([cv2.contourArea(q.astype(np.float32)) for q in whole]))
    return [q for q in quads if _typical(cv2.contourArea(q.astype(np.float32)), typical)]


# A light table's edges: Canny's thresholds (on the blurred grey frame, 0-255). On 20
# rendered white tables of 12 cards with things beside them (eroded 1 and 2 px), 15 and
# 45 found 183 cards, these 195, 8 and 24 196: lower, the top's own grain and a JPEG's
# blocks break it up as much as the cards' borders close. Eroded 2 and 4, these find 198;
# 4 alone 197.
FAINT = (10, 30)


# A seam is at least this many pixels (at WORK_PX): a card's side is 30 px and more.
SEAM_LONG = 20


# Two quadrilaterals whose corners are all within this (px at WORK_PX) are one outline.
SAME_PX = 4


def _pieces(
    blurred: np.ndarray,
    level: float,
    edges: np.ndarray | None,
    cut: np.ndarray | None,
    erosions: tuple[int, ...] = (1, 2),
    nested: bool = False,
) -> list[tuple[np.ndarray, float]]:
    """The regions lighter than `level`, the edges (and `cut`) cut out of them, each with
    how far its outline lies inside the region's own (px); `nested`: the regions lying in
    another's hole as well (the cards on a light table, in the table's)."""
    bright = _regions_mask(blurred, level, edges, cut)
    # Eroded once a little, once more: a card joined to a glare on the table by a
    # thread comes apart in the second, a small card's paper around a big symbol
    # holds in the first. The edges cut out took 1.5 px off every side too (and with
    # none cut out, the level's boundary lies as far inside a card's rim).
    regions: list[tuple[np.ndarray, float]] = []
    for erosion in erosions:
        size = 2 * erosion + 1
        eroded = cv2.erode(bright, np.ones((size, size), np.uint8))
        if nested:
            # Two levels: each region's outline (no parent), and its holes' (left out).
            found, tree = cv2.findContours(eroded, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
            outer = [] if tree is None else tree[0]
            found = tuple(c for c, t in zip(found, outer, strict=True) if t[3] < 0)
        else:
            found, _ = cv2.findContours(eroded, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        regions.extend((c, erosion + 1.5) for c in found)
    return regions


def _blocks(
    whole: list[np.ndarray], regions: list[tuple[np.ndarray, float]], shape: tuple[int, int]
) -> np.ndarray | None:
    """Where cards edge to edge may have stayed joined: the regions, card-shaped or not, of
    BLOCK times a card's size or more (the median of those found whole); or None."""
    if not whole:
        return None
    areas = [cv2.contourArea(q.astype(np.float32)) for q in whole]
    typical = float(np.median(areas))
    least, most = BLOCK * typical, BLOCK_MOST * typical
    big = [q.astype(np.int32) for q, area in zip(whole, areas, strict=True) if area >= least]
    big += [c for c, _ in regions if least <= cv2.contourArea(c) <= most]
    if not big:
        return None
    # Their hulls: the seams left joined at one end are notches in a region's outline.
    # One at a time: drawn together, where two overlap would be left out.
    mask = np.zeros(shape, np.uint8)
    for c in big:
        cv2.fillConvexPoly(mask, cv2.convexHull(c), 255)
    return mask > 0


# Cards edge to edge that stayed one region are at least this many cards' size, and at
# most this many (a row of nine, a grid of twelve): a region larger is a light table.
BLOCK, BLOCK_MOST = 1.6, 14


def _regions_mask(
    blurred: np.ndarray, level: float, edges: np.ndarray | None, cut: np.ndarray | None
) -> np.ndarray:
    """What is lighter than `level`, the edges (if any) and `cut` cut out (0 or 255)."""
    bright = (blurred > level).astype(np.uint8) * 255
    if edges is not None:
        bright[edges > 0] = 0
    if cut is not None:
        bright[cut] = 0
    return bright


def _seam_lines(thin: np.ndarray, cut: np.ndarray, whole: list[np.ndarray]) -> np.ndarray | None:
    """The straight seams between cards touching that the cut (`cut`, the regions with the
    seams cut out) left joined, each drawn on across the region it lies in; or None.

    A seam runs along a whole side of a card: only a straight dark line at least
    SEAM_LINE of the cards' short side long (the cards found whole elsewhere in the frame)
    is one; a symbol's straight stroke (a diamond's side) is shorter, and a line whose
    middle is inside a card already found is that card's own. Drawn on only within the
    one region that holds it on both sides: a card beside that region is never cut."""
    if not whole:
        return None
    # Two or three cards edge to edge may make a card's shape together, twice a card's
    # size or more (`_blocks`): not a card whose own lines these are.
    areas = [cv2.contourArea(q.astype(np.float32)) for q in whole]
    typical = float(np.median(areas))
    whole = [q for q, area in zip(whole, areas, strict=True) if area < BLOCK * typical]
    short = float(np.median([min(_sides(q)) for q in whole]))
    segments = cv2.HoughLinesP(
        thin.astype(np.uint8),
        1,
        np.pi / 180,
        threshold=max(10, round(SEAM_LINE * short / 2)),
        minLineLength=SEAM_LINE * short,
        maxLineGap=max(3, round(0.1 * short)),
    )
    if segments is None:
        return None
    inner = [(q - q.mean(axis=0)) * 0.8 + q.mean(axis=0) for q in whole]
    _, labels, stats, _ = cv2.connectedComponentsWithStats(cut)
    height, width = cut.shape
    drawn: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for x0, y0, x1, y1 in segments.reshape(-1, 4).astype(np.float64):
        middle = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
        if any(
            cv2.pointPolygonTest(q.astype(np.float32), tuple(middle), False) >= 0 for q in inner
        ):
            continue
        along = np.array([x1 - x0, y1 - y0]) / max(float(np.hypot(x1 - x0, y1 - y0)), 1e-6)
        across = np.array([-along[1], along[0]]) * 4
        sides = {
            int(labels[min(max(round(y), 0), height - 1), min(max(round(x), 0), width - 1)])
            for x, y in (middle + across, middle - across)
        }
        if len(sides) != 1 or 0 in sides:
            continue  # already apart, or not between two papers
        reach = SEAM_REACH * short * along
        drawn.setdefault(sides.pop(), []).append((middle - reach, middle + reach))
    mask = np.zeros(cut.shape, bool)
    for label, ends in drawn.items():
        # Within the region's box (and the seam's width beyond it) only: a region a block.
        x, y, w, h = stats[label, :4]
        x0, y0 = max(x - 4, 0), max(y - 4, 0)
        x1, y1 = min(x + w + 4, width), min(y + h + 4, height)
        line = np.zeros((y1 - y0, x1 - x0), np.uint8)
        for a, b in ends:
            a, b = a - (x0, y0), b - (x0, y0)
            cv2.line(line, tuple(map(round, a)), tuple(map(round, b)), 255, 3)
        region = (labels[y0:y1, x0:x1] == label).astype(np.uint8)
        region = cv2.dilate(region, np.ones((7, 7), np.uint8))
        mask[y0:y1, x0:x1] |= (line > 0) & (region > 0)
    return mask if mask.any() else None


# A seam's straight line is at least this share of a card's short side long, and is
# drawn on this far each way from its middle (a card's long side: to the region's ends).
SEAM_LINE, SEAM_REACH = 0.7, 2.0


def _shapes(
    regions: list[tuple[np.ndarray, float]], shape: tuple[int, int]
) -> tuple[list[np.ndarray], list[tuple[np.ndarray, str]]]:
    """The whole cards' quadrilaterals (each once), and the regions that may be cards
    partly seen, with why."""
    height, width = shape
    short = min(height, width) * MIN_CARD_SHARE
    min_area = short * short * CARD_RATIO
    whole: list[np.ndarray] = []
    seen: list[tuple[np.ndarray, float]] = []  # each whole card's middle, a quarter its side
    partial: list[tuple[np.ndarray, str]] = []
    for contour, shrunk in regions:
        area = cv2.contourArea(contour)
        if area < min_area or area > 0.5 * height * width:
            continue
        x, y, w, h = cv2.boundingRect(contour)
        at_edge = (
            x <= EDGE_MARGIN
            or y <= EDGE_MARGIN
            or x + w >= width - EDGE_MARGIN
            or (y + h >= height - EDGE_MARGIN)
        )
        quad = None if at_edge else _card_shaped(contour)
        if quad is not None:
            quad = _grown(quad, shrunk)
            centre = quad.mean(axis=0)
            if not any(_near(centre, c, s) for c, s in seen):
                whole.append(quad)
                seen.append(_middle(quad))
            continue
        why = CUT if at_edge else "partly hidden"
        partial.append((contour, why))
    partial = [(c, why) for c, why in partial if not _inside(c, whole)]
    return whole, _distinct(partial)


def _card_shaped(contour: np.ndarray) -> np.ndarray | None:
    """The region's quadrilateral, if the region fills it as a card does, in a card's
    proportions."""
    quad = _quadrilateral(contour)
    if quad is None:
        return None
    area = cv2.contourArea(contour)
    fill = area / max(cv2.contourArea(quad.astype(np.float32)), 1.0)
    solid = area / max(cv2.contourArea(cv2.convexHull(contour)), 1.0)
    if fill >= RECTANGULAR and solid >= SOLID and MIN_RATIO <= _ratio(quad) <= MAX_RATIO:
        return quad
    return None


def _quadrilateral(contour: np.ndarray) -> np.ndarray | None:
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for epsilon in (0.02, 0.035, 0.05):
        approx = cv2.approxPolyDP(hull, epsilon * perimeter, True)
        if len(approx) == 4:
            return _clockwise(approx.reshape(4, 2).astype(np.float64))
    return None


def _clockwise(quad: np.ndarray) -> np.ndarray:
    """The corners clockwise (in image coordinates, y down), the first at the start of a
    long side."""
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    quad = quad[np.argsort(angles)]
    sides = _side_lengths(quad)
    if sides[0] + sides[2] < sides[1] + sides[3]:
        quad = quad[NEXT]
    return quad


def _side_lengths(quad: np.ndarray) -> np.ndarray:
    """Each side's length, from each corner to the next."""
    d = quad[NEXT] - quad
    lengths: np.ndarray = np.sqrt((d * d).sum(axis=1))
    return lengths


# Each corner's next, going round: by indexing, as np.roll is some 10 us a call, and the
# finder asks it of a quadrilateral some 500 times a frame.
NEXT = [1, 2, 3, 0]


def _ratio(quad: np.ndarray) -> float:
    sides = _side_lengths(quad)
    return float((sides[0] + sides[2]) / max(sides[1] + sides[3], 1e-6))


def _grown(quad: np.ndarray, px: float) -> np.ndarray:
    centre = quad.mean(axis=0)
    out = quad - centre
    lengths = np.linalg.norm(out, axis=1, keepdims=True)
    grown: np.ndarray = centre + out * (1 + px / np.maximum(lengths, 1e-6))
    return grown


def _middle(quad: np.ndarray) -> tuple[np.ndarray, float]:
    """A whole card's middle, and how near another's must be to be the same card: a
    quarter of its long side."""
    return quad.mean(axis=0), 0.25 * float(np.hypot(*(quad[0] - quad[1])))


def _near(a: np.ndarray, b: np.ndarray, within: float) -> bool:
    """The same card found again (at another threshold, another erosion)."""
    return bool(abs(a[0] - b[0]) < within and abs(a[1] - b[1]) < within)


def _inside(contour: np.ndarray, quads: list[np.ndarray]) -> bool:
    """Whether the region's middle lies in any of `quads` (its middle found once: a frame
    may hold hundreds of regions, each asked of every card)."""
    m = contour.reshape(-1, 2).mean(axis=0)
    point = (float(m[0]), float(m[1]))
    return any(cv2.pointPolygonTest(q.astype(np.float32), point, False) >= 0 for q in quads)


def _distinct(partial: list[tuple[np.ndarray, str]]) -> list[tuple[np.ndarray, str]]:
    out: list[tuple[np.ndarray, str]] = []
    boxes: list[np.ndarray] = []  # each kept region's, fitted once
    for contour, why in sorted(partial, key=lambda p: -cv2.contourArea(p[0])):
        if not _inside(contour, boxes):
            out.append((contour, why))
            boxes.append(_box_of(contour))
    return out


def _box_of(contour: np.ndarray) -> np.ndarray:
    return _clockwise(cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float64))


def warp(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The card at `corners` flat, CARD_W x CARD_H, landscape."""
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), FLAT_CORNERS)
    return cv2.warpPerspective(
        image, m, (CARD_W, CARD_H), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )


def paper_band(flat: np.ndarray) -> np.ndarray:
    """The flat card's margin, its paper, as pixels (N x 3, BGR)."""
    h, w = flat.shape[:2]
    return np.concatenate(
        [
            flat[3 : h // 7, 3:-3].reshape(-1, 3),
            flat[-h // 7 : -3, 3:-3].reshape(-1, 3),
            flat[h // 7 : -h // 7, 3 : w // 12].reshape(-1, 3),
            flat[h // 7 : -h // 7, -w // 12 : -3].reshape(-1, 3),
        ]
    )


def paper_balanced(flat: np.ndarray) -> np.ndarray:
    """The flat card with its paper made neutral white: each channel scaled so that the
    card's own margin (its paper, whatever the light's colour) reads PAPER. Ink is then
    seen as it would be under white light: the colour is learnt, not hue thresholds."""
    white = np.percentile(paper_band(flat).astype(np.float32), 75, axis=0)
    gain = PAPER / np.maximum(white, 8.0)
    return np.clip(flat.astype(np.float32) * gain, 0, 255).astype(np.uint8)


PAPER = 235.0


@cache
def _margin(h: int, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A flat card's margin, every other pixel of it (rows, columns), the plane's terms
    there (1, x, y), and over the whole card (h x w x 3)."""
    ring = np.zeros((h, w), bool)
    ring[3 : h // 7 : 2, 3:-3:2] = ring[-h // 7 : -3 : 2, 3:-3:2] = True
    ring[h // 7 : -h // 7 : 2, 3 : w // 12 : 2] = ring[h // 7 : -h // 7 : 2, -w // 12 : -3 : 2] = (
        True
    )
    ys, xs = np.nonzero(ring)
    terms = np.stack([np.ones(len(xs)), xs / w, ys / h], axis=1)
    yy, xx = np.mgrid[0:h, 0:w]
    grid = np.stack([np.ones((h, w)), xx / w, yy / h], axis=2).astype(np.float32)
    return np.stack([ys, xs]), terms, grid


def lit_evenly(flat: np.ndarray, stroke: int = 3) -> np.ndarray:
    """The flat card with its paper made white point by point. The light over the card is
    taken as a plane in each channel (a lamp on one side, a window's blue on the other),
    fitted to its margin's paper; and where a shadow's edge crosses the card (a hand, a
    lamp's shade), as the paper's own level there: the card closed (dark strokes and
    symbols narrower than 1/`stroke` of its height filled with the paper around them, a
    shadow's edge kept), where that is paper in the shade, no darker than SHADE of the
    plane and of its colour. Something foreign over the card (a finger, the table) is
    darker or of another colour: the plane stays its light, and it is left dark."""
    h, w = flat.shape[:2]
    (ys, xs), terms, grid = _margin(h, w)
    pixels = flat[ys, xs].astype(np.float32)
    grey = pixels.mean(axis=1)
    paper = grey >= 0.8 * np.median(grey)  # not the table's edge nor a symbol's tip
    coef, *_ = np.linalg.lstsq(terms[paper], pixels[paper], rcond=None)
    plane = grid @ coef.astype(np.float32)
    # Padded with its own edge first: a shade along the card's side goes on past it, and is
    # kept as light, not filled as a stroke is.
    kernel = _closing(h // stroke | 1)
    pad = kernel.shape[0]
    padded = cv2.copyMakeBorder(flat, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    closed = cv2.morphologyEx(padded, cv2.MORPH_CLOSE, kernel)[pad:-pad, pad:-pad].astype(
        np.float32
    )
    # Per channel with OpenCV: numpy's reductions over an axis of three are slow.
    b, g, r = cv2.split(closed / np.maximum(plane, 8.0))
    level = (b + g + r) / 3
    spread = (cv2.max(cv2.max(b, g), r) - cv2.min(cv2.min(b, g), r)) / np.maximum(level, 1e-3)
    shade = (level >= SHADE) & (level < 1) & (spread <= SHADE_TINT)
    light = np.where(shade[..., None], closed, plane)
    even = flat.astype(np.float32) * (PAPER / np.maximum(light, 8.0))
    out: np.ndarray = np.clip(even, 0, 255).astype(np.uint8)
    return out


# Paper in a shadow: at least this share of the light, and its colour (each channel's
# share) within this of the light's: a lamp's shadow is lit by the room, of another colour
# (a brown shade beside white paper, up to 0.47 on pclewis/set-solver's shadow boards).
# Skin (0.5 and more), wood and a black table are darker or further.
SHADE, SHADE_TINT = 0.4, 0.4


@cache
def _closing(side: int) -> np.ndarray:
    return np.ones((side, side), np.uint8)


def _high_low(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's highest and lowest channel (int16), by OpenCV: numpy's reductions over
    an axis of three are slow."""
    b, g, r = cv2.split(image)
    return (
        cv2.max(cv2.max(b, g), r).astype(np.int16),
        cv2.min(cv2.min(b, g), r).astype(np.int16),
    )


def ink_mask(balanced: np.ndarray) -> np.ndarray:
    """The ink on a paper-balanced flat card: what is darker or more coloured than paper."""
    high, low = _high_low(balanced)
    darkness = PAPER - high
    chroma = high - low
    ink: np.ndarray = ((darkness > 35) | (chroma > 35)).astype(np.uint8) * 255
    return ink


@dataclass(frozen=True)
class Symbols:
    """A flat card's symbols as `card_symbols` found them: the closing that made them
    blobs, and the box around them (x0, y0, x1, y1) in the flat card's pixels."""

    closing: int
    box: tuple[int, int, int, int]


def card_symbols(flat: np.ndarray) -> Symbols | None:
    """Whether the flat image looks like a card: a paper margin all round (bright, even),
    and ink inside in one to three blobs side by side, each most of the card's height and
    taller than wide, once closed over the least of CLOSINGS that makes them so (None: no
    card). The paper's light is judged over a third of the card's height (`lit_evenly`),
    or, where a lamp's shade falls in stripes narrower than that (the shadow of its arm,
    of fingers), over a ninth of it."""
    inks: dict[int, tuple[np.ndarray, np.ndarray | None] | None] = {}
    h, w = flat.shape[:2]
    mh, mw = _inner_margin(h, w)
    for side in CLOSINGS:
        for stroke in STROKES:
            if stroke not in inks:  # each light judged once, and only when asked
                inks[stroke] = _inner_ink(flat, lit_evenly(flat, stroke))
            judged = inks[stroke]
            box = None if judged is None else _symbols(judged[0], side, h, w)
            if box is not None:
                # _inner_ink's box lies within the margin: in the flat card's pixels.
                x0, y0, x1, y1 = box[0] + mw, box[1] + mh, box[2] + mw, box[3] + mh
                # What lies over the card's edge stops short of its symbols: else it may
                # hide one, and the card is not whole.
                over = None if judged is None else judged[1]
                if over is not None and _reaches(over, (x0, y0, x1, y1)):
                    continue
                return Symbols(side, (x0, y0, x1, y1))
    return None


# The widths (1/n of a card's height) over which the paper's light is judged, in turn.
STROKES = (3, 9)


def _inner_ink(
    flat: np.ndarray, balanced: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The ink within the card's margin, once the margin is found paper, and the mask of
    what lies over the card's edge (`_over_edge`, its ink left out; None where nothing
    reaches past the margin); else None."""
    h, w = balanced.shape[:2]
    ink = ink_mask(balanced)
    # The margin is asked for no ink of a strong colour only: light of two colours (a lamp
    # and a window) leaves a tint on the paper that a plane does not take away, but a
    # finger, a box's print or the table is far from paper.
    high, low = _high_low(balanced)
    dark = (ink > 0) & (high < PAPER - 35)
    foreign = np.where(dark | ((ink > 0) & (high - low > 80)), 255, 0).astype(np.uint8)
    mh, mw = _inner_margin(h, w)
    grey = cv2.cvtColor(flat, cv2.COLOR_BGR2GRAY)
    if grey[2:mh, 2:-2].mean() < 60:  # a black phone, a dark box: no paper at all
        return None
    inner: np.ndarray = ink[mh:-mh, mw:-mw]
    touching = inner[0].any() or inner[-1].any() or inner[:, 0].any() or inner[:, -1].any()
    if not touching and _margin_share(foreign, mh, mw) <= MARGIN_FOREIGN:
        # Paper all round, and nothing reaching in past it: whatever lies over its edge
        # stops in the margin, far from its symbols.
        return inner, None
    # What may lie over its edge is dark (a sleeve, a finger in its own shade) or skin: a
    # hand is far from paper as the camera saw it, where the light judged may have
    # whitened it as a shade (lit_evenly), and its ink is no symbol's. A colour of another
    # kind is print: a phone's screen, a box.
    band = paper_band(flat).astype(np.int16)
    paper = float(np.median(band[:, 2] - band[:, 0]))
    over = _over_edge(np.where(dark, 255, 0).astype(np.uint8) | _skin(flat, paper))
    foreign[over > 0] = 0
    if _margin_share(foreign, mh, mw) > MARGIN_FOREIGN:
        return None
    inner = np.where(over > 0, 0, ink)[mh:-mh, mw:-mw]
    return inner, over


def _margin_share(foreign: np.ndarray, mh: int, mw: int) -> float:
    """The share of a flat card's margin (`_inner_margin`) that is `foreign` (255)."""
    margin = np.concatenate(
        [
            foreign[2:mh, 2:-2].ravel(),
            foreign[-mh:-2, 2:-2].ravel(),
            foreign[mh:-mh, 2:mw].ravel(),
            foreign[mh:-mh, -mw:-2].ravel(),
        ]
    )
    return float(margin.mean()) / 255


# A card's margin is paper with at most this share of it foreign: a card's rounded
# corners, a speck.
MARGIN_FOREIGN = 0.025


def _over_edge(foreign: np.ndarray) -> np.ndarray:
    """What lies over a flat card's edge (a finger, a sleeve's cuff): the blobs of what is
    not paper (`foreign`) that come in from the card's border, each short of half its
    sides (a strip of the table along a whole side is a card taken too large), together
    at most OVER_MOST of the card. Empty where there are none, or more."""
    h, w = foreign.shape
    _, labels, stats, _ = cv2.connectedComponentsWithStats(foreign)
    x, y, bw, bh = (stats[:, k] for k in range(4))
    at_border = (x <= 1) | (y <= 1) | (x + bw >= w - 1) | (y + bh >= h - 1)
    keep = at_border & (bw <= w / 2) & (bh <= h / 2)
    keep[0] = False  # what is not foreign
    over: np.ndarray = np.where(keep[labels], 255, 0).astype(np.uint8)
    if over.mean() / 255 > OVER_MOST:
        over[:] = 0
    return over


# What lies over a card's edge hides at most this share of it: a finger holding it.
OVER_MOST = 0.1


def _inner_margin(h: int, w: int) -> tuple[int, int]:
    """The margin that `_inner_ink` asks to be paper, top and bottom, left and right."""
    return h // 8, w // 14


# The closings that join a symbol's ink into one blob, in turn: a small card's outlined
# symbol (a webcam's, 130 px long) is a pale line a pixel wide that the first leaves in
# pieces.
CLOSINGS = (3, 5, 7)


def _symbols(inner: np.ndarray, side: int, h: int, w: int) -> tuple[int, int, int, int] | None:
    """The box around the ink inside a card's margin (`inner`, in its pixels) if, closed
    over `side` pixels, it is one to three blobs side by side, each most of the card's
    height and taller than wide; else None."""
    closed = cv2.morphologyEx(inner, cv2.MORPH_CLOSE, _closing(side))
    _, _, stats, _ = cv2.connectedComponentsWithStats(closed)
    blobs = [s for s in stats[1:] if s[cv2.CC_STAT_AREA] > 0.006 * h * w]
    # Symbols stand tall across a landscape card, most of its height; three squiggles
    # that touch (ink bleeding, a blur) are still taller than half their width.
    tall = [
        s
        for s in blobs
        if s[cv2.CC_STAT_HEIGHT] > 0.35 * h and s[cv2.CC_STAT_HEIGHT] > 0.5 * s[cv2.CC_STAT_WIDTH]
    ]
    if not tall or len(tall) > 3:
        return None
    # A blob that is not tall and less than half the least symbol's ink is a shade's
    # edge that the paper's light left (lit_evenly), set aside; a larger one is not ink
    # of a card.
    least = min(s[cv2.CC_STAT_AREA] for s in tall)
    if any(s[cv2.CC_STAT_AREA] >= least / 2 for s in blobs if not any(s is t for t in tall)):
        return None
    blobs = tall
    x, y = cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP
    return (
        int(min(s[x] for s in blobs)),
        int(min(s[y] for s in blobs)),
        int(max(s[x] + s[cv2.CC_STAT_WIDTH] for s in blobs)),
        int(max(s[y] + s[cv2.CC_STAT_HEIGHT] for s in blobs)),
    )
