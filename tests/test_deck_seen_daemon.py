"""The whole daemon counting the deck by sight (issue 32, item 5; docs/rules.md, "The deck
counted by sight"): the real loop (tests/daemon.py), the real camera's process reading a
folder of rendered tables (tests/camera_frames.py), a solo game whose box counts twelve
cards on the table while one of them has fallen off it."""

import logging
from pathlib import Path

import pytest

from referee.daemon import deck_seen
from referee.rules import RuleSet, Settings
from referee.store.store import Store
from referee.view import DeckSeen

from .camera_frames import WAIT_S, flat, set_table, set_table_taken, show
from .daemon import Daemon
from .processes import ANSI

FIRST = 10**18  # frames' times, newer than anything the file system stamps
DROPPED = "the camera counts 11 cards on the table, the box 12: a card dropped, or a misdeal?"


def seen(daemon: Daemon) -> str:
    """The terminal's picture as words: a long notice wraps, each line in its colours."""
    return flat(ANSI.sub("", daemon.shown()))


@pytest.fixture
def solo(tmp_path) -> Path:
    path = tmp_path / "referee.db"
    with Store.open(path) as opened:
        opened.new_game(Settings(rules=RuleSet.SOLO, players=1), lobby=False)
    return path


def test_a_card_dropped_is_shown_and_told_once_and_found_again(solo, frames, monkeypatch, caplog):
    # Two readings in a row the same are steady here; the box's own wait is 10 s of them.
    monkeypatch.setattr(deck_seen, "STEADY_NS", 0)
    caplog.set_level(logging.INFO, logger=deck_seen.__name__)
    daemon = Daemon(solo, camera=str(frames), rules=RuleSet.SOLO, players=1)
    shown = 0

    def read(frame: bytes, cards: int) -> None:
        """The frame read as the newest reading, of that many cards, every one surely."""
        nonlocal shown
        readings = daemon.app.watching._seen
        before = readings[-1].t_ns if readings else -1
        shown += 1
        show(frames, f"{shown}.jpg", frame, mtime_ns=FIRST + shown)
        daemon.wait_for(lambda: bool(readings) and readings[-1].t_ns > before, "read", WAIT_S)
        assert [card.sure for card in readings[-1].cards] == [True] * cards

    def deck() -> DeckSeen | None:
        table = daemon.app.watching.view()
        return None if table is None else table.deck

    try:
        read(set_table(), 12)
        assert deck() is None  # one reading: not steady yet
        read(set_table(), 12)
        daemon.wait_for(lambda: deck() == DeckSeen(12, 0, 12), "the deck in order")
        assert "the camera counts" not in seen(daemon)
        read(set_table_taken((5,)), 11)
        assert deck() == DeckSeen(12, 0, 12)  # a hand may be passing
        read(set_table_taken((5,)), 11)
        daemon.wait_for(lambda: DROPPED in seen(daemon), "the card dropped, shown")
        assert deck() == DeckSeen(11, 0, 12)
        read(set_table_taken((5,)), 11)
        said = [r.getMessage() for r in caplog.records if r.name == deck_seen.__name__]
        assert said == [f"the deck by sight: {DROPPED}"]  # once
        read(set_table(), 12)
        read(set_table(), 12)
        daemon.wait_for(lambda: "the camera counts" not in seen(daemon), "found again")
        assert daemon.app.session.state.table == 12  # the box's own count is its own
    finally:
        daemon.stop()
