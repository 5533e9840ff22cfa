"""A frame read whole: every card found, read, and the SETs among those read surely."""

from dataclasses import dataclass

import numpy as np

from . import classify
from .card import Card
from .find_cards import find_cards
from .sets import find_sets


@dataclass(frozen=True)
class Layout:
    """The cards in a frame, in reading order (top to bottom, then left to right), and every
    SET among the sure ones, by index into `cards`."""

    cards: tuple[Card, ...]
    sets: tuple[tuple[int, int, int], ...]

    def as_json(self) -> dict[str, object]:
        return {"cards": [c.as_json() for c in self.cards], "sets": [list(s) for s in self.sets]}

    def scaled(self, across: float, down: float) -> "Layout":
        """The same cards, where they lie in an image `across` and `down` times as large
        (a photo's own pixels, where it was read shrunk)."""
        return Layout(tuple(card.scaled(across, down) for card in self.cards), self.sets)


def read_frame(image: np.ndarray) -> Layout:
    """Every card in `image` (BGR), read."""
    found = find_cards(image)
    readings = classify.read([f.flat for f in found])
    cards = []
    for f, r in zip(found, readings, strict=True):
        if r.card < classify.IS_A_CARD and f.whole:
            continue  # shaped like a card, but the network sees something else
        # Stripes seen are stripes; none seen on blown paper may be stripes the light took.
        too_bright = r.face.shading == "open" and classify.blown(f.flat)
        sure = f.whole and r.sure and not too_bright
        why = f.why or ("" if r.sure else _unsure(r))
        why = why or (TOO_BRIGHT if too_bright else "")
        x0, y0 = np.floor(f.corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(f.corners.max(axis=0)).astype(int)
        height, width = image.shape[:2]
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(width, x1), min(height, y1)
        cards.append(
            Card(
                face=r.face,
                confidence=r.confidence,
                sure=sure,
                box=(int(x0), int(y0), int(x1 - x0), int(y1 - y0)),
                corners=tuple((float(x), float(y)) for x, y in f.corners),
                why=why,
            )
        )
    cards = _reading_order(cards)
    sets = find_sets([c.face if c.sure else None for c in cards])
    return Layout(tuple(cards), tuple(sets))


# A card read open on paper blown white (classify.blown): its stripes may be what the
# light took.
TOO_BRIGHT = "too bright: its paper is blown white"


def _unsure(r: classify.Reading) -> str:
    names = ("number", "color", "shading", "shape")
    doubtful = [n for n, p in zip(names, r.confidence, strict=True) if p < classify.SURE]
    if r.card < classify.IS_A_CARD:
        return "may not be a card"
    return "not sure of its " + ", ".join(doubtful)


def _reading_order(cards: list[Card]) -> list[Card]:
    """Rows top to bottom (a card joins the row whose first card's middle is within half a
    card's height of its own), each left to right."""
    if not cards:
        return cards
    half = float(np.median([c.box[3] for c in cards])) / 2
    rows: list[list[Card]] = []
    for card in sorted(cards, key=lambda c: c.box[1] + c.box[3] / 2):
        middle = card.box[1] + card.box[3] / 2
        if rows and middle - (rows[-1][0].box[1] + rows[-1][0].box[3] / 2) <= half:
            rows[-1].append(card)
        else:
            rows.append([card])
    return [c for row in rows for c in sorted(row, key=lambda c: c.box[0])]
