"""The camera's work for the main loop: what it sees, whether it watches, and the SET a
caller takes (docs/design.md, "The camera's eyes"; docs/rules.md, "The camera").

The frames are read in a process of its own (camera/process.py); the loop takes each
reading (inbox.Seen) as counts, in O(cards), and shows them. While a call waits, each
reading is compared with the layout when it opened (claim.py); the claim, once seen, is
shown, and its input (`seen`, or with `[camera] judge = "decide"` the camera's verdict)
waits here until the buttons are decided past its frame, for the loop to enter. With the
camera off nothing of it is imported and no process runs.

A table may ask whether the layout read last holds a SET (`hint`, docs/rules.md, "Is there
a SET?"): advice from the latest reading, never an input of the rules. A no-SET claim in
solo or solitaire is checked from the reading at it (`check`): with `[camera] judge =
"decide"`, the camera's verdict on it. Each reading also counts the deck by sight against
the box's game (deck_seen.py).

At each call's first press the camera's process is told to write the call's snapshot
beside its clip (`snap`; camera/snapshot.py), while clips may be kept.

Where the box has no camera of its own (`source = "off"`), the phones' photos are its
camera (`phone`, docs/web.md, "Photo"): the camera's process is started on their folder at
the first, so that OpenCV's memory is spent only once a phone is used. The page asks what
the camera reads (`table`): the latest reading, and the hint asked of it.
"""

import logging
import sys
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from referee.claim import Claim, taken
from referee.config import CameraConfig, CameraJudge
from referee.inbox import Inbox, Seen, Unread
from referee.outputs.captions import cards_seen
from referee.rules import CameraVerdict, Card, Input, Settings, State
from referee.rules import Seen as SeenTaken
from referee.units import NS_PER_S
from referee.view import ClaimSeen, TableSeen

from .deck_seen import DeckSight

if TYPE_CHECKING:
    from referee.audio.clips import ClipStore
    from referee.camera.process import CameraProcess

    from .session import Session

log = logging.getLogger(__name__)

# The readings kept to find the layout when a call opened: the call is known to the loop
# within milliseconds of its press, so a few seconds of readings hold it with room.
KEPT_NS = 10 * NS_PER_S
# A hint asked again within this long shows where the SET is ([camera] hint_where): time
# for a second press or tap, short enough that a later question is a new one.
HINT_AGAIN_NS = 5 * NS_PER_S
# The oldest reading that checks a no-SET claim (docs/rules.md, "The camera"): the camera
# reads two frames a second (docs/design.md), so an older one means it missed three; and
# the table 2 s before a claim may be one a SET has left since, not the one looked at.
CHECK_NS = 2 * NS_PER_S


