"""The rule keys a phone set, in the ledger (Store.next_rules): kept apart from the
settings file, written with the game in the lobby that takes them, read back strictly."""

import pytest

from referee.rules import Press, Settings
from referee.store import schema
from referee.store.schema import SCHEMA_VERSION
from referee.store.store import Store, StoreError

from .test_store import pragma, raw


def test_the_phones_keys_are_kept_and_only_those(tmp_path):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        assert store.next_rules() == {}
        store.set_next_rules({"pointout_s": 5.0, "rules": "solo"})
        store.set_next_rules({"rules": "official", "deals": 3})
    with Store.open_readonly(path) as reader:
        assert reader.next_rules() == {"rules": "official", "deals": 3}


def test_the_lobby_takes_the_rules_in_the_same_write_and_stands_up_the_seats_it_loses(tmp_path):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        game = store.new_game(Settings(players=4), lobby=True, names={1: "Ann", 4: "Dee"})
        store.append(game, Press(4, 1))
        store.set_next_rules({"players": 3}, (game, Settings(players=3)))
        kept = store.latest_game()
        assert kept is not None and kept.settings == Settings(players=3)
        assert kept.names == {1: "Ann"} and kept.state().players == ()  # seat 4 is no more
        assert store.next_rules() == {"players": 3}


def test_a_version_2_store_is_migrated_with_its_games_and_names_kept(tmp_path, monkeypatch):
    path = tmp_path / "referee.db"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 2)
    with Store.open(path) as store:
        store.new_game(Settings(), lobby=True, names={2: "Bob"})
    monkeypatch.undo()
    assert pragma(path, "user_version") == 2
    with Store.open(path) as store:
        assert store.next_rules() == {} and store.seat_names(1) == {2: "Bob"}
    assert pragma(path, "user_version") == SCHEMA_VERSION == 3


@pytest.mark.parametrize(
    ("value", "said"),
    [("{", "next rules: bad value '{' of 'deals'"), ("[" * 5000, "next rules: bad value '[[[")],
)
def test_a_damaged_value_is_named_in_one_line(tmp_path, value, said):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        store.set_next_rules({"deals": 3})
    raw(path, f"UPDATE next_rules SET value = '{value}'")
    with Store.open_readonly(path) as reader, pytest.raises(StoreError) as refused:
        reader.next_rules()
    assert said in str(refused.value) and "\n" not in str(refused.value)
