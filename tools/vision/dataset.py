"""The classifier's examples: flat cards as find_cards makes them, with their truth.

- rendered: every card drawn (render.draw_card) on a table, lit, blurred, noisy,
  JPEG-compressed, then warped flat from corners a little off, as the finder's are;
- real: the labelled crops of real cards (tools/vision/set_photos.py prepares them), each
  warped flat from corners a little off, its light's colour changed;
- not cards: what else lies on a table (paper, a phone, a box, a hand, the table itself)
  cut out as a card would be.

Each set is an array of flat cards (N x CARD_H x CARD_W x 3, uint8), their faces' values
(N x 4: number, colour, shading, shape as 0-2; -1 for a non-card; -2 for a card partly
hidden by something over it, taught as unreadable: render.cover) and where they came from.
"""

import math
import re
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from referee.faces import COLORS, NUMBERS, SHADINGS, SHAPES
from referee.vision.card import Face, all_faces
from referee.vision.decode import read_photo
from referee.vision.find_cards import find_cards, warp

from . import evaluate, render

NOT_A_CARD = (-1, -1, -1, -1)
HIDDEN_CARD = (-2, -2, -2, -2)


def _jittered(corners: np.ndarray, rng: np.random.Generator, share: float) -> np.ndarray:
    size = np.linalg.norm(corners[0] - corners[1])
    return corners + rng.normal(0, share * size, corners.shape)


# What a real photo may do to a card, each with the share of rendered cards it is done to.
LOOKS = {
    "worn": 0.5,
    "faint": 0.3,
    "grainy": 0.25,
    "shade": 0.3,
    "glare": 0.25,
    "blur": 0.2,
    "slant": 0.2,
}


def rendered(
    faces: list[Face],
    per_face: int,
    rng: np.random.Generator,
    looks: frozenset[str] | None = frozenset(),
    covered: float = 0.0,
    chance: frozenset[str] = frozenset(LOOKS),
) -> tuple[np.ndarray, np.ndarray]:
    """`per_face` flat renderings of each face, with `looks` and `chance` (rendered_flat's);
    the share `covered` of them partly hidden, labelled HIDDEN_CARD."""
    flats, values = [], []
    for face in faces:
        for _ in range(per_face):
            hide = covered > 0 and rng.random() < covered  # no draw without: as before
            flat, hidden = rendered_flat(face, rng, looks, hide, chance)
            flats.append(flat)
            values.append(HIDDEN_CARD if hidden else face.values())
    return np.array(flats), np.array(values, np.int8)


