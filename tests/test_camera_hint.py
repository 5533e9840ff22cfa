"""The hint (daemon/watching.py's `hint`; docs/rules.md, "Is there a SET?"): whether the
layout read last holds a SET, from the camera's latest reading; where it is when asked
again with `[camera] hint_where`. The check of a no-SET claim (`check`; docs/rules.md,
"The camera") from the same readings. The camera's process is not started: the readings are
handed in as the loop's inbox would."""

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee import faces
from referee.config import CameraConfig, CameraJudge
from referee.daemon.watching import CHECK_NS, HINT_AGAIN_NS, Watching
from referee.inbox import Inbox, Seen, SeenCard
from referee.rules import CameraVerdict
from referee.units import NS_PER_S
from referee.vision.card import Face
from referee.vision.sets import find_sets

S = NS_PER_S
ALL = [(n, c, s, p) for n in range(3) for c in range(3) for s in range(3) for p in range(3)]
# 1, 2, 3 red solid ovals: a SET; with cards that make none with them nor each other.
A_SET = [(0, 0, 0, 1), (1, 0, 0, 1), (2, 0, 0, 1)]
NO_SET = [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0), (0, 0, 1, 1)]


def reading(t_s: float, layout, unsure=()) -> Seen:
    """The camera process's reading: the SETs among the sure cards alone."""
    sure = [f not in unsure for f in layout]
    known = [Face(*(faces.ATTRIBUTES[a][1][v] for a, v in enumerate(f))) for f in layout]
    sets = find_sets([face if ok else None for face, ok in zip(known, sure, strict=True)])
    cards = tuple(
        SeenCard(f, ok, (10 * i, 0, 10, 15))
        for i, (f, ok) in enumerate(zip(layout, sure, strict=True))
    )
    return Seen(int(t_s * S), cards, tuple(sets))


@pytest.fixture
def camera(monkeypatch):
    """A Watching whose camera watches, [camera] hint_where as asked."""
    monkeypatch.setattr(Watching, "watching", property(lambda self: True))
    made = []

    def make(*, where: bool = False, judge: CameraJudge = CameraJudge.SHOW) -> Watching:
        made.append(Inbox())
        return Watching(CameraConfig("off", judge, hint_where=where), made[-1])

    yield make
    for inbox in made:
        inbox.close()


def test_a_layout_with_a_set_has_one_and_never_says_which(camera):
    w = camera()
    w.seen(reading(1, [*A_SET, (1, 1, 2, 2)]), None)
    assert w.hint(2 * S) == "there is a SET"
    assert w.hint(3 * S) == "there is a SET"  # hint_where is off: asked again, the same


def test_asked_again_soon_with_hint_where_it_says_where(camera):
    w = camera(where=True)
    w.seen(reading(1, [(1, 1, 2, 2), *A_SET]), None)
    assert w.hint(2 * S) == "there is a SET"
    where = "there is a SET · 1 red solid oval, 2 red solid ovals, 3 red solid ovals"
    assert w.hint(2 * S + HINT_AGAIN_NS) == where
    assert w.hint(3 * S + 3 * HINT_AGAIN_NS) == "there is a SET"  # too late: a new question


def test_a_layout_read_surely_without_a_set_says_deal_three_more(camera):
    w = camera()
    w.seen(reading(1, NO_SET), None)
    assert w.hint(2 * S) == "there is no SET in these 4: deal three more"


def test_unsure_cards_the_camera_cannot_tell_unless_the_sure_ones_hold_a_set(camera):
    w = camera()
    w.seen(reading(1, NO_SET, unsure=NO_SET[:1]), None)
    assert w.hint(2 * S) == "the camera cannot tell: 1 card unsure"
    w.seen(reading(2, NO_SET, unsure=NO_SET[:2]), None)
    assert w.hint(3 * S) == "the camera cannot tell: 2 cards unsure"
    w.seen(reading(3, [*A_SET, *NO_SET[2:]], unsure=NO_SET[2:]), None)
    assert w.hint(4 * S) == "there is a SET"


def test_no_camera_and_no_card(camera, monkeypatch):
    w = camera()
    assert w.hint(S) == "the camera sees no card"  # watching, nothing read yet
    w.seen(reading(1, []), None)
    assert w.hint(2 * S) == "the camera sees no card"
    monkeypatch.setattr(Watching, "watching", property(lambda self: False))
    w.seen(reading(2, A_SET), None)
    assert w.hint(3 * S) == "no camera watches the table: no hint"


