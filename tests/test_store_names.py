"""Names in the ledger, on real SQLite files: the players the box has seen, who sat where
in every game, the migration of an older store, and strict reading back."""

import json
import sqlite3
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cli import main
from referee.names import kept_name
from referee.rules import Press, Settings
from referee.store import schema
from referee.store.ledger import Change, Ledger
from referee.store.schema import SCHEMA_VERSION
from referee.store.store import Store, StoreError

from .test_store import pragma, raw, writer

WAIT_S = 5.0


def seated(game, seat, name, done):
    """A player seated as the daemon seats one from the page (Requests.name_seat)."""
    return Change(f"P{seat} is {name}", lambda store: store.name_seats(game, [(seat, name)]), done)


def test_a_version_1_store_is_migrated_with_its_games_kept(tmp_path, monkeypatch):
    path = tmp_path / "referee.db"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 1)
    with Store.open(path) as store:
        store.append(store.new_game(Settings(), lobby=True), Press(2, 7))
    monkeypatch.undo()
    assert pragma(path, "user_version") == 1
    with Store.open(path) as store:
        game = store.latest_game()
        assert game is not None and game.inputs == (Press(2, 7),)
        assert store.seat_names(game.id) == {} and store.players() == []
        store.name_seats(game.id, [(2, "Ann")])
    assert pragma(path, "user_version") == SCHEMA_VERSION
    with Store.open_readonly(path) as store:
        assert store.seat_names(1) == {2: "Ann"}


def test_who_sat_where_in_each_game(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        first = store.new_game(Settings(), lobby=True)
        store.name_seats(first, [(1, "Ann"), (2, "Bob"), (2, "Cy")])  # in this order
        second = store.new_game(Settings(), lobby=True, names={3: "ann", 1: "Dee"})
        assert store.seat_names(first) == {1: "ann", 2: "Cy"}  # one player, spelt as last typed
        assert store.seat_names(second) == {1: "Dee", 3: "ann"}
        # The latest game's players first; Bob, seated nowhere now, is still known.
        assert store.players() == ["ann", "Dee", "Cy", "Bob"]


def test_a_player_in_the_same_seat_is_one_tuple_in_every_game_listed(tmp_path):
    # The page's server keeps every game's listing for its stats: thousands of them.
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        for _ in range(3):
            store.new_game(Settings(players=2), lobby=False, names={1: "Ann", 2: "Bob"})
    with Store.open_readonly(path) as store:
        listed = store.games()
    assert [g.names for g in listed] == [((1, "Ann"), (2, "Bob"))] * 3
    assert len({id(pair) for g in listed for pair in g.names}) == 2


def test_nobody_sits_at_two_seats_of_a_game(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        game = store.new_game(Settings(), lobby=True)
        store.name_seats(game, [(1, "Ann")])
        with pytest.raises(ValueError, match="ANN already sits at another seat of game 1"):
            store.name_seats(game, [(2, "Bob"), (3, "ANN")])
        assert store.seat_names(game) == {1: "Ann"}  # nothing of it was written


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE players SET name = 'A' || char(7)", r"game 1: bad name 'A\\x07': .*U\+0007"),
        ("UPDATE players SET name = ' Ann'", "game 1: bad name ' Ann': not as the box writes"),
        ("UPDATE players SET name = X'4142'", "game 1: bad name b'AB': not as the box writes"),
        ("UPDATE seats SET seat = 9", "game 1: bad seat 9"),
    ],
)
def test_a_damaged_name_is_named_in_one_line(tmp_path, sql, message):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        store.name_seats(store.new_game(Settings(), lobby=True), [(1, "Ann")])
    raw(path, "PRAGMA ignore_check_constraints = ON", sql)
    with Store.open_readonly(path) as store, pytest.raises(StoreError, match=f"{path}: {message}"):
        store.seat_names(1)


def test_a_name_kept_before_todays_checks_still_reads(tmp_path):
    """A ledger written while "P6" and a Hangul filler were names: a name the page now
    refuses is no damage, and the store that holds it stays readable."""
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        game = store.new_game(Settings(), lobby=True, names={2: "P6", 3: "\u3164"})
    with Store.open_readonly(path) as store:
        assert store.seat_names(game) == {2: "P6", 3: "\u3164"}


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory):
    with Store.open(tmp_path_factory.mktemp("store") / "referee.db") as store:
        yield store


@settings(max_examples=60)
@given(column=st.text(max_size=30))
def test_any_name_column_is_read_exactly_or_refused_in_one_line(shared_store, column):
    game = shared_store.new_game(Settings(), lobby=True, names={1: "Zed"})
    writer(shared_store).execute("UPDATE players SET name = ? WHERE folded = 'zed'", (column,))
    try:
        names = shared_store.seat_names(game)
    except StoreError as err:
        assert str(err).startswith(f"{shared_store.path}: game {game}: bad name ")
        assert "\n" not in str(err)
        return
    assert names == {1: column} and kept_name(column) == column
    writer(shared_store).execute("UPDATE players SET name = 'Zed' WHERE folded = 'zed'")


def test_a_name_is_written_behind_after_the_inputs_before_it(tmp_path):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        ledger = Ledger(store, store.new_game(Settings(players=4), lobby=True))
        ledger.write_behind(lambda: None)
        said, saved = [], threading.Event()
        ledger.append(Press(1, 5))
        ledger.keep(seated(1, 1, "Ann", lambda why: (said.append(why), saved.set())))
        assert saved.wait(WAIT_S)
        ledger.close()
        assert said == [None] and ledger.saved == 1 and ledger.unsaved_changes == ()
    with Store.open_readonly(path) as reader:
        assert reader.seat_names(1) == {1: "Ann"}


def test_a_name_the_disk_refuses_waits_and_says_so(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        ledger = Ledger(store, store.new_game(Settings(players=4), lobby=True))
        said = []
        writer(store).execute("PRAGMA max_page_count = 1")  # full once its pages are
        for n in range(1, 2000):
            if not ledger.append(Press(1, n)):
                break
        ledger.keep(seated(1, 2, "Bob", said.append))
        assert said == ["not saved yet: disk full"]
        assert [change.said for change in ledger.unsaved_changes] == ["P2 is Bob"]
        writer(store).execute("PRAGMA max_page_count = 1000000")
        assert ledger.flush()
        assert said == ["not saved yet: disk full", None] and store.seat_names(1) == {2: "Bob"}


def test_reading_names_needs_no_write(tmp_path):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        store.new_game(Settings(), lobby=True, names={4: "Dee"})
    path.chmod(0o444)
    with Store.open_readonly(path) as store:
        assert store.seat_names(1) == {4: "Dee"} and store.players() == ["Dee"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM seats").fetchone() == (1,)
    conn.close()


def test_state_prints_the_names_and_a_damaged_one_in_one_line(tmp_path, capsys):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        store.new_game(Settings(), lobby=True, names={3: "Cy", 1: "Ann"})
    assert main(["state", "--store", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["names"] == {"1": "Ann", "3": "Cy"}
    raw(path, "UPDATE players SET name = 'C' || char(10) || 'y' WHERE name = 'Cy'")
    assert main(["state", "--store", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"{path}: game 1: bad name 'C\\ny': ")
