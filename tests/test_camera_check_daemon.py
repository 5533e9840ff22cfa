"""The whole daemon checking solo's no-SET claims by sight (issue 32, item 4; docs/rules.md,
"The camera", "A no-SET claim, checked"): the real loop (tests/daemon.py), the real
camera's process reading a folder of rendered tables (tests/camera_frames.py), SUPER
pressed once the layout is read."""

from pathlib import Path

import pytest

from referee.config import CameraJudge
from referee.rules import Phase, RuleSet, Settings, words
from referee.store.store import Store

from .camera_frames import WAIT_S, flat, no_set_table, set_table, show
from .daemon import Daemon

FIRST = 10**18  # frames' times, newer than anything the file system stamps


def store(tmp_path, **rules) -> Path:
    path = tmp_path / "referee.db"
    with Store.open(path) as opened:
        opened.new_game(Settings(players=1, pointout_ns=0, **rules), lobby=False)
    return path


@pytest.fixture
def solo(tmp_path):
    return store(tmp_path, rules=RuleSet.SOLO)


def claim(daemon: Daemon, frames, shown: int, frame: bytes) -> None:
    """The frame read, then SUPER, and the camera's check entered: nothing waits."""
    show(frames, f"{shown}.jpg", frame, mtime_ns=FIRST + shown)
    readings = daemon.app.watching._seen
    daemon.wait_for(lambda: len(readings) == shown, f"frame {shown} read", WAIT_S)
    assert len(readings[-1].cards) == 12
    state = lambda: daemon.app.session.state  # noqa: E731
    before = state()
    daemon.press("SUPER")
    daemon.wait_for(lambda: state() is not before and not state().claim, f"claim {shown} checked")


def test_the_box_checks_a_no_set_claim_wrong_then_right_and_a_replay_agrees(solo, frames):
    daemon = Daemon(
        solo,
        camera=str(frames),
        judge=CameraJudge.DECIDE,
        hint_where=True,
        rules=RuleSet.SOLO,
        players=1,
    )
    state = lambda: daemon.app.session.state  # noqa: E731
    says = lambda text: daemon.wait_for(lambda: text in flat(daemon.shown()), text)  # noqa: E731
    try:
        claim(daemon, frames, 1, set_table())  # a SET on the table: wrong, and where it is
        says("the camera sees a SET · ")
        says("wrong: there was a SET")
        assert state().solo is not None and state().solo.zeroed
        assert state().table == 12
        claim(daemon, frames, 2, no_set_table())
        says("the camera sees no SET in these 12")
        assert state().phase is Phase.OPEN and state().table == 15  # three more cards
        daemon.app.session.ledger.flush()
        with Store.open_readonly(solo) as opened:
            stored = opened.latest_game()
            assert stored is not None
            said = [words(i) for i in stored.inputs]
            assert said == ["super", "camera invalid", "super", "camera valid"]
            assert stored.state() == state()  # a replay gives the same game
    finally:
        daemon.stop()


def test_a_right_claim_takes_back_sudden_death_in_solitaire(tmp_path, frames):
    """The claim acts at once (the game lost), then the camera's check: no SET, so three
    more cards and the game goes on."""
    path = store(tmp_path, rules=RuleSet.SOLITAIRE, sudden_death=True)
    rules = {"rules": RuleSet.SOLITAIRE, "sudden_death": True, "players": 1}
    daemon = Daemon(path, camera=str(frames), judge=CameraJudge.DECIDE, **rules)
    state = lambda: daemon.app.session.state  # noqa: E731
    try:
        claim(daemon, frames, 1, no_set_table())
        daemon.wait_for(lambda: state().phase is Phase.OPEN, "the loss taken back")
        assert (state().table, state().owed, state().result) == (15, 0, None)
        daemon.app.session.ledger.flush()
        with Store.open_readonly(path) as opened:
            stored = opened.latest_game()
            assert stored is not None
            assert [words(i) for i in stored.inputs] == ["super", "camera valid"]
            assert stored.state() == state()
    finally:
        daemon.stop()