@given(
    layout=st.lists(st.sampled_from(ALL), min_size=3, max_size=21, unique=True),
    unsure=st.sets(st.integers(0, 20), max_size=4),
)
def test_the_hint_is_never_wrong_about_the_cards_on_the_table(layout, unsure):
    """Whatever the unsure cards are: a SET is said only where there is one, none only
    where there is none, and the camera cannot tell only when a card is unsure."""
    unsure_faces = [layout[i] for i in unsure if i < len(layout)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Watching, "watching", property(lambda self: True))
        inbox = Inbox()
        w = Watching(CameraConfig("off"), inbox)
        w.seen(reading(1, layout, unsure=unsure_faces), None)
        said = w.hint(2 * S)
        inbox.close()
    there_is = any(faces.is_set(*three) for three in combinations(layout, 3))
    if said == "there is a SET":
        assert there_is
    elif said.startswith("there is no SET"):
        assert not there_is
    else:
        assert said.startswith("the camera cannot tell: ") and unsure_faces


def test_a_no_set_claim_is_wrong_where_the_reading_at_it_holds_a_set(camera):
    """Deciding: the camera's verdict on the claim, at the claim's time; where the SET is
    only with hint_where, as a hint tells it."""
    w = camera(judge=CameraJudge.DECIDE)
    w.seen(reading(1, [*A_SET, (1, 1, 2, 2)], unsure=[(1, 1, 2, 2)]), None)
    assert w.check(2 * S, judged=True) == ("the camera sees a SET", CameraVerdict(False, 2 * S))
    w = camera(judge=CameraJudge.DECIDE, where=True)
    w.seen(reading(1, A_SET), None)
    where = "the camera sees a SET · 1 red solid oval, 2 red solid ovals, 3 red solid ovals"
    assert w.check(2 * S, judged=True) == (where, CameraVerdict(False, 2 * S))


def test_a_no_set_claim_is_right_only_in_a_layout_read_surely_to_the_last_card(camera):
    w = camera(judge=CameraJudge.DECIDE)
    w.seen(reading(1, NO_SET), None)
    right = ("the camera sees no SET in these 4", CameraVerdict(True, 2 * S))
    assert w.check(2 * S, judged=False) == right
    w.seen(reading(2, NO_SET, unsure=NO_SET[:2]), None)
    assert w.check(3 * S, judged=False) == (
        "the camera cannot check the claim: 2 cards unsure",
        None,
    )


def test_a_no_set_claim_is_checked_from_a_reading_at_it_not_after_nor_long_before(camera):
    w = camera(judge=CameraJudge.DECIDE)
    cannot = ("the camera cannot check the claim: it did not see the table then", None)
    w.seen(reading(1, NO_SET), None)
    w.seen(reading(3.5, A_SET), None)  # after the claim: cards dealt, a hand passing
    assert w.check(2 * S, judged=True) == (
        "the camera sees no SET in these 4",
        CameraVerdict(True, 2 * S),
    )
    assert w.check(1 * S + CHECK_NS, judged=True)[1] == CameraVerdict(True, S + CHECK_NS)
    assert w.check(1 * S + CHECK_NS + 1, judged=True) == cannot  # stale: the camera stalled
    assert w.check(S - 1, judged=True) == cannot  # no reading yet
    w.seen(reading(4, []), None)
    assert w.check(4 * S, judged=True) == cannot  # no card seen


def test_show_and_propose_only_say_it_and_a_proposal_names_the_judges_press(camera):
    w = camera(judge=CameraJudge.PROPOSE)
    w.seen(reading(1, A_SET), None)
    assert w.check(2 * S, judged=True) == ("the camera sees a SET · INVALID to confirm", None)
    # Solitaire's claim acted at once: no press judges it, so nothing to confirm.
    assert w.check(2 * S, judged=False) == ("the camera sees a SET", None)
    w = camera()
    w.seen(reading(1, NO_SET), None)
    assert w.check(2 * S, judged=True) == ("the camera sees no SET in these 4", None)


def test_no_camera_no_check(camera, monkeypatch):
    w = camera(judge=CameraJudge.DECIDE)
    w.seen(reading(1, NO_SET), None)
    monkeypatch.setattr(Watching, "watching", property(lambda self: False))
    assert w.check(2 * S, judged=True) == (None, None)


@given(
    layout=st.lists(st.sampled_from(ALL), min_size=3, max_size=21, unique=True),
    unsure=st.sets(st.integers(0, 20), max_size=4),
)
def test_the_check_of_a_no_set_claim_is_never_wrong_about_the_cards(layout, unsure):
    """Whatever the unsure cards are: a claim is wrong only where there is a SET, right
    only where there is none, and left to the table only when a card is unsure."""
    unsure_faces = [layout[i] for i in unsure if i < len(layout)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Watching, "watching", property(lambda self: True))
        inbox = Inbox()
        w = Watching(CameraConfig("off", CameraJudge.DECIDE), inbox)
        w.seen(reading(1, layout, unsure=unsure_faces), None)
        said, verdict = w.check(2 * S, judged=True)
        inbox.close()
    there_is = any(faces.is_set(*three) for three in combinations(layout, 3))
    if verdict is None:
        assert said is not None and said.startswith("the camera cannot check the claim: ")
        assert said.endswith(" unsure") and unsure_faces
    else:
        assert verdict.valid is not there_is  # valid: the claim "no SET" is right