def rendered_flat(
    face: Face,
    rng: np.random.Generator,
    looks: frozenset[str] | None = None,
    hide: bool = False,
    chance: frozenset[str] = frozenset(LOOKS),
) -> tuple[np.ndarray, bool]:
    """One flat rendering of `face`; each of LOOKS in `chance` done to it by chance, or,
    given `looks`, those and no other; `hide`: something over part of it (render.cover).
    The flat card, and whether it was so hidden."""

    def has(look: str) -> bool:
        if looks is not None:
            return look in looks
        return look in chance and rng.random() < LOOKS[look]

    size = (220, 140)
    paper = render.paper_colour(rng, 225, 252)
    # Half the inks as a worn deck or a washed-out photo shows them (the other half as new).
    ink = render.worn_ink(rng, face.color) if has("worn") else render.random_ink(rng, face.color)
    if has("faint"):  # stripes so thin that a camera sees a pale tint inside the outline
        ink.stripe_width = rng.uniform(0.08, 0.2)
    picture = render.draw_card(face, size, ink=ink, rng=rng, paper=paper)
    if has("grainy"):
        picture = render.grainy(picture, paper, rng)
    mask = render._rounded_card_mask(size, size[0] * 0.04)
    canvas = render.table_top(rng, (320, 240))
    long_ = rng.uniform(140, 220)
    centre = np.array([160, 120]) + rng.normal(0, 6, 2)
    angle = rng.normal(0, 0.06) + (math.pi if rng.random() < 0.5 else 0)
    corners = render._quad(
        centre,
        (long_, long_ / render.CARD_MM[0] * render.CARD_MM[1]),
        angle,
        rng,
        rng.uniform(-0.3, 0.3),
    )
    render._shadow(
        canvas, render._mask_of(mask, corners, canvas.shape), rng, rng.uniform(0.05, 0.3)
    )
    on_canvas = render._paste(canvas, picture, mask, corners)
    hidden = hide and render.cover(canvas, rng, on_canvas, corners) > 0
    if rng.random() < 0.3:  # a soft shadow across part of the card (a hand, the camera)
        shade = np.zeros(canvas.shape[:2], np.uint8)
        p = rng.uniform(0, 1, (3, 2)) * (320, 240)
        cv2.fillPoly(shade, [p.astype(np.int32)], 255)
        render._shadow(canvas, shade, rng, rng.uniform(0.1, 0.45))
    if has("shade"):
        render.hard_shade(canvas, rng, centre, long_)
    if has("glare"):
        render.glare(canvas, rng, centre, long_)
    canvas = render.lighting(canvas, rng)
    if has("blur"):
        canvas = render.motion_blur(canvas, rng, rng.uniform(3, long_ * 0.06))
    canvas = render.camera(canvas, rng)
    # Now and then the corners further off, as a card seen at a slant is found.
    return warp(canvas, _jittered(corners, rng, 0.03 if has("slant") else 0.012)), hidden


def _hardships(
    image: np.ndarray, rng: np.random.Generator, centre: np.ndarray, long_: float
) -> None:
    """A real card's crop given what the photos it came from lack: a lamp's or a hand's
    shadow with a sharp edge across it, glare off its gloss."""
    if rng.random() < LOOKS["shade"]:
        render.hard_shade(image, rng, centre, long_)
    if rng.random() < LOOKS["glare"]:
        render.glare(image, rng, centre, long_)


_LABEL = re.compile(r"([123])-(red|green|purple)-(solid|striped|empty)-(diamond|oval|squiggle)s?$")


def label_of(folder: str) -> Face | None:
    """A face from a folder named as tomwhite/set-game's: `2-purple-empty-diamonds`."""
    m = _LABEL.match(folder)
    if m is None:
        return None
    number, color, shading, shape = m.groups()
    return Face(int(number), color, "open" if shading == "empty" else shading, shape)


