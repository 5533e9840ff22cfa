"""SET cards and tables drawn from their geometry, with what a camera does to them.

Every one of the 81 cards is drawn in vector form (the symbols as polygons, antialiased,
drawn at 4x and shrunk), in inks that vary as editions and printings do; then a table:
the cards laid out tilted and at an angle, on wood, dark cloth or a white-ish top, with a
hand, a cable, a box, a phone or a sheet of paper in view, lit warm, cool, by a flash or
dimly, blurred, noisy and JPEG-compressed. The truth is known exactly: each card's face,
its corners in the image, and how much of it shows.

Used by the training (tools/vision/train.py) and by the tests (tests/test_vision*.py).
"""

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from referee.vision.card import Face, all_faces

# A card is 89 x 57 mm (2.25 x 3.5 in); drawn landscape, its symbols side by side.
CARD_MM = (89.0, 57.0)
SS = 4  # supersampling: drawn at 4x, shrunk by area
# Inks as (B, G, R): each card's is one of these, jittered.
INKS = {
    "red": [(40, 30, 225), (60, 40, 235), (70, 20, 200), (90, 80, 235), (30, 60, 230)],
    "green": [(70, 150, 0), (90, 160, 30), (60, 130, 10), (120, 170, 60), (80, 140, 40)],
    "purple": [(130, 30, 90), (140, 40, 110), (110, 20, 70), (170, 90, 140), (120, 40, 70)],
}


def symbol_outline(shape: str, length: float, width: float, points: int = 64) -> np.ndarray:
    """A symbol's outline, centred on 0, its length along y: (n, 2) float coordinates."""
    if shape == "diamond":
        return np.array([(0, -length / 2), (width / 2, 0), (0, length / 2), (-width / 2, 0)])
    if shape == "oval":
        r = width / 2
        half = length / 2 - r
        top = [(r * math.cos(a), -half - r * math.sin(a)) for a in np.linspace(0, math.pi, 24)]
        bottom = [(-r * math.cos(a), half + r * math.sin(a)) for a in np.linspace(0, math.pi, 24)]
        return np.array(top + bottom)
    # The squiggle: an S-bent band, thick in its lobes and thinner at its waist, its ends
    # rounded and tilted.
    ys = np.linspace(-1, 1, points)
    bend = 0.3 * width * np.sin(math.pi * ys)
    thick = 0.5 * width * (0.85 + 0.35 * ys**2) * np.sqrt(np.clip(1 - np.abs(ys) ** 2.6, 0, 1))
    tilt = 0.18 * width * ys**3
    right = np.stack([bend + thick + tilt, ys * length / 2], axis=1)
    left = np.stack([bend - thick + tilt, ys * length / 2], axis=1)[::-1]
    return np.concatenate([right, left])


@dataclass
class Ink:
    """How one card is printed: its ink, the stroke and the stripes."""

    color: tuple[int, int, int]
    stroke_mm: float = 0.7
    stripe_mm: float = 0.9  # from one stripe to the next
    stripe_width: float = 0.35  # of the period


def random_ink(rng: np.random.Generator, color: str) -> Ink:
    base = np.array(INKS[color][rng.integers(len(INKS[color]))], float)
    jitter = rng.normal(0, 12, 3)
    ink = tuple(int(v) for v in np.clip(base * rng.uniform(0.85, 1.1) + jitter, 0, 255))
    return Ink(
        ink,  # type: ignore[arg-type]
        stroke_mm=rng.uniform(0.5, 1.0),
        stripe_mm=rng.uniform(0.7, 1.3),
        stripe_width=rng.uniform(0.25, 0.5),
    )


def paper_colour(rng: np.random.Generator, lo: float, hi: float) -> tuple[int, int, int]:
    """A card's paper, a little off white: each channel from lo to hi."""
    b, g, r = (int(v) for v in rng.uniform(lo, hi, 3))
    return b, g, r


