"""The page's cache of summaries (referee/history/cache.py): a real SQLite file beside a
real store, kept across servers, made anew when it cannot be trusted, and the store never
written."""

import hashlib
import logging
import sqlite3
from pathlib import Path

import pytest

from referee.errors import StoreError
from referee.history import book, cache, stats
from referee.history.book import History
from referee.history.export import game_rows
from referee.rules import Press, Settings
from referee.store.paths import summaries_path
from referee.store.store import Store
from referee.units import NS_PER_S
from tests.tables import table_game
from tests.test_history import Replays, write_games


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "referee.db"
    s = Settings(players=3)
    write_games(path, [(s, table_game(s, seed, calls=4)) for seed in range(4)])
    return path


def counted(path: Path) -> History:
    history = History(path, summaries_path(path))
    assert history.count(100).done
    return history


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file of the folder but the cache's, by its contents."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.iterdir()
        if not p.name.startswith(summaries_path(Path("referee.db")).name)
    }


def test_the_summaries_outlive_the_server_and_the_store_is_never_written(store, monkeypatch):
    replays = Replays(monkeypatch)
    before = fingerprint(store.parent)
    first = counted(store)
    assert replays.take() == 4 and summaries_path(store).exists()
    expected = list(game_rows(first.cache))
    first.close()
    again = counted(store)  # the next start of the page: nothing replayed
    assert replays.take() == 0
    assert list(game_rows(again.cache)) == expected
    assert [g.game.id for g in again.page(None, 10).games] == [4, 3, 2, 1]
    assert replays.take() == 0
    assert fingerprint(store.parent) == before


def test_a_game_that_changes_is_made_anew_alone(store, monkeypatch):
    replays = Replays(monkeypatch)
    history = counted(store)
    replays.take()
    with Store.open(store) as writing:
        writing.append(2, Press(1, 10**6 * NS_PER_S))
    assert history.count(100).done and replays.take() == 1
    assert history.page(3, 1).games[0].last_ns == 10**6 * NS_PER_S
    with Store.open(store) as writing:
        writing.name_seats(3, [(1, "Ann")])  # who sat where is in the game's version too
    assert history.count(100).done and replays.take() == 1
    assert "Ann" in {p.player for p in stats.stats(history.cache)}


def test_a_page_with_timelines_kept_lists_the_games_the_cache_lost(store, monkeypatch):
    replays = Replays(monkeypatch)
    history = counted(store)
    assert len(history.page(None, 10, timelines=True).timelines) == 4
    replays.take()
    history.cache.forget([1, 2, 3, 4])  # as a cache made anew would have them
    page = history.page(None, 10, timelines=True)
    assert [g.game.id for g in page.games] == [4, 3, 2, 1] and len(page.timelines) == 4
    assert replays.take() == 4


def test_a_game_no_longer_in_the_store_is_forgotten(store):
    history = counted(store)
    with sqlite3.connect(store) as conn:  # as a store written anew without it would be
        for table in ("inputs", "seats", "games"):
            conn.execute(f"DELETE FROM {table} WHERE {'id' if table == 'games' else 'game_id'} = 1")
    conn.close()
    assert history.count(100).done
    assert {row["game"] for row in game_rows(history.cache)} == {2, 3, 4}


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda path: path.write_bytes(b"not a database at all" * 100), id="garbage"),
        pytest.param(lambda path: _pragma(path, "user_version = 0"), id="older format"),
        pytest.param(lambda path: _pragma(path, "application_id = 7"), id="not ours"),
        pytest.param(lambda path: _truncated(path), id="cut short"),
    ],
)
def test_a_cache_that_cannot_be_trusted_is_made_anew_with_one_line(store, spoil, caplog):
    counted(store).close()
    spoil(summaries_path(store))
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        history = counted(store)
    assert [r.getMessage().endswith("made anew") for r in caplog.records] == [True]
    assert {row["game"] for row in game_rows(history.cache)} == {1, 2, 3, 4}


def test_the_cache_of_another_store_is_made_anew(store, tmp_path, caplog):
    counted(store).close()
    other = tmp_path / "other" / "referee.db"
    write_games(other, [(Settings(players=2), table_game(Settings(players=2), 9, calls=2))])
    summaries_path(other).write_bytes(summaries_path(store).read_bytes())
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        history = counted(other)
    assert "another store" in caplog.text
    assert {row["game"] for row in game_rows(history.cache)} == {1}


def test_a_cache_spoilt_while_in_use_is_made_anew_and_the_request_asks_again(store, caplog):
    history = counted(store)
    history.cache.close()
    _truncated(summaries_path(store))
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        with pytest.raises(StoreError, match="ask again"):
            # As if the damage came after the check made when the file was opened.
            history.cache._conn = sqlite3.connect(summaries_path(store), check_same_thread=False)
            list(game_rows(history.cache))
        assert history.count(100).done
    assert {row["game"] for row in game_rows(history.cache)} == {1, 2, 3, 4}
    assert len(caplog.records) == 1


def test_where_the_cache_cannot_be_written_it_is_in_memory(store, tmp_path, caplog):
    blocked = tmp_path / "a file" / "referee.summaries"  # its folder is a file
    blocked.parent.write_text("")
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        history = History(store, blocked)
        assert history.count(100).done
    assert "kept in memory" in caplog.text and len(caplog.records) == 1
    assert history.cache.path is None
    assert {row["game"] for row in game_rows(history.cache)} == {1, 2, 3, 4}


def test_a_players_series_is_their_latest_games(store, monkeypatch):
    monkeypatch.setattr(stats, "SERIES_MAX", 2)
    monkeypatch.setattr(book, "READ_AT_ONCE", 3)
    history = counted(store)
    players = stats.stats(history.cache)
    assert all(p.games == 4 for p in players)
    latest = [[one.game for one in stats.series(history.cache, p)] for p in players]
    assert latest == [[3, 4]] * 3


def _pragma(path: Path, pragma: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA {pragma}")
    conn.close()


def _truncated(path: Path) -> None:
    """The file cut in the middle of its tables, as a power cut might leave it."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
