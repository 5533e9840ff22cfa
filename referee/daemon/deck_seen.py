"""The deck counted by sight (issue 32, item 5; docs/rules.md, "The deck counted by
sight"): each of the camera's readings against the game the box keeps. Pure but for the
log: a reading and the game in, what the table is told out; the only clock is the frames'.

The cards on the table and those the SETs took give the deck left by sight. Where the box
deals (solo, solitaire) it counts the table too, and a difference is a card dropped or a
misdeal. Under every rule set a face read twice on the table, or one that a SET the camera
saw taken took, is a second deck mixed in; and so are more cards than a deck holds.

Said only of what holds, as a false alarm would teach the table to ignore the next one:
a count only of a layout read surely to the last card (a hand over the table leaves the
cards it half hides unsure, and hides others whole: a count that one hand passing makes
is never steady); only while no call waits (its caller's hands are on the cards); and
only what every reading said for STEADY_NS since the box's count last changed (after a
SET, the table is short until three cards are dealt).
"""

import logging
from collections import Counter

from referee.inbox import Seen
from referee.outputs.captions import deck_notices
from referee.rules import Calls, Phase, Settings, State
from referee.units import NS_PER_S
from referee.view import DeckSeen

log = logging.getLogger(__name__)

Faces = frozenset[tuple[int, int, int, int]]

# How long the readings must agree before the screen says what they count: a hand passes
# in a second or two, and three cards are dealt after a SET in a few; a dropped card lies
# where it fell for minutes. Longer costs nothing but the wait to see the news.
STEADY_NS = 10 * NS_PER_S
# Where the cards lie still between calls: open play, a super round's joining and countdown.
STILL = frozenset({Phase.OPEN, Phase.SUPER_JOIN, Phase.SUPER_COUNTDOWN})
# Where a caller's hands are on the cards: what was seen last stays shown.
CALLS = frozenset({Phase.CALL, Phase.SUPER_CALL})


def taken_faces(state: State) -> Faces:
    """The faces of the SETs taken in this deal that the camera saw go and read surely: a
    call judged valid keeps the cards the camera saw taken (the state's `seen`)."""
    faces: set[tuple[int, int, int, int]] = set()
    for call in reversed(state.calls):
        if call.deal != state.deal:
            break  # an official match's earlier deal: its cards are shuffled back
        if call.seen is not None and call.valid_count:
            faces.update(card.face for card in call.seen if card.sure)
    return frozenset(faces)


def counted(
    seen: Seen, settings: Settings, state: State, took: Faces | None = None
) -> DeckSeen | None:
    """What one reading says of the deck; None, nothing: it has no card (a camera
    covered, or looking away). took: taken_faces(state), if known."""
    if not seen.cards:
        return None
    sure = Counter(card.face for card in seen.cards if card.sure)
    took = taken_faces(state) if took is None else took
    return DeckSeen(
        table=len(seen.cards) if sure.total() == len(seen.cards) else None,
        taken=state.taken,
        box=state.table if settings.book.counts_cards else None,
        twice=tuple(sorted(face for face, n in sure.items() if n > 1)),
        again=tuple(sorted(face for face in sure if face in took)),
    )


class DeckSight:
    """The deck counted by sight, reading after reading: what is shown, and the log told
    once of each thing amiss."""

    def __init__(self) -> None:
        self.shown: DeckSeen | None = None  # what the readings said for STEADY_NS
        self._latest: DeckSeen | None = None  # the last reading's, while cards lie still
        self._since: int | None = None  # the first of the readings equal to it in a row
        self._told: tuple[str, ...] = ()  # what the log was told is amiss, while it is
        # taken_faces of the calls and deal it was last worked out for: a walk over the
        # calls, done again only when they change (a Calls is never changed in place).
        self._took: tuple[Calls, int, Faces] | None = None

    def reading(self, seen: Seen, settings: Settings, state: State) -> None:
        """A frame's reading (its time CLOCK_MONOTONIC, never older than the last), and the
        game as the box has it now."""
        if state.phase not in STILL or state.claim:
            self._since = None
            if state.phase not in CALLS:
                self.shown = None  # the lobby, a game over: no deck in play
            return
        if self._took is None or self._took[0] is not state.calls or self._took[1] != state.deal:
            self._took = (state.calls, state.deal, taken_faces(state))
        now = counted(seen, settings, state, self._took[2])
        if self._since is None or now != self._latest:
            self._latest, self._since = now, seen.t_ns
            return
        if seen.t_ns - self._since < STEADY_NS or now == self.shown:
            return
        self.shown = now
        said = tuple(notice.text for notice in deck_notices(now))
        for text in said:
            if text not in self._told:
                log.info("the deck by sight: %s", text)
        # Forgotten once it no longer holds, so that it is told again if it comes back;
        # a layout it cannot count leaves the count's untold.
        if said or (now is not None and now.table is not None):
            self._told = said
