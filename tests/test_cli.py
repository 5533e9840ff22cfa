"""The `referee` command itself: what it says with no command, --version, every help text,
and the one place that turns a user's mistake into one line and an exit status."""

import json
import re

import pytest

from referee import __version__
from referee.cli import main, parser
from referee.errors import ConfigError, RefereeError, ScriptFileError, StoreError, StoreInUse
from referee.rules import Press, Settings
from referee.store.store import Store

COMMANDS = ("run", "replay", "state", "recover", "check-buttons", "config", "listen", "look")
# A reader of the help has the program, not the repository's neighbours.
OUTSIDE = re.compile(r"\.\./shared|RULES\.md|DESIGN\.md")


def test_no_command_lists_the_commands(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\s", out, re.MULTILINE), f"{command} is not listed"


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"referee {__version__}\n"


def test_replay_help_says_what_a_script_is(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    out = capsys.readouterr().out
    assert "replay script" in out and "seconds since the start" in out
    assert "0.000 press 2" in out  # an example to copy


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_no_help_points_outside_the_program(command, capsys):
    with pytest.raises(SystemExit):
        main(["--help"] if command is None else [command, "--help"])
    out = capsys.readouterr().out
    assert not OUTSIDE.search(out), out


def test_the_example_settings_point_nowhere_outside(capsys):
    assert main(["config", "--example"]) == 0
    assert not OUTSIDE.search(capsys.readouterr().out)


def test_every_users_error_has_one_base():
    for error in (ConfigError, StoreError, StoreInUse, ScriptFileError):
        assert issubclass(error, RefereeError)


def test_the_commands_raise_and_main_alone_reports(tmp_path, capsys):
    # A command's function raises; main() prints one line and returns the status.
    args = parser().parse_args(["state", "--store", str(tmp_path / "none.db")])
    with pytest.raises(StoreError):
        args.func(args)
    assert main(["state", "--store", str(tmp_path / "none.db")]) == 2
    assert capsys.readouterr().err == f"{tmp_path}/none.db: no such file\n"


# --- `referee state` reads the store `run` writes ------------------------------------------


@pytest.fixture
def game_in(tmp_path):
    def store(path):
        with Store.open(path) as opened:
            game = opened.new_game(Settings(players=3), lobby=True)
            opened.append(game, Press(2, 1_000))
        return path

    return store


def test_state_follows_the_settings_store_path(tmp_path, monkeypatch, capsys, game_in):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # no default store there
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    game_in(tmp_path / "box.db")
    config = tmp_path / "referee.toml"
    config.write_text('[store]\npath = "box.db"\n')
    assert main(["state", "--config", str(config)]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["players"]] == [2]
    # Found the way `run` finds it, too: $REFEREE_CONFIG.
    monkeypatch.setenv("REFEREE_CONFIG", str(config))
    assert main(["state"]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["players"]] == [2]


def test_state_store_beats_the_settings(tmp_path, capsys, game_in):
    config = tmp_path / "referee.toml"
    config.write_text('[store]\npath = "elsewhere.db"\n')
    game_in(tmp_path / "mine.db")
    assert main(["state", "--config", str(config), "--store", str(tmp_path / "mine.db")]) == 0
    assert json.loads(capsys.readouterr().out)["phase"] == "lobby"


def test_run_takes_several_displays_joined_and_names_a_wrong_one(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Join several with + to show the game on each: window+terminal" in help_text
    with pytest.raises(SystemExit):
        main(["run", "--display", "kms+tv"])
    assert "'tv' in 'kms+tv': join window, kms or kms:/dev/dri/cardN, and terminal with +" in (
        capsys.readouterr().err
    )
    assert parser().parse_args(["run", "--display", "terminal+kms:/dev/dri/card1"]).display == (
        "terminal+kms:/dev/dri/card1"
    )
