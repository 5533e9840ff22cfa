"""Inputs a full disk refused: kept in a file at exit, named in one line, put back later.

The refusing disk here is SQLite's query_only on a real file (SQLITE_READONLY, as a
read-only disk gives); test_full_disk.py does it with a real full filesystem.
"""

import json

import pytest

from referee import rescue
from referee.cli import main
from referee.errors import EXIT_UNSAVED, UnsavedInputs
from referee.rules import Press, Settings, Super, Verdict, replay, report
from referee.store import Ledger, Store

S = 1_000_000_000
PLAYED = (Press(1, 1 * S), Press(2, 2 * S), Super(3 * S), Press(2, 4 * S + 123_456_789))
REFUSED = (Verdict(True, 5 * S), Press(1, 6 * S))


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("RUNTIME_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))


def refusing(store: Store) -> None:
    store._conn.execute("PRAGMA query_only = 1")


def writable(store: Store) -> None:
    store._conn.execute("PRAGMA query_only = 0")


THREE = Settings(players=3)


def a_game_the_disk_refused(path, settings=THREE) -> tuple[Store, Ledger]:
    store = Store.open(path)
    ledger = Ledger(store, store.new_game(settings, lobby=True))
    for inp in PLAYED:
        assert ledger.append(inp)
    refusing(store)
    for inp in REFUSED:
        assert not ledger.append(inp)
    return store, ledger


def test_waiting_inputs_go_to_a_file_named_in_one_line(tmp_path):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    unsaved = rescue.keep(ledger)
    store.close()
    assert isinstance(unsaved, UnsavedInputs) and unsaved.exit_status == EXIT_UNSAVED
    line = str(unsaved)
    assert "\n" not in line
    assert line.startswith(f"referee: 2 inputs could not be saved to {tmp_path}/referee.db")
    assert "(read-only storage)" in line
    path = next((tmp_path).glob("referee-unsaved-game1-*.txt"))  # beside the store first
    assert f"they are in {path}: `referee recover {path}` puts them back" in line
    kept = rescue.read(path)
    assert kept.inputs == PLAYED + REFUSED and kept.first == 1 and kept.game == 1
    assert kept.settings == Settings(players=3) and kept.lobby


def test_the_file_goes_where_it_can(tmp_path, monkeypatch):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    gone = tmp_path / "gone"  # a place that takes nothing: the first choices fail
    monkeypatch.setattr(rescue, "places", lambda path: [gone, tmp_path / "run"])
    unsaved = rescue.keep(ledger)
    store.close()
    path = next((tmp_path / "run").glob("referee-unsaved-*.txt"))
    assert str(path) in str(unsaved)
    monkeypatch.setattr(rescue, "places", lambda path: [gone])
    nowhere = str(rescue.keep(ledger))
    # Nowhere at all: the message itself carries them, for the journal to keep.
    assert "no file could hold them; here they are:" in nowhere
    assert nowhere.endswith("6.000000000 press 1\n")


def test_a_rescue_file_is_a_replay_script_of_the_game(tmp_path, capsys):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db", Settings(players=2))
    game = store.game(1)
    rescue.keep(ledger)
    store.close()
    path = next(tmp_path.glob("referee-unsaved-*.txt"))
    assert main(["replay", str(path)]) == 0
    state = replay(Settings(players=2), PLAYED + REFUSED, lobby=True)
    assert json.loads(capsys.readouterr().out) == report(game.settings, state)


def test_recover_puts_back_what_the_store_lacks_once(tmp_path, capsys):
    path = tmp_path / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    store.close()
    kept = next(tmp_path.glob("referee-unsaved-*.txt"))
    copy = kept.read_text()
    assert main(["recover", str(kept)]) == 0
    assert capsys.readouterr().out == (
        f"{kept}: put back 2 inputs into game 1 of {path}; the file is removed\n"
    )
    assert not kept.exists()
    with Store.open_readonly(path) as reader:
        assert reader.game(1).inputs == PLAYED + REFUSED
    kept.write_text(copy)  # a second time: nothing is added twice
    assert main(["recover", str(kept)]) == 0
    assert "put back 0 inputs into game 1" in capsys.readouterr().out
    with Store.open_readonly(path) as reader:
        assert reader.game(1).inputs == PLAYED + REFUSED


def test_recover_refuses_a_game_that_went_on_without_them(tmp_path, capsys):
    path = tmp_path / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    writable(store)
    store.append(1, Press(3, 7 * S))  # the game resumed without the two refused inputs
    store.close()
    kept = next(tmp_path.glob("referee-unsaved-*.txt"))
    assert main(["recover", str(kept)]) == 2
    assert capsys.readouterr().err == (
        f"{kept}: game 1 in {path} went on without these inputs; the file keeps them\n"
    )
    assert kept.exists()


def test_recover_into_another_store_makes_it_a_new_game(tmp_path, capsys):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    rescue.keep(ledger)
    store.close()
    kept = next(tmp_path.glob("referee-unsaved-*.txt"))
    other = tmp_path / "new.db"
    with Store.open(other) as fresh:
        fresh.new_game(Settings(), lobby=True)  # game 1 there is another game
    assert main(["recover", str(kept), "--store", str(other)]) == 0
    assert "put back 6 inputs into game 2 of" in capsys.readouterr().out
    with Store.open_readonly(other) as reader:
        game = reader.latest_game()
    assert game.id == 2 and game.inputs == PLAYED + REFUSED and game.settings.players == 3


def test_what_is_not_a_rescue_file_is_one_line(tmp_path, capsys):
    script = tmp_path / "game.txt"
    script.write_text("0 press 1\n")
    assert main(["recover", str(script)]) == 2
    assert capsys.readouterr().err == f"{script}: not a rescue file of referee (no store line)\n"


def test_an_unreadable_store_keeps_only_what_waits(tmp_path):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    store._conn.close()  # the store cannot be read any more either
    rescue.keep(ledger)
    store.close()
    kept = rescue.read(next(tmp_path.glob("referee-unsaved-*.txt")))
    assert (kept.first, kept.inputs, kept.settings) == (len(PLAYED) + 1, REFUSED, None)
    with Store.open(tmp_path / "referee.db") as again:
        assert rescue.recover(kept, again, tmp_path / "f") == (1, 2)
        assert again.game(1).inputs == PLAYED + REFUSED


def test_run_puts_them_back_when_it_starts(tmp_path):
    from referee.cli import _put_back_waiting

    path = tmp_path / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    store.close()
    _put_back_waiting(path)
    assert not list(tmp_path.glob("referee-unsaved-*.txt"))
    with Store.open_readonly(path) as reader:
        assert reader.game(1).inputs == PLAYED + REFUSED
