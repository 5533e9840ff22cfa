"""A SET card as the camera reads it: its four attributes, where it lies, how sure."""

import math
from dataclasses import dataclass, replace

from referee.faces import COLORS, NUMBERS, SHADINGS, SHAPES, words


@dataclass(frozen=True)
class Face:
    """What is printed on a card: one of the 81."""

    number: int
    color: str
    shading: str
    shape: str

    def values(self) -> tuple[int, int, int, int]:
        """Each attribute as 0, 1 or 2, in referee/faces.py's ATTRIBUTES' order."""
        return (
            NUMBERS.index(self.number),
            COLORS.index(self.color),
            SHADINGS.index(self.shading),
            SHAPES.index(self.shape),
        )

    @classmethod
    def of(cls, values: tuple[int, ...]) -> "Face":
        n, c, s, p = values
        return cls(NUMBERS[n], COLORS[c], SHADINGS[s], SHAPES[p])

    def __str__(self) -> str:
        return words(self.values())


def all_faces() -> list[Face]:
    """The deck: every card once."""
    return [
        Face.of((n, c, s, p))
        for n in range(3)
        for c in range(3)
        for s in range(3)
        for p in range(3)
    ]


@dataclass(frozen=True)
class Card:
    """A card found in a frame. `face` is the most likely reading, `confidence` each
    attribute's probability in ATTRIBUTES' order; `sure` is False when any attribute is not
    sure, or the card is partly hidden or cut by the frame's edge (`why` says which): such
    a card is shown, never used for a verdict. `box` is x, y, width, height in the image's
    pixels (`scaled`: a photo's own, where it was read shrunk); `corners` the card's four
    corners there (x, y)."""

    face: Face
    confidence: tuple[float, float, float, float]
    sure: bool
    box: tuple[int, int, int, int]
    corners: tuple[tuple[float, float], ...]
    why: str = ""

    def as_json(self) -> dict[str, object]:
        return {
            "number": self.face.number,
            "color": self.face.color,
            "shading": self.face.shading,
            "shape": self.face.shape,
            "box": list(self.box),
            "sure": self.sure,
            "confidence": [round(p, 3) for p in self.confidence],
            **({"why": self.why} if self.why else {}),
        }

    def scaled(self, across: float, down: float) -> "Card":
        """The same card in an image `across` and `down` times as large: its box still
        holds the whole card."""
        x, y, w, h = self.box
        x0, y0 = math.floor(x * across), math.floor(y * down)
        x1, y1 = math.ceil((x + w) * across), math.ceil((y + h) * down)
        corners = tuple((cx * across, cy * down) for cx, cy in self.corners)
        return replace(self, box=(x0, y0, x1 - x0, y1 - y0), corners=corners)
