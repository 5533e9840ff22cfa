"""The whole daemon judging calls by sight (issue 32, item 3; docs/rules.md, "The camera"):
the real loop (tests/daemon.py), the real camera's process reading a folder of rendered
tables (tests/camera_frames.py), cards picked up at a known moment after a press. Each
frame is put in the folder once the reading before it is in: a claim is the same three
cards gone in two readings in a row."""

import pytest

from referee.config import CameraJudge
from referee.rules import Judgement, words
from referee.rules.inputs import makes_set
from referee.store.store import Store

from .camera_frames import WAIT_S, flat, set_table, set_table_taken, show
from .daemon import Daemon

FIRST = 10**18  # frames' times, newer than anything the file system stamps
SET = (0, 1, 10)  # three of SETS_FACES that make a SET
NOT_SET = (2, 3, 4)  # three that do not: two ovals, one squiggle
LAST = (5, 6, 7)  # three more, one of them (UNSURE) half covered before it is taken
UNSURE = 5


class Table:
    """A daemon watching the folder, and the frames shown to it one after the other."""

    def __init__(self, daemon: Daemon, frames) -> None:
        self.daemon, self.frames, self.shown = daemon, frames, 0

    def cards(self) -> int | None:
        table = self.daemon.app.watching.view()
        return None if table is None else table.cards

    def show(self, data: bytes, cards: int) -> None:
        """A new newest frame, and its reading in the loop."""
        self.shown += 1
        show(self.frames, f"{self.shown}.jpg", data, mtime_ns=FIRST + self.shown)
        readings = self.daemon.app.watching._seen
        before = readings[-1].t_ns if readings else -1
        self.daemon.wait_for(
            lambda: readings and readings[-1].t_ns > before and self.cards() == cards,
            f"frame {self.shown} read ({cards} cards)",
            WAIT_S,
        )

    def call(self, button: str) -> None:
        self.daemon.press(button)
        self.daemon.wait_for(lambda: self.daemon.app.session.state.pending, f"{button}'s call")

    def taken(self, data: bytes, cards: int) -> None:
        """Three cards picked up: seen twice."""
        self.show(data, cards)
        self.show(data, cards)

    def says(self, text: str) -> None:
        self.daemon.wait_for(lambda: text in flat(self.daemon.shown()), text)


@pytest.fixture
def deciding(two_seats, frames):
    daemon = Daemon(two_seats, camera=str(frames), judge=CameraJudge.DECIDE, players=2)
    yield Table(daemon, frames)
    daemon.stop()


def test_the_box_decides_a_set_taken_says_why_three_are_not_one_and_what_it_cannot_see(
    deciding, two_seats
):
    table = deciding
    table.show(set_table(), 12)
    table.call("P1")
    table.taken(set_table_taken(SET), 9)
    table.says("SET · 3 red striped ovals, 1 red solid oval, 2 red open ovals")
    state = lambda: table.daemon.app.session.state  # noqa: E731
    table.daemon.wait_for(lambda: state().calls.last.verdicts == (Judgement.VALID,), "valid")
    table.says("P1 SET!")
    # The next call, on the nine left: three that are not a SET.
    table.call("P2")
    table.taken(set_table_taken(SET + NOT_SET), 6)
    table.says("not a SET: two ovals, one squiggle · 1 red striped oval")
    table.daemon.wait_for(lambda: state().calls.last.verdicts == (Judgement.INVALID,), "invalid")
    assert [p.points for p in state().players] == [1, 0]
    # A card half covered when the call opens: its claim is never a verdict.
    table.show(set_table_taken(SET + NOT_SET, smudged=(UNSURE,)), 6)
    table.call("P1")
    table.taken(set_table_taken(SET + NOT_SET + LAST, smudged=(UNSURE,)), 3)
    table.says("the camera cannot see the claim")
    assert state().pending is not None
    table.daemon.wait_for(lambda: state().calls.last.seen is not None, "the cards seen")
    table.daemon.press("INVALID")  # the table judges as ever
    table.daemon.wait_for(lambda: state().pending is None, "judged by the table")
    table.daemon.app.session.ledger.flush()
    with Store.open_readonly(two_seats) as opened:
        stored = opened.latest_game()
        assert stored is not None
        said = [words(i).split() for i in stored.inputs]
        kinds = [w[:2] if w[0] == "camera" else w[:1] for w in said if w[0] in ("camera", "seen")]
        assert kinds == [["camera", "valid"], ["camera", "invalid"], ["seen"]]  # one a call
        assert stored.state() == state()  # a replay gives the same game
    # What the camera saw stays with each call: a SET, not one, a card it could not read.
    assert [makes_set(c.seen) for c in state().calls if c.seen] == [True, False, None]
