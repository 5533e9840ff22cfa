"""The SET a caller takes, as the camera sees it (issue 32): the layout when the call
opened against a later one. Pure: two readings in, a claim or none out.

A caller picks up the three cards of their SET; the others stay, though a hand may nudge
them. So a later layout makes a claim when exactly three cards of the first are gone and
every other card is still there, and nothing new lies on the table. Anything else (a hand
over the cards, fewer or more gone, three new cards dealt) is no claim.

A card is still there when a card of the later layout lies at its place with its face.
**Its place**: the centres at most half the card's shorter side apart. Cards on a table do
not overlap, so two cards' centres are at least a short side apart and no other card is
that close; a nudge while a hand takes the cards next to it moves a card less. **Its
face**: the same, or either reading unsure, since an unsure reading (a finger over the
card, a glare) cannot vouch for a face, yet a card lies there. A sure reading of another
face at the place is another card: the first is gone, a new one came, and that is no
claim.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import faces
from .inbox import SeenCard

SET = 3


@dataclass(frozen=True, slots=True)
class Claim:
    """The three cards taken, as read before they were taken."""

    cards: tuple[SeenCard, SeenCard, SeenCard]

    @property
    def sure(self) -> bool:
        """All three read surely: only such a claim is ever a verdict."""
        return all(card.sure for card in self.cards)

    @property
    def why_not(self) -> str | None:
        """None for a SET; else the attributes that are two and one, in words."""
        return faces.why_not(*(card.face for card in self.cards))

    @property
    def verdict(self) -> bool | None:
        """Whether the three are a SET; None (the box cannot see) unless all are sure."""
        return self.why_not is None if self.sure else None


def _centre(card: SeenCard) -> tuple[float, float]:
    x, y, w, h = card.box
    return x + w / 2, y + h / 2


def _same_card(before: SeenCard, after: SeenCard) -> float | None:
    """How far the card moved, if `after` may be `before` where it now lies; else None."""
    (bx, by), (ax, ay) = _centre(before), _centre(after)
    moved = math.hypot(ax - bx, ay - by)
    if moved > min(before.box[2], before.box[3]) / 2:
        return None
    if before.sure and after.sure and before.face != after.face:
        return None
    return moved


def taken(before: Sequence[SeenCard], after: Sequence[SeenCard]) -> Claim | None:
    """The claim `after` shows against `before`, or None when it shows none."""
    if len(before) - len(after) != SET:
        return None  # cheap, and most frames while a call waits: nothing taken yet
    pairs = sorted(
        (moved, i, j)
        for i, b in enumerate(before)
        for j, a in enumerate(after)
        if (moved := _same_card(b, a)) is not None
    )
    # Nearest first: a card nudged towards its neighbour's place is still matched to its
    # own, which is nearer (the neighbour's is at least a short side away).
    stayed: set[int] = set()
    found: set[int] = set()
    for _, i, j in pairs:
        if i not in stayed and j not in found:
            stayed.add(i)
            found.add(j)
    if len(found) != len(after):
        return None  # a card that was not there: dealt, or a hand read as one
    gone = [card for i, card in enumerate(before) if i not in stayed]
    return Claim((gone[0], gone[1], gone[2]))