class Watching:
    """The camera's process while [camera] source is not off, its latest reading, and
    the claim of the call being judged."""

    def __init__(
        self,
        camera: CameraConfig,
        inbox: Inbox,
        clips: "ClipStore | None" = None,
        started_ns: int = 0,
    ) -> None:
        """clips: where each call's snapshot is written, in their budget (none if 0);
        started_ns: when the daemon started (CLOCK_MONOTONIC), where a resumed game's
        last input lies: a call pressed before has its snapshot from then, or none."""
        self._process: CameraProcess | None = None
        self._started_ns = started_ns
        self._snapped: set[tuple[int, int]] = set()  # (game, call): asked, this game's
        self._judge, self._where = camera.judge, camera.hint_where
        self._hinted_ns: int | None = None  # when a hint was last asked
        self._seen: deque[Seen] = deque()  # the last KEPT_NS of readings, oldest first
        self._table: TableSeen | None = None
        self._call_ns: int | None = None  # the first press of the call followed
        self._before: Seen | None = None  # the layout when it opened
        self._maybe: Claim | None = None  # a claim seen once: a hand may be passing
        self._claim: Claim | None = None  # a claim seen twice in a row
        self._entry: Input | None = None  # the claim's input, at its frame's time, to enter
        self._deck = DeckSight()
        self._put = inbox.put
        self._phones = False  # the camera's process reads the phones' photos
        # The hint asked of the latest reading: its time, the words, whether they said where.
        self._asked: tuple[int, str, bool] | None = None
        self._unread: Unread | None = None  # the last frame that could not be read
        # Where each call's snapshot goes, the box's camera's or the phones' (each process is
        # started with it): none while clips may not be kept.
        self._snapshots_kept: tuple[Path, int] | None = None
        if clips is not None and clips.max_bytes > 0:
            self._snapshots_kept = (clips.folder, clips.max_bytes)
        if camera.source != "off":
            # Imported here: the camera's wire alone, neither OpenCV nor numpy.
            from referee.camera import process

            self._process = process.CameraProcess(
                camera.source, inbox.put, snapshots=self._snapshots_kept
            )

    @property
    def watching(self) -> bool:
        """The camera gives frames now: the screens show its mark."""
        return self._process is not None and self._process.watching

    def seen(
        self, seen: Seen, call_ns: int | None, game: tuple[Settings, State] | None = None
    ) -> None:
        """A frame's reading; one older than the last (a process started again) is not.
        call_ns: the first press of the call waiting for its verdict, if one does
        (CLOCK_MONOTONIC, as the frames' times). game: the box's, to count the deck by
        sight against (deck_seen.py)."""
        if self._seen and seen.t_ns < self._seen[-1].t_ns:
            return
        self._seen.append(seen)
        while seen.t_ns - self._seen[0].t_ns > KEPT_NS:
            self._seen.popleft()
        self._follow(seen, call_ns)
        if game is not None:
            self._deck.reading(seen, *game)
        sure = sum(card.sure for card in seen.cards)
        claim = (
            None
            if self._claim is None
            else ClaimSeen(self._claim, self._judge is CameraJudge.PROPOSE)
        )
        self._table = TableSeen(len(seen.cards), sure, len(seen.sets), claim, self._deck.shown)

    def _follow(self, seen: Seen, call_ns: int | None) -> None:
        if call_ns is None:
            # Shown after its verdict while the table still shows it: until cards are
            # dealt in its place, or put back.
            if self._before is not None and taken(self._before.cards, seen.cards) != self._claim:
                self._claim = None
            return
        if call_ns != self._call_ns:
            self._call_ns, self._maybe, self._claim = call_ns, None, None
            self._before = next((s for s in reversed(self._seen) if s.t_ns <= call_ns), None)
        if self._claim is not None or self._before is None:
            return  # one claim a call: an UNDO of its verdict does not bring it back
        claim = taken(self._before.cards, seen.cards)
        if claim is None or claim != self._maybe:
            # Twice in a row: a hand moving over the table hides cards for a frame, the
            # cards a caller took stay gone.
            self._maybe = claim
            return
        self._claim = claim
        said = "SET" if claim.why_not is None else f"not a SET: {claim.why_not}"
        log.info("the camera sees the claim: %s (%s)", said, "sure" if claim.sure else "unsure")
        first, second, third = (Card(card.face, card.sure) for card in claim.cards)
        cards = (first, second, third)
        if self._judge is CameraJudge.DECIDE and claim.verdict is not None:
            self._entry = CameraVerdict(claim.verdict, seen.t_ns, cards)
        else:
            self._entry = SeenTaken(cards, seen.t_ns)

    def snap(self, session: "Session") -> None:
        """The snapshot of the call under way asked of the camera's process, once a call
        (an UNDO that brings it back asks for none: the camera has moved on since)."""
        call = session.state.pending
        if self._process is None or call is None or self._snapshots_kept is None:
            return
        first_ns = session.mono_ns(call.first_ns)
        if first_ns <= self._started_ns:  # a resumed call: the camera did not see its press
            return
        game = session.ledger.game_id
        if (game, call.first_ns) in self._snapped:
            return
        if any(g != game for g, _ in self._snapped):
            self._snapped.clear()
        self._snapped.add((game, call.first_ns))
        from referee.audio.clips import clip_name

        self._process.snap(clip_name(game, call.first_ns), first_ns)

    def hint(self, t_ns: int) -> str:
        """Whether the layout read last holds a SET, in words for the table. A SET among
        the sure cards is one whatever the unsure ones are; none is said only of a layout
        read surely to the last card. Asked again within HINT_AGAIN_NS, with [camera]
        hint_where, where it is. t_ns: when it was asked (CLOCK_MONOTONIC)."""
        again = self._hinted_ns is not None and t_ns - self._hinted_ns <= HINT_AGAIN_NS
        self._hinted_ns = t_ns
        said = self._hint(again)
        if self.watching and self._seen:  # for the page: what was said of that reading
            self._asked = (self._seen[-1].t_ns, said, again and self._where)
        return said

    def _hint(self, again: bool) -> str:
        if not self.watching:
            return "no camera watches the table: no hint"
        if not self._seen or not self._seen[-1].cards:
            return "the camera sees no card"
        seen = self._seen[-1]
        if seen.sets:
            return "there is a SET" + (_where(seen) if again and self._where else "")
        if unsure := _unsure(seen):
            return f"the camera cannot tell: {unsure}"
        return f"there is no SET in these {len(seen.cards)}: deal three more"

    def check(self, claim_ns: int, *, judged: bool) -> tuple[str | None, CameraVerdict | None]:
        """The camera's check of a no-SET claim (solo, solitaire) made at claim_ns
        (CLOCK_MONOTONIC), from its latest reading at or before it, CHECK_NS old at most:
        what the screen says (None: no camera watches), and with [camera] judge = "decide"
        the verdict to enter (docs/rules.md, "The camera"). A SET among the sure cards
        makes the claim wrong whatever the unsure ones are, as for a hint; none makes it
        right only in a layout read surely to the last card. judged: the judges judge the
        claim (solo), so a proposal names the press that confirms it."""
        if not self.watching:
            return None, None
        seen = next((s for s in reversed(self._seen) if s.t_ns <= claim_ns), None)
        if seen is None or claim_ns - seen.t_ns > CHECK_NS or not seen.cards:
            return "the camera cannot check the claim: it did not see the table then", None
        if seen.sets:
            right, said = False, "the camera sees a SET" + (_where(seen) if self._where else "")
        elif unsure := _unsure(seen):
            return f"the camera cannot check the claim: {unsure}", None
        else:
            right, said = True, f"the camera sees no SET in these {len(seen.cards)}"
        if self._judge is CameraJudge.DECIDE:
            return said, CameraVerdict(right, claim_ns)
        if self._judge is CameraJudge.PROPOSE and judged:
            return f"{said} · {'VALID' if right else 'INVALID'} to confirm", None
        return said, None

    @property
    def entry_ns(self) -> int | None:
        """The frame's time of a claim waiting to be entered (CLOCK_MONOTONIC)."""
        return None if self._entry is None else self._entry.t_ns

    def entry(self, decided_ns: int, call_ns: int | None) -> Input | None:
        """The claim's input, stamped with its frame's time (CLOCK_MONOTONIC), once the
        buttons are decided up to it (decided_ns), so that it takes its place among them;
        none when its call no longer waits (the judges were quicker): one input a call."""
        entry = self._entry
        if entry is None or (call_ns == self._call_ns and decided_ns < entry.t_ns):
            return None
        self._entry = None
        return entry if call_ns == self._call_ns else None

    def view(self) -> TableSeen | None:
        """What the camera sees, while it watches."""
        return self._table if self.watching else None

    def phone(self, folder: Path) -> str | None:
        """A phone's photo is coming to `folder` (paths.phone_path): where the box has no
        camera of its own, the phones' photos are its camera, read by the camera's process
        started now if it is not yet; else why not, in a line (two views of the table, read
        by turns, would make cards seem taken)."""
        if self._process is None:
            from referee.camera import process
            from referee.camera.wire import PHONE

            command = [sys.executable, "-m", "referee.camera.watch", PHONE, str(folder)]
            self._process = process.CameraProcess(
                str(folder),
                self._put,
                command=command,
                from_thread=True,
                snapshots=self._snapshots_kept,
            )
            self._phones = True
            log.info("a phone's photo: the phones are the camera")
        elif self._process.source != str(folder):
            source = self._process.source
            if not self.watching:  # `auto` that found none, or a camera lost: say what to do
                return (
                    f'the box looks for its own camera ([camera] source = "{source}")'
                    ' and has none now: with source = "off" the phones are its camera'
                )
            return (
                f'the box reads the table with its own camera ([camera] source = "{source}"):'
                " a phone's photo is not read"
            )
        return None

    def unread(self, unread: Unread) -> None:
        """A frame the camera's process could not read: kept for the page (`table`)."""
        self._unread = unread

    def table(self, now_ns: int) -> dict[str, object]:
        """What the camera read last, for the page (docs/web.md, "Photo"): whose camera,
        when (CLOCK_MONOTONIC) and how long ago (ms), its cards as the wire has them ([N,
        C, S, P, SURE]), and the hint asked of it, with its SET where it said where; and
        a frame it could not read since, when and why (a phone waits for its words)."""
        seen = self._seen[-1] if self._seen and self._process is not None else None
        unread = self._unread
        if unread is not None and seen is not None and seen.t_ns >= unread.t_ns:
            unread = None  # a photo read since
        asked = self._asked
        if seen is None or (asked is not None and asked[0] != seen.t_ns):
            asked = None  # said of an older reading
        where = seen is not None and asked is not None and asked[2] and seen.sets
        return {
            "camera": None if self._process is None else "phone" if self._phones else "box",
            "watching": self.watching,
            "t_ns": None if seen is None else seen.t_ns,
            "age_ms": None if seen is None else max(0, now_ns - seen.t_ns) // 1_000_000,
            "cards": [] if seen is None else [[*c.face, int(c.sure)] for c in seen.cards],
            "hint": None if asked is None else asked[1],
            "set": list(seen.sets[0]) if seen is not None and where else None,
            "unread": None if unread is None else {"t_ns": unread.t_ns, "why": unread.why},
        }

    @property
    def pid(self) -> int | None:
        """The camera's process now, if one runs (for the tests and the log)."""
        process = None if self._process is None else self._process.process
        return None if process is None else process.pid

    def close(self) -> None:
        if self._process is not None:
            self._process.close()


def _where(seen: Seen) -> str:
    """Where a SET of the reading lies, in words: " · 1 red solid oval, ..."."""
    return cards_seen(seen.cards[i].face for i in seen.sets[0])


def _unsure(seen: Seen) -> str:
    """The reading's unsure cards, counted in words ("2 cards unsure"); "" when none."""
    unsure = sum(not card.sure for card in seen.cards)
    return f"{unsure} card{'s' * (unsure > 1)} unsure" if unsure else ""
