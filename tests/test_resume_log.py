"""What the log says when a game resumes with other rules than those it started with."""

import logging

from referee.daemon.arbiter import Decision
from referee.daemon.session import Session
from referee.rules import NS_PER_MS, Settings
from referee.store.store import Store

KEYBOARD_NS = 8 * NS_PER_MS  # the keyboard's resolution: the tie window's floor with it
GPIO_NS = 100_000


def started(path, rules: Settings, floor_ns: int) -> None:
    """A game out of its lobby: one not started takes the settings in effect instead."""
    with Store.open(path) as store:
        session = Session(store, rules, tie_floor_ns=floor_ns, now_ns=0)
        for button in ("P1", "P2", "SUPER"):
            session.play(Decision(0, button))
        session.close()


def resumed_log(path, rules: Settings, floor_ns: int, caplog) -> str:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="referee.daemon.session"), Store.open(path) as store:
        Session(store, rules, tie_floor_ns=floor_ns, now_ns=0)
    return caplog.text


def test_only_another_input_is_no_change_of_the_settings(tmp_path, caplog):
    path = tmp_path / "referee.db"
    started(path, Settings(), KEYBOARD_NS)
    said = resumed_log(path, Settings(), GPIO_NS, caplog)
    assert "settings changed" not in said
    # What differs, and why, is named: the game keeps its own tie window.
    assert "game 1 keeps the rules it started with; the next game: tie_ms 0.1" in said


def test_the_same_settings_say_nothing(tmp_path, caplog):
    path = tmp_path / "referee.db"
    started(path, Settings(), KEYBOARD_NS)
    assert "keeps the rules" not in resumed_log(path, Settings(), KEYBOARD_NS, caplog)


def test_changed_settings_are_named(tmp_path, caplog):
    path = tmp_path / "referee.db"
    started(path, Settings(players=4), GPIO_NS)
    said = resumed_log(path, Settings(players=3), GPIO_NS, caplog)
    assert "game 1 keeps the rules it started with; the next game: players 3" in said