def real(
    crops: Sequence[Path | np.ndarray],
    faces: list[Face],
    rng: np.random.Generator,
    copies: int = 1,
    hard: bool = False,
    covered: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Flat cards from crops of real cards (each a card filling its picture: a file, or
    the picture itself), `copies` each, warped from corners a little off, their light's
    colour changed; `hard`: now and then a sharp-edged shadow, glare or a motion blur as
    well; the share `covered` partly hidden, labelled HIDDEN_CARD."""
    flats, values = [], []
    for given, face in zip(crops, faces, strict=True):
        crop = cv2.imread(str(given), cv2.IMREAD_COLOR) if isinstance(given, Path) else given
        if crop is None:
            continue
        if crop.shape[0] > crop.shape[1]:
            crop = np.rot90(crop, 1 if rng.random() < 0.5 else -1).copy()
        for _ in range(copies):
            hide = covered > 0 and rng.random() < covered  # no draw without: as before
            flat, hidden = real_flat(crop, rng, hard=hard, hide=hide)
            flats.append(flat)
            values.append(HIDDEN_CARD if hidden else face.values())
    return np.array(flats), np.array(values, np.int8)


def real_flat(
    crop: np.ndarray,
    rng: np.random.Generator,
    jitter: float = 0.012,
    hard: bool = False,
    hide: bool = False,
) -> tuple[np.ndarray, bool]:
    """A real card's crop made flat as the finder makes it (real()'s); whether it was
    hidden in part."""
    h, w = crop.shape[:2]
    pad = int(max(h, w) * 0.06)
    table = np.array(rng.uniform(10, 200, 3), np.uint8)
    framed = cv2.copyMakeBorder(crop, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=table.tolist())
    corners = np.array([(pad, pad), (pad + w, pad), (pad + w, pad + h), (pad, pad + h)], float)
    gain = np.array([rng.uniform(0.7, 1.15), rng.uniform(0.85, 1.1), rng.uniform(0.7, 1.15)])
    framed = np.clip(framed * gain * rng.uniform(0.6, 1.15), 0, 255).astype(np.uint8)
    hidden = False
    if hide:
        card = np.zeros(framed.shape[:2], np.uint8)
        cv2.fillConvexPoly(card, corners.astype(np.int32), 255)
        hidden = render.cover(framed, rng, card, corners) > 0
    if hard:
        _hardships(framed, rng, np.array([w / 2 + pad, h / 2 + pad]), max(h, w))
        if rng.random() < 0.1:
            framed = render.motion_blur(framed, rng, rng.uniform(3, max(h, w) * 0.05))
    if rng.random() < 0.5:
        framed = render.camera(framed, rng)
    flat = warp(framed, _jittered(corners, rng, jitter))
    return (flat[::-1, ::-1].copy() if rng.random() < 0.5 else flat), hidden


def not_cards(count: int, rng: np.random.Generator) -> np.ndarray:
    """Flat cut-outs of what else is on a table: a card-sized quadrilateral over a sheet of
    paper, a phone, a box, a hand, a cable or the bare table."""
    flats: list[np.ndarray] = []
    while len(flats) < count:
        kinds = tuple(rng.choice(["paper", "phone", "box", "hand", "cable", "paper"], size=3))
        table = render.render_table(
            [], rng, size=(640, 480), distractors=kinds, card_px=rng.uniform(90, 200)
        )
        for _ in range(6):
            long_ = rng.uniform(60, 220)
            centre = rng.uniform(0.15, 0.85, 2) * (640, 480)
            corners = render._quad(centre, (long_, long_ / 1.56), rng.uniform(0, math.pi), rng, 0)
            flats.append(warp(table.image, corners))
    return np.array(flats[:count])


def tomwhite_crops(root: Path) -> list[tuple[Path, Face, str]]:
    """tomwhite/set-game's labelled crops under `root`: path, face, the photo it was cut
    from (its name up to the board's number: a photo's cards stay on one side of a split)."""
    found = []
    for path in sorted(root.glob("*/*.jpg")):
        face = label_of(path.parent.name)
        if face is not None:
            photo = path.stem.rsplit("_", 2)[0]
            found.append((path, face, photo))
    return found


def tuning_cards(photos: Path) -> list[tuple[np.ndarray, Face, str]]:
    """The real cards of the finder's tuning boards (evaluate.TUNING, under `photos` as
    tools/vision/set_photos.py prepares them), each flat as the finder makes it and
    matched to its label as evaluate.py matches them: the flat card, its face, its board.
    Only whole cards: one the photo's edge cuts is never read surely, whatever it shows.
    Never a held-out board's (MODEL.md)."""
    found = []
    for board in sorted(evaluate.TUNING):
        source, name = board.split("/")
        photo = evaluate.photo_of(photos, source, name)
        if photo is None:
            continue
        image = read_photo(photo).image
        truth = evaluate.labels(evaluate.LABELS / source / f"{name}.txt")
        cards = find_cards(image)
        height, width = image.shape[:2]
        taken = evaluate.matched([c.corners for c in cards], truth, width, height)
        for card, best in zip(cards, taken, strict=True):
            if best is not None and card.whole:
                found.append((card.flat, truth[best][2], board))
    return found


__all__ = ["COLORS", "NOT_A_CARD", "NUMBERS", "SHADINGS", "SHAPES", "all_faces"]
