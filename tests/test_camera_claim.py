"""The claim the loop follows (daemon/watching.py): the layout when the call opened, the
three cards gone twice in a row, shown, and its input to enter once the buttons are
decided past its frame: with `judge = "decide"` a verdict, else only the cards seen
(docs/rules.md, "The camera"). The camera's process is not started: the readings are
handed in as the loop's inbox would."""

import pytest

from referee.config import CameraConfig, CameraJudge
from referee.daemon.watching import Watching
from referee.inbox import Inbox, Seen, SeenCard
from referee.outputs import captions
from referee.rules import CameraVerdict, Card
from referee.rules import Seen as SeenTaken
from referee.units import NS_PER_S

S = NS_PER_S
# A SET (1, 2, 3 red solid ovals), a non-SET (two red, one green), and six others.
SET = [(0, 0, 0, 1), (1, 0, 0, 1), (2, 0, 0, 1)]
NOT_SET = [(0, 1, 1, 1), (1, 1, 1, 1), (2, 2, 1, 1)]
OTHERS = [(0, 2, 2, 2), (1, 2, 0, 0), (2, 1, 2, 0), (1, 1, 0, 2), (0, 2, 1, 0), (2, 2, 2, 1)]
LAYOUT = [*SET, *NOT_SET, *OTHERS]


def entered(faces, *, unsure=()):
    """The three cards as the ledger's input keeps them."""
    first, second, third = (Card(face, face not in unsure) for face in faces)
    return first, second, third


def cards(faces, *, unsure=(), nudge=0) -> tuple[SeenCard, ...]:
    return tuple(
        SeenCard(
            face, face not in unsure, (40 + 140 * (i % 6) + nudge, 30 + 200 * (i // 6), 100, 150)
        )
        for i, face in enumerate(LAYOUT)
        if face in faces
    )


def seen(t_s: float, faces, **how) -> Seen:
    return Seen(int(t_s * S), cards(faces, **how), ())


@pytest.fixture
def watching(monkeypatch):
    monkeypatch.setattr(Watching, "watching", property(lambda self: True))
    made = []

    def make(judge: CameraJudge) -> Watching:
        inbox = Inbox()
        made.append(inbox)
        return Watching(CameraConfig("off", judge), inbox)

    yield make
    for inbox in made:
        inbox.close()


def said(w: Watching) -> str | None:
    table = w.view()
    assert table is not None
    return None if table.claim is None else captions.claim_seen(table.claim)


def taken_twice(w: Watching, three, *, call=10 * S, **how) -> None:
    """The layout before the press at 10 s, three taken, seen twice in a row."""
    w.seen(seen(9.5, LAYOUT, **how), None)
    w.seen(seen(10, LAYOUT, **how), call)
    rest = [f for f in LAYOUT if f not in three]
    w.seen(seen(11, rest, nudge=8, **how), call)
    assert said(w) is None  # once: a hand may be passing
    w.seen(seen(11.5, rest, nudge=12, **how), call)


def test_a_set_taken_is_shown_and_only_shown(watching):
    w = watching(CameraJudge.SHOW)
    taken_twice(w, SET)
    assert said(w) == "SET · 1 red solid oval, 2 red solid ovals, 3 red solid ovals"
    assert w.entry_ns == int(11.5 * S)
    assert w.entry(20 * S, 10 * S) == SeenTaken(entered(SET), int(11.5 * S))
    assert w.entry(21 * S, 10 * S) is None and w.entry_ns is None  # one input a call


def test_a_non_set_taken_says_why_and_what_confirms_it_when_proposed(watching):
    w = watching(CameraJudge.PROPOSE)
    taken_twice(w, NOT_SET)
    assert said(w) == (
        "not a SET: two green, one purple (INVALID to confirm) · 1 green striped oval,"
        " 2 green striped ovals, 3 purple striped ovals"
    )
    assert w.entry(20 * S, 10 * S) == SeenTaken(entered(NOT_SET), int(11.5 * S))


def test_decide_enters_the_verdict_once_the_buttons_are_decided_past_its_frame(watching):
    w = watching(CameraJudge.DECIDE)
    taken_twice(w, NOT_SET)
    assert w.entry_ns == int(11.5 * S)
    assert w.entry(11 * S, 10 * S) is None  # a press before the frame may still come
    assert w.entry(12 * S, 10 * S) == CameraVerdict(False, int(11.5 * S), entered(NOT_SET))
    assert w.entry(13 * S, 10 * S) is None  # entered once
    # Its call waits again (an UNDO of the verdict): the claim is not entered again.
    w.seen(seen(14, [f for f in LAYOUT if f not in NOT_SET]), 10 * S)
    assert w.entry_ns is None and said(w) is not None


@pytest.mark.parametrize("judge", list(CameraJudge))
def test_nothing_entered_once_the_judges_were_quicker(watching, judge):
    w = watching(judge)
    taken_twice(w, SET)
    assert w.entry(12 * S, None) is None and w.entry_ns is None


def test_an_unsure_card_taken_is_never_a_verdict(watching):
    w = watching(CameraJudge.DECIDE)
    taken_twice(w, SET, unsure=[SET[1]])
    assert said(w) == "the camera cannot see the claim"
    # Only what it saw, the unsure card marked.
    assert w.entry(12 * S, 10 * S) == SeenTaken(entered(SET, unsure=[SET[1]]), int(11.5 * S))


def test_a_hand_passing_over_three_cards_is_no_claim(watching):
    w = watching(CameraJudge.DECIDE)
    w.seen(seen(9.5, LAYOUT), None)
    rest = [f for f in LAYOUT if f not in OTHERS[:3]]
    w.seen(seen(11, rest), 10 * S)
    w.seen(seen(11.5, [f for f in LAYOUT if f not in OTHERS[2:5]]), 10 * S)
    w.seen(seen(12, LAYOUT), 10 * S)
    assert said(w) is None and w.entry_ns is None


def test_the_claim_stays_shown_until_cards_are_dealt_in_its_place(watching):
    w = watching(CameraJudge.SHOW)
    taken_twice(w, SET)
    rest = [f for f in LAYOUT if f not in SET]
    w.seen(seen(13, rest), None)  # judged: the table still shows it
    assert said(w) is not None
    w.seen(seen(14, LAYOUT), None)  # three cards dealt in their places
    assert said(w) is None


def test_a_call_opened_before_the_camera_read_the_table_has_no_claim(watching):
    w = watching(CameraJudge.DECIDE)
    rest = [f for f in LAYOUT if f not in SET]
    for t in (11, 11.5, 12):
        w.seen(seen(t, rest), 10 * S)
    assert said(w) is None