def draw_card(
    face: Face,
    size: tuple[int, int] = (356, 228),
    ink: Ink | None = None,
    paper: tuple[int, int, int] = (245, 247, 248),
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The card's face, landscape, `size` (width, height) pixels, BGR, square corners
    (the table rounds them)."""
    rng = rng or np.random.default_rng(0)
    ink = ink or random_ink(rng, face.color)
    width, height = size
    px = width * SS / CARD_MM[0]  # pixels a mm, drawn
    length, thick = 33.0 * px, 14.5 * px
    gap = thick + 5.0 * px
    shape_scale = rng.uniform(0.93, 1.05)
    length, thick = length * shape_scale, thick * shape_scale
    centres = [(i - (face.number - 1) / 2) * gap for i in range(face.number)]
    outline = symbol_outline(face.shape, length, thick)
    polys = [
        np.round(outline + np.array([width * SS / 2 + cx, height * SS / 2])).astype(np.int32)
        for cx in centres
    ]
    mask = np.zeros((height * SS, width * SS), np.uint8)
    cv2.fillPoly(mask, polys, 255, cv2.LINE_AA)
    if face.shading != "solid":
        if face.shading == "striped":
            period = ink.stripe_mm * px
            ys = np.arange(height * SS, dtype=np.float32)
            rows = (np.mod(ys, period) < period * ink.stripe_width).astype(np.uint8) * 255
            mask = np.minimum(mask, rows[:, None])
        else:
            mask[:] = 0
        cv2.polylines(mask, polys, True, 255, max(2, round(ink.stroke_mm * px)), cv2.LINE_AA)
    # Blended at the card's size: the mask shrunk by area is the ink's coverage of each pixel.
    alpha = cv2.resize(mask, size, interpolation=cv2.INTER_AREA).astype(np.float32)[..., None] / 255
    blank = np.empty((height, width, 3), np.float32)
    blank[:] = paper
    card: np.ndarray = blank * (1 - alpha) + np.array(ink.color, np.float32) * alpha
    return card.astype(np.uint8)


# The table.


@dataclass
class Placed:
    """A card on a rendered table: its face, its corners in the image (clockwise from the
    top left of the face as drawn), and the share of it that shows (hidden by a distractor
    or cut by the frame's edge)."""

    face: Face
    corners: np.ndarray
    visible: float = 1.0
    cut: bool = False
    # The corners of the box around its ink, in the image (where a frame's edge may cut
    # the card and hide none of its symbols).
    ink: np.ndarray | None = None


@dataclass
class Table:
    image: np.ndarray
    cards: list[Placed] = field(default_factory=list)
    distractors: list[str] = field(default_factory=list)


def table_top(
    rng: np.random.Generator, size: tuple[int, int], kind: str | None = None
) -> np.ndarray:
    """A table's top: wood, dark cloth, a white-ish top or a plain colour, drawn at random;
    or, only when asked for by name (the random choice, and so every render that leaves
    `kind` to it, is as it was), a light table as bright as the cards or nearly: "silver",
    a laptop's lid (light grey, brushed, a sheen across it, its logo and a rim), or
    "pale", a pale wood."""
    width, height = size
    kind = kind or rng.choice(["wood", "cloth", "white", "plain", "wood"])
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    if kind == "wood":
        base = np.array(
            rng.choice([(40, 80, 140), (30, 60, 110), (60, 110, 170), (20, 40, 70)]), float
        )
        top = _grained(base, rng, xx, yy, (0.8, 0.12, 0.08))
    elif kind == "cloth":
        base = np.array(
            rng.choice([(30, 30, 30), (50, 40, 20), (20, 60, 20), (60, 30, 30), (35, 35, 60)]),
            float,
        )
        top = base[None, None, :] * (1 + 0.15 * rng.standard_normal((height, width, 1)))
    elif kind == "white":
        base = np.array(rng.uniform(185, 235, 3))
        top = base[None, None, :] + 6 * rng.standard_normal((height, width, 1))
    elif kind == "silver":
        top = _silver(rng, width, height, xx, yy)
    elif kind == "pale":
        base = np.array(rng.uniform([150, 175, 190], [195, 215, 235]))
        top = _grained(base, rng, xx, yy, (0.92, 0.05, 0.03))
    else:
        base = rng.uniform(20, 200, 3)
        top = base[None, None, :] + 4 * rng.standard_normal((height, width, 1))
    table: np.ndarray = np.clip(top, 0, 255).astype(np.uint8)
    return table


def _grained(
    base: np.ndarray,
    rng: np.random.Generator,
    xx: np.ndarray,
    yy: np.ndarray,
    shading: tuple[float, float, float],
) -> np.ndarray:
    """Wood of colour `base`: its grain at a random angle, the light's share `shading` (its
    level, the grain's depth, a broad wave's)."""
    level, grain_depth, wave_depth = shading
    angle = rng.uniform(0, math.pi)
    u = xx * math.cos(angle) + yy * math.sin(angle)
    v = -xx * math.sin(angle) + yy * math.cos(angle)
    grain = np.sin(u / rng.uniform(3, 9) + 3 * np.sin(v / rng.uniform(40, 120)))
    shade = level + grain_depth * grain + wave_depth * np.sin(u / rng.uniform(30, 60))
    top: np.ndarray = base[None, None, :] * shade[..., None]
    return top


def _silver(
    rng: np.random.Generator, width: int, height: int, xx: np.ndarray, yy: np.ndarray
) -> np.ndarray:
    """A laptop's lid under the cards: a neutral light grey (a little blue or warm), brushed
    across the frame, a broad sheen across it, its logo (a paler or darker rounded shape) and
    its rim (a darker line, a radius at the corners) somewhere in the frame."""
    grey = rng.uniform(165, 215)
    base = grey + rng.uniform(-6, 6, 3)
    angle = rng.uniform(0, math.pi)
    v = -xx * math.sin(angle) + yy * math.cos(angle)
    # Brushed: streaks along u, from noise stretched along it.
    streaks = cv2.resize(
        rng.standard_normal((height, max(2, width // 40))).astype(np.float32),
        (width, height),
        interpolation=cv2.INTER_LINEAR,
    )
    sheen = rng.uniform(0.05, 0.15) * np.cos((v / max(width, height)) * math.pi * rng.uniform(1, 2))
    top = base[None, None, :] * (1 + sheen[..., None]) + 3 * streaks[..., None]
    top = top + 2 * rng.standard_normal((height, width, 1))
    logo = np.zeros((height, width), np.uint8)
    centre = (int(rng.uniform(0.2, 0.8) * width), int(rng.uniform(0.2, 0.8) * height))
    radius = int(rng.uniform(0.05, 0.1) * min(width, height))
    cv2.circle(logo, centre, radius, 255, -1, cv2.LINE_AA)
    cv2.circle(logo, (centre[0] + radius // 2, centre[1] - radius // 3), radius // 3, 0, -1)
    tone = rng.choice([-25.0, 20.0])
    top = top + tone * (logo.astype(np.float32) / 255)[..., None]
    rim = np.zeros((height, width), np.uint8)
    inset = int(rng.uniform(0.02, 0.12) * min(width, height))
    cv2.rectangle(rim, (-inset, inset), (width - inset, height + inset), 255, 2 + inset // 20)
    top = top - rng.uniform(20, 60) * (cv2.GaussianBlur(rim, (0, 0), 1.0) / 255)[..., None]
    out: np.ndarray = top
    return out


def _rounded_card_mask(size: tuple[int, int], radius: float) -> np.ndarray:
    width, height = size
    mask = np.zeros((height, width), np.uint8)
    r = max(1, int(radius))
    cv2.rectangle(mask, (r, 0), (width - r, height), 255, -1)
    cv2.rectangle(mask, (0, r), (width, height - r), 255, -1)
    for cx, cy in ((r, r), (width - r, r), (r, height - r), (width - r, height - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def _where(weight: np.ndarray) -> tuple[slice, slice]:
    """The rows and columns within which a weight (one channel, 8 bits) is not zero: a
    blend by it changes no pixel outside them. Blended over the whole frame, a card's
    paste and shadow took most of a table's rendering (some 13 ms a card at 960x720)."""
    x, y, w, h = cv2.boundingRect(weight)
    return slice(y, y + h), slice(x, x + w)


def _blend(image: np.ndarray, weight: np.ndarray, over: np.ndarray) -> None:
    """`image` towards `over` (an image of its size, or a colour) by `weight` / 255, where
    the weight is not zero."""
    box = _where(weight)
    a = (weight[box].astype(np.float32) / 255)[..., None]
    top = over[box] if over.ndim == 3 else over
    image[box] = np.clip(image[box] * (1 - a) + top * a, 0, 255).astype(np.uint8)


def _paste(
    image: np.ndarray, picture: np.ndarray, mask: np.ndarray, corners: np.ndarray
) -> np.ndarray:
    """`picture` warped onto `corners` of `image`, through its `mask`; the mask as pasted."""
    h, w = picture.shape[:2]
    src = np.array([(0, 0), (w, 0), (w, h), (0, h)], np.float32)
    m = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    size = (image.shape[1], image.shape[0])
    warped = cv2.warpPerspective(picture, m, size, flags=cv2.INTER_LINEAR)
    alpha = cv2.warpPerspective(mask, m, size, flags=cv2.INTER_LINEAR)
    _blend(image, alpha, warped)
    return alpha


def _shadow(
    image: np.ndarray,
    mask: np.ndarray,
    rng: np.random.Generator,
    strength: float,
    reach: int = 6,
) -> None:
    """The shadow `mask`'s thing casts, up to `reach` px away, as soft."""
    shift = rng.integers(-reach, reach + 1, 2)
    m = np.array([[1, 0, shift[0]], [0, 1, shift[1]]], np.float32)
    moved = cv2.warpAffine(mask, m, (mask.shape[1], mask.shape[0]))
    blurred = cv2.GaussianBlur(moved, (0, 0), reach * 5 / 6)
    box = _where(blurred)
    soft = blurred[box].astype(np.float32) / 255
    image[box] = (image[box] * (1 - strength * soft[..., None])).astype(np.uint8)


def hand(rng: np.random.Generator, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """A hand seen from above: a palm and fingers, skin-coloured; picture and mask."""
    s = int(scale)
    mask = np.zeros((s * 2, s * 2), np.uint8)
    cv2.ellipse(mask, (s, int(s * 1.3)), (int(s * 0.42), int(s * 0.5)), 0, 0, 360, 255, -1)
    for i, angle in enumerate((-40, -15, 0, 15, 32)):
        length = s * (0.55 if i == 0 else rng.uniform(0.7, 0.95))
        a = math.radians(angle - 90)
        base = (s + int(s * 0.3 * math.sin(math.radians(angle))), int(s * 1.0))
        tip = (int(base[0] + length * math.cos(a)), int(base[1] + length * math.sin(a)))
        cv2.line(mask, base, tip, 255, max(2, int(s * 0.16)), cv2.LINE_AA)
    skin = np.array(
        rng.choice(
            [(120, 160, 220), (90, 130, 190), (60, 90, 140), (140, 170, 230), (50, 70, 110)]
        ),
        float,
    )
    picture = np.clip(skin + rng.normal(0, 8, (s * 2, s * 2, 3)), 0, 255).astype(np.uint8)
    shade = cv2.GaussianBlur(mask, (0, 0), s * 0.1).astype(np.float32) / 255
    picture = (picture * (0.75 + 0.25 * shade[..., None])).astype(np.uint8)
    return picture, mask


def _box_picture(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """A game's box or a book: printed colours, a few blocks and letters."""
    width, height = size
    picture = np.full((height, width, 3), rng.uniform(30, 250, 3), np.uint8)
    for _ in range(rng.integers(2, 7)):
        x, y = rng.integers(0, width), rng.integers(0, height)
        cv2.rectangle(
            picture,
            (int(x), int(y)),
            (int(x + rng.integers(10, width)), int(y + rng.integers(10, height))),
            tuple(int(v) for v in rng.uniform(0, 255, 3)),
            -1,
        )
    for _ in range(rng.integers(0, 4)):
        cv2.putText(
            picture,
            "SET",
            (int(rng.integers(0, width // 2)), int(rng.integers(20, height))),
            cv2.FONT_HERSHEY_DUPLEX,
            rng.uniform(0.5, 2),
            tuple(int(v) for v in rng.uniform(0, 255, 3)),
            2,
        )
    return picture


def _paper(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """A sheet of paper, blank or with lines of text (a score sheet)."""
    width, height = size
    picture = np.full((height, width, 3), rng.uniform(225, 252), np.uint8)
    if rng.random() < 0.7:
        for y in range(int(height * 0.1), int(height * 0.9), max(8, height // 14)):
            x1 = int(width * rng.uniform(0.5, 0.9))
            cv2.line(picture, (int(width * 0.1), y), (x1, y), (60, 60, 60), 1)
            if rng.random() < 0.6:
                cv2.putText(
                    picture,
                    "Ada 12  Ben 9",
                    (int(width * 0.1), y - 2),
                    cv2.FONT_HERSHEY_SIMPLEX,
                    max(0.25, height / 600),
                    (40, 40, 40),
                    1,
                )
    return picture


def _phone(rng: np.random.Generator, size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    width, height = size
    body = tuple(int(v) for v in (rng.choice([20, 30, 200, 230]),) * 3)
    picture = np.full((height, width, 3), body, np.uint8)
    m = max(2, width // 14)
    screen = (
        _box_picture(rng, (width - 2 * m, height - 4 * m))
        if rng.random() < 0.6
        else np.full((height - 4 * m, width - 2 * m, 3), 15, np.uint8)
    )
    picture[2 * m : height - 2 * m, m : width - m] = screen
    return picture, _rounded_card_mask(size, width * 0.12)


def _cable(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    height, width = image.shape[:2]
    pts = np.cumsum(rng.normal(0, width * 0.08, (8, 2)), axis=0) + rng.uniform(0, 1, 2) * (
        width,
        height,
    )
    colour = tuple(
        int(v) for v in rng.choice([(20, 20, 20), (235, 235, 235), (40, 40, 160), (200, 200, 200)])
    )
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.polylines(mask, [pts.astype(np.int32)], False, 255, int(rng.integers(3, 9)), cv2.LINE_AA)
    _blend(image, mask, np.array(colour))
    return mask


def _quad(
    centre: np.ndarray,
    size: tuple[float, float],
    angle: float,
    rng: np.random.Generator,
    tilt: float,
) -> np.ndarray:
    w, h = size
    base = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)])
    c, s = math.cos(angle), math.sin(angle)
    rot = base @ np.array([[c, s], [-s, c]])
    # A camera at an angle: the far edge a little shorter, the corners a little off.
    rot = rot * (1 + tilt * rot[:, 1:2] / max(w, h))
    corners: np.ndarray = rot + centre + rng.normal(0, 0.6, rot.shape)
    return corners


def lighting(image: np.ndarray, rng: np.random.Generator, kind: str | None = None) -> np.ndarray:
    """Warm, cool, flash, dim or daylight, with a gradient across the table."""
    kind = kind or rng.choice(["warm", "cool", "flash", "dim", "day", "warm"])
    height, width = image.shape[:2]
    gain = {
        "warm": (rng.uniform(0.55, 0.8), rng.uniform(0.8, 0.95), 1.0),
        "cool": (1.0, rng.uniform(0.9, 1.0), rng.uniform(0.75, 0.92)),
        "flash": (1.0, 1.0, 1.0),
        "dim": (rng.uniform(0.8, 1.0), rng.uniform(0.85, 1.0), rng.uniform(0.85, 1.0)),
        "day": (rng.uniform(0.92, 1.05), 1.0, rng.uniform(0.92, 1.05)),
    }[kind]
    level = {"dim": rng.uniform(0.35, 0.6), "flash": rng.uniform(0.9, 1.1)}.get(
        kind, rng.uniform(0.75, 1.05)
    )
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    if kind == "flash":
        cx, cy = rng.uniform(0.3, 0.7) * width, rng.uniform(0.3, 0.7) * height
        r = np.hypot(xx - cx, yy - cy) / max(width, height)
        field_ = 1.25 - 0.9 * r**1.5
    else:
        angle = rng.uniform(0, 2 * math.pi)
        g = (xx * math.cos(angle) + yy * math.sin(angle)) / max(width, height)
        field_ = 1 + rng.uniform(0, 0.35) * (g - g.mean())
    out = image.astype(np.float32) * np.array(gain, np.float32) * level * field_[..., None]
    lit: np.ndarray = np.clip(out, 0, 255).astype(np.uint8)
    return lit


def worn_ink(rng: np.random.Generator, color: str) -> Ink:
    """An ink as real decks and lights show it: faded towards the paper (a worn deck, a
    washed-out photo), greyed (a purple that reads mauve or grey-brown), or off its hue."""
    ink = random_ink(rng, color)
    bgr = np.array(ink.color, float)
    fade = rng.uniform(0.15, 0.6) if rng.random() < 0.5 else 0.0
    grey = rng.uniform(0.2, 0.6) if rng.random() < 0.5 else 0.0
    bgr = bgr * (1 - grey) + bgr.mean() * grey
    bgr = bgr * (1 - fade) + 235 * fade
    if color == "purple" and rng.random() < 0.4:  # red-brown or blue-grey purples
        bgr = bgr + rng.choice([(-25, -5, 20), (20, 10, -15)]) * rng.uniform(0.5, 1.5)
    ink.color = tuple(int(v) for v in np.clip(bgr, 0, 255))  # type: ignore[assignment]
    return ink


def grainy(card: np.ndarray, paper: tuple[int, int, int], rng: np.random.Generator) -> np.ndarray:
    """The print's grain: ink laid unevenly, solid ink speckled with paper."""
    ink = 1 - card.astype(np.float32).mean(axis=2, keepdims=True) / max(np.mean(paper), 1)
    dots = rng.uniform(0, rng.uniform(0.2, 0.5), card.shape[:2]).astype(np.float32)
    speckle = cv2.GaussianBlur(dots, (0, 0), 0.6)[..., None]
    lifted = card + (np.array(paper, np.float32) - card) * speckle * np.clip(ink * 2, 0, 1)
    out: np.ndarray = np.clip(lifted, 0, 255).astype(np.uint8)
    return out


def hard_shade(image: np.ndarray, rng: np.random.Generator, near: np.ndarray, reach: float) -> None:
    """A shadow with a sharp edge across part of `image` near `near` (a lamp's shade, a
    hand close to the card): a straight or a curved edge, its light browner or bluer."""
    height, width = image.shape[:2]
    mask = np.zeros((height, width), np.uint8)
    through = near + rng.normal(0, reach * 0.3, 2)
    if rng.random() < 0.5:
        angle = rng.uniform(0, 2 * math.pi)
        d = np.array([math.cos(angle), math.sin(angle)])
        n = np.array([-d[1], d[0]])
        far = 4 * max(width, height)
        poly = np.array(
            [
                through - d * far,
                through + d * far,
                through + d * far + n * far,
                through - d * far + n * far,
            ]
        )
        cv2.fillPoly(mask, [poly.astype(np.int32)], 255)
    else:  # the rim of a round shade or a hand: a large ellipse whose edge crosses here
        r = reach * rng.uniform(0.6, 2.5)
        angle = rng.uniform(0, 2 * math.pi)
        centre = through + r * np.array([math.cos(angle), math.sin(angle)])
        axes = (int(r), int(r * rng.uniform(0.6, 1.4)))
        cv2.ellipse(
            mask, (int(centre[0]), int(centre[1])), axes, rng.uniform(0, 180), 0, 360, 255, -1
        )
    soft = cv2.GaussianBlur(mask, (0, 0), rng.uniform(0.5, 3)).astype(np.float32) / 255
    strength = rng.uniform(0.2, 0.6)
    tint = rng.uniform(-0.15, 0.4)
    darker = strength * np.array([1 + tint, 1, 1 - tint], np.float32)
    image[:] = np.clip(image * (1 - darker * soft[..., None]), 0, 255).astype(np.uint8)


def glare(image: np.ndarray, rng: np.random.Generator, near: np.ndarray, reach: float) -> None:
    """Light reflected off a glossy card: a washed-out patch, streaks, or a wash from one
    side, towards white."""
    height, width = image.shape[:2]
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    kind = rng.choice(["spot", "streaks", "wash"])
    if kind == "spot":
        c = near + rng.normal(0, reach * 0.35, 2)
        r = reach * rng.uniform(0.1, 0.4)
        a = np.exp(-(((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / (2 * r * r)))
    elif kind == "streaks":
        angle = rng.uniform(0, math.pi)
        u = (xx - near[0]) * math.cos(angle) + (yy - near[1]) * math.sin(angle)
        period = reach * rng.uniform(0.08, 0.3)
        a = np.clip(np.sin(u / period * 2 * math.pi + rng.uniform(0, 6)), 0, 1) ** 2
        v = -(xx - near[0]) * math.sin(angle) + (yy - near[1]) * math.cos(angle)
        a *= np.exp(-((v - rng.normal(0, reach * 0.2)) ** 2) / (2 * (reach * 0.35) ** 2))
    else:
        angle = rng.uniform(0, 2 * math.pi)
        u = ((xx - near[0]) * math.cos(angle) + (yy - near[1]) * math.sin(angle)) / reach
        a = np.clip(u + rng.uniform(-0.2, 0.4), 0, 1)
    a = (a * rng.uniform(0.3, 0.85)).astype(np.float32)[..., None]
    image[:] = np.clip(image + (255 - image.astype(np.float32)) * a, 0, 255).astype(np.uint8)


# How much of the card's middle, where its symbols lie (MIDDLE), an occluder hides for the
# card to count as hidden: a few percent already takes a symbol's end or a third symbol;
# less may be a speck. At most HIDDEN_MOST of the whole card: more is rarely still found.
HIDDEN = (0.08, 0.7)
HIDDEN_MOST = 0.6
# The card's middle, as shares of its long and its short side (render.draw_card puts the
# symbols there).
MIDDLE = ((0.12, 0.88), (0.18, 0.82))


def _middle(corners: np.ndarray) -> np.ndarray:
    """The quadrilateral MIDDLE of a card whose corners go round from the start of a long side."""
    (u0, u1), (v0, v1) = MIDDLE
    c0, c1, c2, c3 = corners
    points = [
        (1 - v) * ((1 - u) * c0 + u * c1) + v * ((1 - u) * c3 + u * c2)
        for u, v in ((u0, v0), (u1, v0), (u1, v1), (u0, v1))
    ]
    return np.array(points)


def cover(
    image: np.ndarray,
    rng: np.random.Generator,
    card: np.ndarray,
    corners: np.ndarray,
    kinds: tuple[str, ...] = ("blot", "blot", "hand", "card"),
) -> float:
    """Something opaque over part of the card whose mask in `image` is `card` (corners
    `corners`, going round from the start of a long side), of one of `kinds`: a blot (a
    cup, a phone, a dark or coloured thing), a hand's fingers, or another card. Drawn only
    where it hides a share of the card's middle within HIDDEN (and of the whole card at
    most HIDDEN_MOST), tried a few times; the share of the middle hidden, or 0 where
    nothing was drawn."""
    height, width = image.shape[:2]
    centre = corners.mean(axis=0)
    long_ = float(np.linalg.norm(corners[0] - corners[1]))
    inside = max(int(np.count_nonzero(card)), 1)
    middle = np.zeros((height, width), np.uint8)
    cv2.fillConvexPoly(middle, _middle(corners).astype(np.int32), 255)
    in_middle = max(int(np.count_nonzero(middle)), 1)
    for _ in range(8):
        kind = rng.choice(kinds)
        mask: np.ndarray = np.zeros((height, width), np.uint8)
        where = centre + rng.normal(0, long_ * 0.35, 2)
        if kind == "blot":
            picture = np.empty((height, width, 3), np.float32)
            dark = rng.random() < 0.7
            picture[:] = rng.uniform(10, 90, 3) if dark else rng.uniform(0, 230, 3)
            picture += rng.normal(0, rng.uniform(1, 10), (height, width, 3))
            r = long_ * rng.uniform(0.06, 0.5)
            if rng.random() < 0.5:
                axes = (int(r), int(r * rng.uniform(0.4, 1)))
                cv2.ellipse(mask, where.astype(int), axes, rng.uniform(0, 180), 0, 360, 255, -1)
            else:
                k = int(rng.integers(3, 8))
                a = np.sort(rng.uniform(0, 2 * math.pi, k))
                radii = r * rng.uniform(0.5, 1.3, k)
                poly = where + np.stack([radii * np.cos(a), radii * np.sin(a)], 1)
                cv2.fillPoly(mask, [poly.astype(np.int32)], 255, cv2.LINE_AA)
        elif kind == "hand":
            s = long_ * rng.uniform(0.4, 0.9)
            hand_picture, hand_mask = hand(rng, s)
            turn = cv2.getRotationMatrix2D((s, s), rng.uniform(0, 360), 1)
            turn[:, 2] += where - s
            picture = cv2.warpAffine(hand_picture, turn, (width, height)).astype(np.float32)
            mask = cv2.warpAffine(hand_mask, turn, (width, height))
        else:
            other = all_faces()[int(rng.integers(81))]
            size = (220, 140)
            # Its middle beyond `where`, away from the card's: it lies over one side.
            on = _quad(
                where + (where - centre) * 0.8 + rng.normal(0, long_ * 0.3, 2),
                (long_, long_ / CARD_MM[0] * CARD_MM[1]),
                rng.uniform(0, math.pi),
                rng,
                0,
            )
            drawn = draw_card(other, size, rng=rng, paper=paper_colour(rng, 225, 252))
            scratch = np.zeros_like(image)
            mask = _paste(scratch, drawn, _rounded_card_mask(size, size[0] * 0.04), on)
            picture = scratch.astype(np.float32)
        over = mask > 127
        hidden = np.count_nonzero(over & (middle > 0)) / in_middle
        most = np.count_nonzero(over & (card > 127)) / inside
        if HIDDEN[0] <= hidden <= HIDDEN[1] and most <= HIDDEN_MOST:
            _shadow(image, mask, rng, rng.uniform(0.1, 0.4), reach=int(max(2, long_ * 0.04)))
            _blend(image, mask, picture)
            return hidden
    return 0.0


def motion_blur(image: np.ndarray, rng: np.random.Generator, length: float) -> np.ndarray:
    """The camera or the table moving while the shutter is open: a blur along a line."""
    n = max(3, int(length) | 1)
    line = np.zeros((n, n), np.float32)
    line[n // 2, :] = 1 / n
    rot = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), rng.uniform(0, 180), 1)
    turned = cv2.warpAffine(line, rot, (n, n))
    kernel = (turned / max(float(turned.sum()), 1e-6)).astype(np.float32)
    blurred: np.ndarray = cv2.filter2D(image, -1, kernel)
    return blurred


def exposed(image: np.ndarray, stops: float) -> np.ndarray:
    """`image` (8-bit sRGB) as the camera would have recorded it exposed `stops` more (or
    less): scaled in linear light, what passes the sensor's top clipped there."""
    x = image.astype(np.float32) / 255
    linear = np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
    linear = np.minimum(linear * 2.0**stops, 1.0)
    srgb = np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)
    out: np.ndarray = (srgb * 255 + 0.5).astype(np.uint8)
    return out


def camera(image: np.ndarray, rng: np.random.Generator, dim: bool = False) -> np.ndarray:
    """Blur, sensor noise and JPEG: what the camera and its encoder do."""
    sigma = rng.uniform(0, 1.3)
    if sigma > 0.3:
        image = cv2.GaussianBlur(image, (0, 0), sigma)
    noise = rng.uniform(1, 7 if dim else 4)
    image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
    quality = int(rng.integers(40, 95))
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    decoded = cv2.imdecode(data, cv2.IMREAD_COLOR)
    assert ok and decoded is not None
    return decoded


def render_table(
    faces: list[Face],
    rng: np.random.Generator,
    size: tuple[int, int] = (1280, 960),
    distractors: tuple[str, ...] = (),
    over_cards: tuple[str, ...] = (),
    top: str | None = None,
    light: str | None = None,
    card_px: float | None = None,
    touching: bool = False,
    shade: float = 0.0,
    shade_tint: float = 0.0,
) -> Table:
    """A table with `faces` laid out in a grid (columns of three... as players deal them),
    each tilted a little; `distractors` lie beside the cards, `over_cards` ("hand") lie over
    one of them; `touching` lays the cards square, edge to edge; `shade` darkens one side
    of a line across the layout by that share (a hand's or a lamp's shadow, its edge soft),
    and `shade_tint` makes that side's light warmer by that share (a lamp's shadow lit by
    the room's light: blue darkened more, red less). A frame's edge across the cards is
    the tests' to make: cut the image (`Placed.ink` says where each card's symbols lie)."""
    width, height = size
    image = table_top(rng, size, top)
    n = len(faces)
    cols = max(1, math.ceil(n / 3)) if n > 3 else n
    rows = max(1, math.ceil(n / max(cols, 1)))
    # The card's long side, in pixels: the layout fills some 60-85 % of the frame.
    if card_px is None:
        card_px = (
            min(
                width * rng.uniform(0.6, 0.85) / (cols * 0.72 + 0.1),
                height * rng.uniform(0.6, 0.85) / (rows * 1.15 + 0.1),
            )
            if n
            else width * 0.15
        )
    portrait = rng.random() < 0.5  # the cards' long side across the layout's rows or down
    long_, short = card_px, card_px * CARD_MM[1] / CARD_MM[0]
    cell = (short * 1.25, long_ * 1.12) if portrait else (long_ * 1.12, short * 1.3)
    if touching:
        cell = (short * 1.01, long_ * 1.01) if portrait else (long_ * 1.01, short * 1.01)
    if not portrait:
        cols, rows = rows, cols
        cols = max(1, math.ceil(n / 3)) if n > 3 else n
        rows = max(1, math.ceil(n / cols)) if n else 1
    origin = np.array([width / 2 - (cols - 1) * cell[0] / 2, height / 2 - (rows - 1) * cell[1] / 2])
    origin += rng.uniform(-0.05, 0.05, 2) * (width, height)
    layout_angle = rng.normal(0, 0.08)
    tilt = 0.0 if touching else rng.uniform(-0.25, 0.25)  # a tilted grid's cards overlap
    table = Table(image)
    masks = []
    for i, face in enumerate(faces):
        r, c = divmod(i, cols)
        jitter = 0.0 if touching else 1.0
        step = np.array([c * cell[0], r * cell[1]])
        if touching:  # the grid turned with the cards, or they would overlap
            cos, sin = math.cos(layout_angle), math.sin(layout_angle)
            step = np.array([[cos, -sin], [sin, cos]]) @ step
        centre = origin + step
        centre += rng.normal(0, card_px * 0.03, 2) * jitter
        angle = layout_angle + rng.normal(0, 0.05) * jitter + (math.pi / 2 if portrait else 0)
        if rng.random() < 0.5:
            angle += math.pi  # a card upside down reads the same
        corners = _quad(centre, (long_, short), angle, rng, tilt)
        paper = paper_colour(rng, 232, 252)
        picture = draw_card(face, (356, 228), rng=rng, paper=paper)
        mask = _rounded_card_mask((356, 228), 356 * 0.04)
        # A card lying flat casts a thin shadow: edge to edge, the seam it leaves is faint.
        reach = 1 if touching else 6
        _shadow(image, _mask_of(mask, corners, image.shape), rng, rng.uniform(0.1, 0.35), reach)
        pasted = _paste(image, picture, mask, corners)
        masks.append(pasted > 127)
        inside = np.all((corners >= 0) & (corners < (width, height)))
        table.cards.append(Placed(face, corners, 1.0, not inside, _ink_of(picture, paper, corners)))
    occluders = np.zeros(image.shape[:2], np.uint8)
    for kind in distractors:
        occluders |= _distractor(image, kind, rng, card_px, table)
        table.distractors.append(kind)
    for kind in over_cards:
        if not table.cards:
            break
        target = table.cards[int(rng.integers(len(table.cards)))]
        centre = target.corners.mean(axis=0) + rng.normal(0, card_px * 0.15, 2)
        picture, mask = hand(rng, card_px * rng.uniform(0.45, 0.7))
        h, w = mask.shape
        angle = rng.uniform(0, 2 * math.pi)
        corners = _quad(centre, (w, h), angle, rng, 0)
        occluders |= _paste(image, picture, mask, corners) > 60
        table.distractors.append(kind)
    for placed, mask in zip(table.cards, masks, strict=True):
        area = mask.sum()
        if area:
            placed.visible = float((mask & ~occluders.astype(bool)).sum() / area)
    if shade:
        middle = origin + (np.array([cols, rows]) - 1) * cell / 2
        _cast_shadow(image, rng, shade, middle, shade_tint)
    image = lighting(image, rng, light)
    table.image = camera(image, rng, dim=light == "dim")
    return table


def _cast_shadow(
    image: np.ndarray, rng: np.random.Generator, strength: float, middle: np.ndarray, tint: float
) -> None:
    """One side of a line through near `middle` darkened by `strength` (blue by `tint` more,
    red by `tint` less), its edge soft."""
    height, width = image.shape[:2]
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, 2 * math.pi)
    through = middle + rng.normal(0, 0.05, 2) * (width, height)
    side = (xx - through[0]) * math.cos(angle) + (yy - through[1]) * math.sin(angle)
    soft = 1 / (1 + np.exp(-side / rng.uniform(1, 4)))
    darker = strength * np.array([1 + tint, 1, 1 - tint], np.float32)
    image[:] = np.clip(image * (1 - darker * soft[..., None]), 0, 255).astype(np.uint8)


def _ink_of(picture: np.ndarray, paper: tuple[int, int, int], corners: np.ndarray) -> np.ndarray:
    """The corners in the image of the box around a card's ink (`picture` pasted at
    `corners`): what differs from its paper."""
    ys, xs = np.nonzero(np.abs(picture.astype(np.int16) - paper).max(axis=2) > 12)
    h, w = picture.shape[:2]
    box = np.array(
        [
            (xs.min(), ys.min()),
            (xs.max() + 1, ys.min()),
            (xs.max() + 1, ys.max() + 1),
            (xs.min(), ys.max() + 1),
        ],
        np.float32,
    )
    src = np.array([(0, 0), (w, 0), (w, h), (0, h)], np.float32)
    m = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    ink: np.ndarray = cv2.perspectiveTransform(box[None], m)[0].astype(np.float64)
    return ink


def _mask_of(mask: np.ndarray, corners: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    h, w = mask.shape
    src = np.array([(0, 0), (w, 0), (w, h), (0, h)], np.float32)
    m = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    return cv2.warpPerspective(mask, m, (shape[1], shape[0]))


def _distractor(
    image: np.ndarray, kind: str, rng: np.random.Generator, card_px: float, table: Table
) -> np.ndarray:
    """`kind` laid on the table at a free place if one is found; the mask it covers."""
    height, width = image.shape[:2]
    if kind == "cable":
        return _cable(image, rng) > 60
    if kind == "hand":
        picture, mask = hand(rng, card_px * rng.uniform(0.5, 0.8))
        dims: tuple[float, float] = (mask.shape[1], mask.shape[0])
    elif kind == "box":
        dims = (card_px * rng.uniform(1.1, 1.6), card_px * rng.uniform(0.75, 1.1))
        picture = _box_picture(rng, (int(dims[0]), int(dims[1])))
        mask = np.full(picture.shape[:2], 255, np.uint8)
    elif kind == "phone":
        dims = (card_px * rng.uniform(1.4, 1.8), card_px * rng.uniform(0.7, 0.9))
        picture, mask = _phone(rng, (int(dims[1]), int(dims[0])))
        picture, mask = np.rot90(picture).copy(), np.rot90(mask).copy()
    elif kind == "paper":
        scale = rng.uniform(0.8, 2.5)
        dims = (card_px * scale * 1.41, card_px * scale)
        picture = _paper(rng, (int(dims[0]), int(dims[1])))
        mask = np.full(picture.shape[:2], 255, np.uint8)
    else:
        raise ValueError(kind)
    placed = [p.corners for p in table.cards]
    for _ in range(30):  # a place beside the cards, as a thing lies on a table
        centre = rng.uniform(0.1, 0.9, 2) * (width, height)
        corners = _quad(centre, dims, rng.uniform(0, math.pi), rng, 0)
        if not any(_overlap(corners, q) for q in placed):
            break
    else:
        return np.zeros(image.shape[:2], bool)
    _shadow(image, _mask_of(mask, corners, image.shape), rng, rng.uniform(0.1, 0.3))
    return _paste(image, picture, mask, corners) > 60


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    (ax0, ay0), (ax1, ay1) = a.min(axis=0), a.max(axis=0)
    (bx0, by0), (bx1, by1) = b.min(axis=0), b.max(axis=0)
    return not (ax1 < bx0 or bx1 < ax0 or ay1 < by0 or by1 < ay0)
