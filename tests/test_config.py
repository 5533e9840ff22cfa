"""The settings file: defaults, every kind of mistake and its message, the example, the CLI."""

import dataclasses
import tomllib
from pathlib import Path

import pytest

from referee.buttons import PIN_BUTTONS
from referee.cli import main
from referee.config import (
    ENV_VAR,
    ButtonTiming,
    CameraConfig,
    CameraJudge,
    ConfigError,
    DisplayConfig,
    LedDriver,
    LedsConfig,
    ReplayPitch,
    SerialConfig,
    SoundConfig,
    SoundOutput,
    default_config,
    example_config,
    load_config,
    render_config,
    search_paths,
)
from referee.rules import RULE_KEYS, RuleSet, Settings

from .conftest import ROOT

PINMAP = tomllib.loads((ROOT / "hardware" / "pinmap.toml").read_text())
EXAMPLE = ROOT / "referee.example.toml"


@pytest.fixture(autouse=True)
def no_settings_files(tmp_path, monkeypatch):
    """Keep the machine's own settings files out of every test."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("referee.config.loading.SYSTEM_PATH", tmp_path / "etc" / "referee.toml")


def write(tmp_path: Path, text: str, name: str = "referee.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load(tmp_path: Path, text: str):
    return load_config(write(tmp_path, text))


def error(tmp_path: Path, text: str) -> str:
    """The message a file with this text gets, its folder left out."""
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return str(caught.value).removeprefix(f"{tmp_path}/")


def without_path(config):
    return dataclasses.replace(config, path=None)


# The defaults


def test_the_defaults():
    config = default_config()
    assert config.game == Settings()
    assert config.buttons == ButtonTiming(
        debounce_ns=30_000_000,
        settle_ns=5_000_000,
        resolution_ns=100_000,
        stuck_ns=10_000_000_000,
        end_hold_ns=3_000_000_000,
        replay_hold_ns=1_000_000_000,
    )
    assert config.sound == SoundConfig(SoundOutput.BEEPER, 0.5)
    assert config.display == DisplayConfig(0, 0, 30)
    assert config.serial == SerialConfig("/dev/ttyACM0", 115_200)
    assert config.store_path is None
    assert config.path is None


def test_the_pin_defaults_are_the_pin_map():
    config = default_config()
    assert list(config.pins) == list(PIN_BUTTONS)
    assert config.pins == PINMAP["pins"]
    assert config.leds == LedsConfig(
        LedDriver(PINMAP["leds"]["driver"]), PINMAP["leds"]["data"], PINMAP["leds"]["clock"], {}
    )
    assert config.beeper_pin == PINMAP["beeper"]["pin"]


def test_the_package_carries_the_one_pin_map():
    assert (ROOT / "referee" / "pinmap.toml").read_text() == (
        ROOT / "hardware" / "pinmap.toml"
    ).read_text()


def test_an_empty_file_gives_the_defaults(tmp_path):
    path = write(tmp_path, "")
    assert load_config(path) == dataclasses.replace(default_config(), path=path)


# Where the file is looked for


def test_no_file_anywhere_gives_the_defaults():
    assert load_config(None) == default_config()


def test_the_user_file_is_found(tmp_path):
    path = tmp_path / "xdg" / "referee" / "referee.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[rules]\nplayers = 3\n")
    config = load_config(None)
    assert (config.path, config.game.players) == (path, 3)


def test_the_system_file_is_found_last(tmp_path):
    path = tmp_path / "etc" / "referee.toml"
    path.parent.mkdir()
    path.write_text("[rules]\nplayers = 5\n")
    assert load_config(None).game.players == 5
    user = tmp_path / "xdg" / "referee" / "referee.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[rules]\nplayers = 6\n")
    assert load_config(None).game.players == 6


def test_the_file_in_the_current_folder_comes_before_the_users(tmp_path):
    """Where `referee config --example > referee.toml` wrote it, as README.md says."""
    user = tmp_path / "xdg" / "referee" / "referee.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[rules]\nplayers = 6\n")
    here = write(Path.cwd(), "[rules]\nplayers = 7\n")
    config = load_config(None)
    assert (config.path, config.game.players) == (here, 7)
    assert search_paths()[:2] == [here, user]


def test_the_environment_variable_comes_first(tmp_path, monkeypatch):
    user = tmp_path / "xdg" / "referee" / "referee.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[rules]\nplayers = 6\n")
    chosen = write(tmp_path, "[rules]\nplayers = 7\n", "chosen.toml")
    monkeypatch.setenv(ENV_VAR, str(chosen))
    assert load_config(None).path == chosen
    assert load_config(None).path == chosen


def test_the_environment_variable_naming_a_missing_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError) as caught:
        load_config(None)
    assert (
        str(caught.value)
        == f"{tmp_path}/missing.toml: no such settings file (named by $REFEREE_CONFIG)"
    )


def test_a_given_file_that_does_not_exist(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "referee.toml")
    assert str(caught.value) == f"{tmp_path}/referee.toml: no such settings file"


# Good values


def test_every_section_read(tmp_path):
    config = load(
        tmp_path,
        """
[rules]
rules = "official"
players = 6
pointout_s = 7     # a TOML integer where a float is wanted
tie_ms = 2.5
must_use_flipped = true

[buttons]
debounce_ms = 12.5
settle_ms = 0
resolution_us = 8000
stuck_s = 20
end_hold_s = 2

[sound]
output = "soundcard"
volume = 1

[display]
width = 480
height = 320
fps = 60

[serial]
device = "/dev/ttyUSB0"
baud = 9600

[store]
path = "games.db"
""",
    )
    assert config.game == Settings(
        RuleSet.OFFICIAL, 6, pointout_ns=7_000_000_000, tie_ns=2_500_000, must_use_flipped=True
    )
    assert config.buttons == ButtonTiming(
        12_500_000, 0, 8_000_000, 20_000_000_000, 2_000_000_000, 1_000_000_000
    )
    assert config.sound == SoundConfig(SoundOutput.SOUNDCARD, 1.0)
    assert config.display == DisplayConfig(480, 320, 60)
    assert config.serial == SerialConfig("/dev/ttyUSB0", 9600)
    assert config.store_path == tmp_path / "games.db"


@pytest.mark.parametrize("name", ["GPIO5", "BCM5", "BOARD29", "J8:29", "WPI21", "5", 5])
def test_every_gpiozero_name_of_a_pin_becomes_gpio_n(tmp_path, name):
    written = f'"{name}"' if isinstance(name, str) else str(name)
    config = load(tmp_path, f'[pins]\nP1 = "GPIO22"\nVALID = {written}\n[leds]\ndriver = "none"')
    assert (config.pins["P1"], config.pins["VALID"]) == ("GPIO22", "GPIO5")


def test_solo_in_either_order(tmp_path):
    assert load(tmp_path, '[rules]\nrules = "solo"\nplayers = 1\n').game.rules is RuleSet.SOLO
    assert load(tmp_path, '[rules]\nplayers = 1\nrules = "solo"\n').game.players == 1


def test_leds_on_their_own_pins(tmp_path):
    config = load(
        tmp_path,
        '[rules]\nplayers = 2\n[leds]\ndriver = "pins"\nP1 = "BOARD15"\nP2 = 23\n',
    )
    # The shift register's default pins are not in use, so GPIO22 and GPIO23 are free.
    assert config.leds == LedsConfig(LedDriver.PINS, None, None, {"P1": "GPIO22", "P2": "GPIO23"})


def test_a_box_without_the_replay_button_leaves_its_pin_alone(tmp_path):
    path = tmp_path / "referee.toml"
    path.write_text('[pins]\nREPLAY = ""\n[beeper]\npin = "GPIO0"\n')
    config = load_config(path)
    assert "REPLAY" not in config.pins and config.beeper_pin == "GPIO0"  # the pin is free
    assert 'REPLAY = ""' in render_config(config, named=True).splitlines()
    assert load(tmp_path, "").pins["REPLAY"] == PINMAP["pins"]["REPLAY"]


def test_no_leds_and_no_beeper(tmp_path):
    config = load(
        tmp_path, '[leds]\ndriver = "none"\n[beeper]\npin = ""\n[sound]\noutput = "none"\n'
    )
    assert config.leds == LedsConfig(LedDriver.NONE, None, None, {})
    assert config.beeper_pin is None


def test_store_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load(tmp_path, '[store]\npath = "~/x.db"').store_path == tmp_path / "home" / "x.db"
    assert load(tmp_path, '[store]\npath = "/var/x.db"').store_path == Path("/var/x.db")
    assert load(tmp_path, '[store]\npath = "a/x.db"').store_path == tmp_path / "a" / "x.db"
    assert load(tmp_path, '[store]\npath = ""').store_path is None


# Mistakes: each names the file, the line, the key, what was given and what is allowed

KNOWN_SECTIONS = (
    "[rules], [buttons], [pins], [leds], [beeper], [sound], [audio], [camera], [display],"
    " [serial], [store], [web]"
)
PIN_NAMES = "GPIO17 (BCM number), BCM17, BOARD11 (header pin), J8:11, WPI0 or 17"

MISTAKES = {
    "broken TOML": (
        "[rules]\nplayers = \n",
        "referee.toml:2: not TOML: Invalid value (at line 2, column 11)",
    ),
    "unknown section": (
        "[rules]\nplayers = 3\n\n[button]\ndebounce_ms = 3\n",
        "referee.toml:4: [button]: unknown section; did you mean [buttons]?"
        f" (known: {KNOWN_SECTIONS})",
    ),
    "unknown key": (
        "[buttons]\nsettle_ms = 4\ndebounce = 20\n",
        "referee.toml:3: [buttons] debounce: unknown key; did you mean debounce_ms?"
        " (known: debounce_ms, settle_ms, resolution_us, stuck_s, end_hold_s, replay_hold_s)",
    ),
    "unknown key in another case": (
        '[pins]\np1 = "GPIO4"\n',
        "referee.toml:2: [pins] p1: unknown key; did you mean P1?"
        " (known: P1, P2, P3, P4, P5, P6, P7, P8, VALID, INVALID, SUPER, UNDO, REPLAY)",
    ),
    "a key in the wrong section": (
        "[buttons]\nplayers = 3\n",
        "referee.toml:2: [buttons] players: unknown key; it belongs in [rules]"
        " (known: debounce_ms, settle_ms, resolution_us, stuck_s, end_hold_s, replay_hold_s)",
    ),
    "a key outside any section": (
        "# settings\nplayers = 3\n",
        "referee.toml:2: players is outside any section; put it under [rules]",
    ),
    "a dotted key": (
        "# players\nrules.players = 1\n",
        "referee.toml:2: [rules] players: rules=super needs players=2 to 8; got 1",
    ),
    "a key of an inline table": (
        "\nrules = { players = 1 }\n",
        "referee.toml:2: [rules] players: rules=super needs players=2 to 8; got 1",
    ),
    "a section that is not a table": (
        "rules = 3\n",
        "referee.toml:1: [rules]: must be a table of keys; got 3",
    ),
    "a string for a number": (
        '[rules]\nplayers = "4"\n',
        "referee.toml:2: [rules] players: must be a whole number of seats, 2 to 8"
        ' (1 for solo or solitaire); got "4"',
    ),
    "a bool for a number": (
        "[buttons]\n\nsettle_ms = true\n",
        "referee.toml:3: [buttons] settle_ms: must be milliseconds a serial board without"
        " watermark (T) lines may be late, 0 to 200; got true",
    ),
    "a float for a whole number": (
        "[display]\nfps = 30.0\n",
        "referee.toml:2: [display] fps: must be frames a second, 1 to 60; got 30.0",
    ),
    "a number for a bool": (
        "[rules]\nmust_use_flipped = 1\n",
        "referee.toml:2: [rules] must_use_flipped: must be true or false; got 1",
    ),
    "an array for a string": (
        '[serial]\ndevice = ["/dev/ttyACM0"]\n',
        "referee.toml:2: [serial] device: must be the board's serial device; got an array",
    ),
    "a negative point-out time": (
        "[rules]\nplayers = 4\n\n  pointout_s = -1\n",
        "referee.toml:4: [rules] pointout_s: must be seconds to show a SET: 0 for no limit,"
        " else 0.001 to 86400 (a day); got -1",
    ),
    "an endless tie window": (
        "[rules]\ntie_ms = inf\n",
        "referee.toml:2: [rules] tie_ms: must be milliseconds, 0 to 86400000 (a day); got inf",
    ),
    "a point-out time too long for any clock": (
        "[rules]\npointout_s = 1e308\n",
        "referee.toml:2: [rules] pointout_s: must be seconds to show a SET: 0 for no limit,"
        " else 0.001 to 86400 (a day); got 1e+308",
    ),
    "a point-out time below a nanosecond, which is no 0": (
        "[rules]\npointout_s = 1e-300\n",
        "referee.toml:2: [rules] pointout_s: must be seconds to show a SET: 0 for no limit,"
        " else 0.001 to 86400 (a day); got 1e-300",
    ),
    "a point-out time beyond any float": (
        "[rules]\npointout_s = 1" + "0" * 400 + "\n",
        "referee.toml:2: [rules] pointout_s: must be seconds to show a SET: 0 for no limit,"
        " else 0.001 to 86400 (a day); got 1" + "0" * 400,
    ),
    "a debounce time beyond any float": (
        "[buttons]\ndebounce_ms = 1" + "0" * 400 + "\n",
        "referee.toml:2: [buttons] debounce_ms: must be milliseconds after a press's first edge"
        " whose edges are bounce, 0.1 to 1000; got 1" + "0" * 400,
    ),
    "an unknown rule set": (
        '[rules]\nrules = "house"\n',
        'referee.toml:2: [rules] rules: must be super, official, solo or solitaire; got "house"',
    ),
    "too many players, after solo": (
        '[rules]\nrules = "solo"\nplayers = 9\n',
        "referee.toml:3: [rules] players: must be a whole number of seats, 2 to 8"
        " (1 for solo or solitaire); got 9",
    ),
    "solo with two players": (
        '[rules]\nrules = "solo"\nplayers = 2\n',
        "referee.toml:3: [rules] players: rules=solo needs players=1; got 2",
    ),
    "one player without solo": (
        "[rules]\nplayers = 1\n",
        "referee.toml:2: [rules] players: rules=super needs players=2 to 8; got 1",
    ),
    "debounce out of range": (
        "[buttons]\ndebounce_ms = 0\n",
        "referee.toml:2: [buttons] debounce_ms: must be milliseconds after a press's first edge"
        " whose edges are bounce, 0.1 to 1000; got 0",
    ),
    "stuck before the end hold": (
        "[buttons]\nstuck_s = 2\n",
        "referee.toml:2: [buttons] stuck_s: stuck_s (2.0) must be more than end_hold_s (3.0)",
    ),
    "end hold after stuck": (
        "[buttons]\nend_hold_s = 12\n",
        "referee.toml:2: [buttons] end_hold_s: stuck_s (10.0) must be more than end_hold_s (12.0)",
    ),
    "too loud": (
        "[sound]\nvolume = 1.5\n",
        "referee.toml:2: [sound] volume: must be loudness, 0 to 1; got 1.5",
    ),
    "an unknown sound output": (
        '[sound]\noutput = "horn"\n',
        "referee.toml:2: [sound] output: must be where sounds go: beeper, soundcard or none;"
        ' got "horn"',
    ),
    "a beeper with no pin": (
        '[beeper]\npin = ""\n',
        'referee.toml:2: [beeper] pin: the beeper needs a pin: [sound] output = "beeper"'
        ' with [beeper] pin = ""',
    ),
    "a key with a line break in it": (
        '[rules]\n"pla\\nyers" = 3\n',
        'referee.toml:2: [rules] "pla\\nyers": unknown key; did you mean players? (known:'
        " rules, players, pointout_s, tie_ms, super_s, must_use_flipped, deals,"
        " dealer_plays, sudden_death)",
    ),
    "a tiny window": (
        "[display]\nwidth = 100\nheight = 100\n",
        "referee.toml:2: [display] width: must be pixels, 480 to 7680, or 0 with height 0"
        " for the screen's own size; got 100",
    ),
    "a width without a height": (
        "[display]\nwidth = 800\n",
        "referee.toml:2: [display] width: width and height must both be 0 (the screen's own size)"
        " or both be set; got 800 by 0",
    ),
    "no baud": (
        "[serial]\nbaud = 0\n",
        "referee.toml:2: [serial] baud: must be its bits a second for a UART board"
        " (a USB one ignores it), a positive whole number; got 0",
    ),
    "a pin that does not exist": (
        '[pins]\nP3 = "GPIO40"\n',
        "referee.toml:2: [pins] P3: must be the pin of player 3's buzzer, a GPIO pin named as"
        f' gpiozero does ({PIN_NAMES}); got "GPIO40"',
    ),
    "a power pin": (
        '[pins]\nUNDO = "BOARD1"\n',
        "referee.toml:2: [pins] UNDO: must be the pin of the UNDO button (held down, it ends the"
        f' game), a GPIO pin named as gpiozero does ({PIN_NAMES}); got "BOARD1"',
    ),
    "a pin named in lower case": (
        '[beeper]\npin = "gpio18"\n',
        'referee.toml:2: [beeper] pin: must be the beeper\'s pin, or "" for none, a GPIO pin'
        f' named as gpiozero does ({PIN_NAMES}); got "gpio18"',
    ),
    "no pin for a button": (
        '[pins]\nVALID = ""\n',
        "referee.toml:2: [pins] VALID: must be the pin of the green VALID button, a GPIO pin"
        f' named as gpiozero does ({PIN_NAMES}); got ""',
    ),
    "two buttons on one pin": (
        '[pins]\nP1 = "GPIO17"\nP2 = "GPIO17"\n',
        "referee.toml:3: [pins] P2: must be a pin no other button, LED or the beeper uses;"
        ' got "GPIO17", the pin of [pins] P1',
    ),
    "two buttons on one pin, by its BOARD name": (
        '[pins]\nP2 = "BOARD29"\n',
        "referee.toml:2: [pins] P2: must be a pin no other button, LED or the beeper uses;"
        ' got "BOARD29", which is GPIO5, the pin of [pins] P1',
    ),
    "a button moved onto another's default pin": (
        "[pins]\nP1 = 6\n",
        "referee.toml:2: [pins] P1: must be a pin no other button, LED or the beeper uses;"
        " got 6, which is GPIO6, the pin of [pins] P2",
    ),
    "REPLAY on a buzzer's pin": (
        '[pins]\nREPLAY = "GPIO5"\n',
        "referee.toml:2: [pins] REPLAY: must be a pin no other button, LED or the beeper uses;"
        ' got "GPIO5", the pin of [pins] P1',
    ),
    "an LED on a button's pin": (
        '[leds]\nclock = "J8:29"\n',
        "referee.toml:2: [leds] clock: must be a pin no other button, LED or the beeper uses;"
        ' got "J8:29", which is GPIO5, the pin of [pins] P1',
    ),
    "the beeper on an LED's pin": (
        '[rules]\nplayers = 2\n[leds]\ndriver = "pins"\nP1 = "GPIO22"\nP2 = "GPIO9"\n'
        '[beeper]\npin = "GPIO9"\n',
        "referee.toml:8: [beeper] pin: must be a pin no other button, LED or the beeper uses;"
        ' got "GPIO9", the pin of [leds] P2',
    ),
    "a seat without its LED": (
        '[rules]\nplayers = 3\n[leds]\ndriver = "pins"\nP1 = "GPIO4"\nP2 = "GPIO9"\n',
        'referee.toml:3: [leds] P3: driver = "pins" needs a pin for every seat up to players = 3;'
        ' got ""',
    ),
    "a shift register without its data pin": (
        '[leds]\ndata = ""\n',
        'referee.toml:2: [leds] data: driver = "shift_register" needs this pin; got ""',
    ),
}


@pytest.mark.parametrize(("text", "message"), MISTAKES.values(), ids=MISTAKES.keys())
def test_a_mistake_and_its_message(tmp_path, text, message):
    assert error(tmp_path, text) == message


def test_the_error_keeps_where_it_is(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, "[rules]\nplayers = 4\npointout_s = -1\n")
    err = caught.value
    assert (err.path, err.line, err.section, err.key) == (
        tmp_path / "referee.toml",
        3,
        "rules",
        "pointout_s",
    )


def test_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "referee.toml"
    path.write_bytes(b"[rules]\nplayers = \xff\n")
    with pytest.raises(ConfigError, match=r"referee.toml: cannot read the settings: not UTF-8"):
        load_config(path)


# The example file and the rendering


def test_the_example_file_is_in_sync():
    assert EXAMPLE.read_text(encoding="utf-8") == example_config(), (
        "referee.example.toml is generated: run `referee config --example > referee.example.toml`"
    )


def test_the_example_file_gives_exactly_the_defaults():
    config = load_config(EXAMPLE)
    assert config.path == EXAMPLE
    assert without_path(config) == default_config()


def test_the_example_names_every_key_with_its_description():
    text = example_config()
    doc = tomllib.loads(text)
    assert doc["rules"] == {  # players left to follow the rule set (see below)
        "rules": "super",
        "pointout_s": 10.0,
        "tie_ms": 0.0,
        "super_s": 10.0,
        "must_use_flipped": False,
        "deals": 1,
        "dealer_plays": True,
        "sudden_death": False,
    }
    assert f"# {RULE_KEYS['pointout_s'].allowed}\npointout_s = 10.0\n" in text
    assert doc["pins"] == PINMAP["pins"]


@pytest.mark.parametrize(
    ("rules", "players"), [("solo", 1), ("solitaire", 1), ("official", 4), ("super", 4)]
)
def test_the_example_switches_rule_set_by_its_rules_line_alone(tmp_path, rules, players):
    text = EXAMPLE.read_text(encoding="utf-8").replace('rules = "super"', f'rules = "{rules}"')
    game = load(tmp_path, text).game
    assert (game.rules.value, game.players) == (rules, players)
    # and a seat count is one # away
    seats = load(tmp_path, text.replace("# players = 4", f"players = {players}")).game
    assert seats.players == players


def test_the_settings_in_effect_load_back_into_themselves(tmp_path):
    config = load(
        tmp_path,
        '[rules]\nrules = "solo"\nplayers = 1\ntie_ms = 0.25\n'
        '[pins]\nP1 = "BOARD15"\nP2 = 20\nSUPER = "J8:29"\n'
        '[leds]\ndriver = "pins"\nP1 = "GPIO2"\n'
        '[beeper]\npin = ""\n[sound]\noutput = "soundcard"\n'
        "[buttons]\nresolution_us = 8000\n[display]\nwidth = 480\nheight = 320\n"
        '[serial]\ndevice = "/dev/serial/by-id/usb-\\"pico\\""\n[store]\npath = "x.db"\n',
    )
    rendered = render_config(config, named=True)
    assert rendered.startswith(f"# The settings in effect, read from {tmp_path}/referee.toml (")
    again = load_config(write(tmp_path, rendered, "again.toml"))
    assert without_path(again) == without_path(config)
    assert again.serial.device == '/dev/serial/by-id/usb-"pico"'


# `referee config`


def test_cli_prints_the_example(capsys):
    assert main(["config", "--example"]) == 0
    assert capsys.readouterr().out == example_config()


def test_cli_prints_the_settings_in_effect(tmp_path, capsys):
    path = write(tmp_path, "[rules]\nplayers = 3\n")
    assert main(["config", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert out == render_config(load_config(path), named=True)
    assert out.startswith(f"# The settings in effect, read from {path} (--config).\n")
    assert "\nplayers = 3\n" in out


def test_cli_says_when_it_found_no_file(capsys):
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# The settings in effect: the defaults, as no settings file was found")
    looked = ", ".join(map(str, search_paths()))
    assert f"\n# (looked for, in this order: {looked}).\n" in out


def test_cli_names_the_file_it_read_and_where_it_looked(capsys):
    here = write(Path.cwd(), "[rules]\nplayers = 3\n")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# The settings in effect, read from {here}\n# (looked for, in this")


def test_the_example_is_a_file_to_edit():
    assert "do not edit" not in example_config().lower()
    assert "A file to edit" in example_config()
    assert without_path(load_config(None)) == default_config()


def test_cli_refuses_a_bad_file_with_one_line(tmp_path, capsys):
    path = write(tmp_path, "[rules]\npointout_s = -1\n")
    assert main(["config", "--config", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"{path}:2: [rules] pointout_s: must be {RULE_KEYS['pointout_s'].allowed}; got -1\n"
    )


def test_cli_refuses_a_missing_file(tmp_path, capsys):
    assert main(["config", "--config", str(tmp_path / "nope.toml")]) == 2
    assert capsys.readouterr().err == f"{tmp_path}/nope.toml: no such settings file\n"


def test_the_microphone_listens_where_there_is_one_and_clips_are_bounded(tmp_path):
    audio = default_config().audio
    assert (audio.microphone, audio.clip_before_s, audio.clip_after_s) == ("auto", 1.0, 2.0)
    assert (audio.clips_mb, audio.replay_slowdown) == (200.0, 4.0)
    assert load(tmp_path, '[audio]\nmicrophone = "off"\n').audio.microphone == "off"
    assert error(tmp_path, "[audio]\nclips_mb = -1\n") == (
        "referee.toml:2: [audio] clips_mb: must be megabytes the clips may take,"
        " 0 (none kept) to 100000; got -1"
    )


def test_a_replay_is_slowed_as_a_tape_unless_its_pitch_is_kept(tmp_path):
    assert default_config().audio.replay_pitch is ReplayPitch.VARISPEED
    kept = load(tmp_path, '[audio]\nreplay_pitch = "kept"\n').audio.replay_pitch
    assert kept is ReplayPitch.KEPT
    assert error(tmp_path, '[audio]\nreplay_slowdown = 4\nreplay_pitch = "same"\n') == (
        "referee.toml:3: [audio] replay_pitch: must be how a replay is slowed: varispeed or"
        ' kept (its own pitch; README.md); got "same"'
    )


def test_cli_shows_the_rules_a_phone_set_over_the_files_and_where_they_are_kept(tmp_path, capsys):
    from referee.store.store import Store

    path = write(tmp_path, "[rules]\npointout_s = 8\n")
    store = tmp_path / "referee.db"
    with Store.open(store) as opened:
        opened.set_next_rules({"pointout_s": 5.0, "deals": 3})
    assert main(["config", "--config", str(path), "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert (
        f"# The [rules] keys marked below were set on a phone (docs/web.md); kept in {store},"
        in out
    )
    assert "\n# set on a phone; the file's: 8.0\n# seconds to show a SET" in out
    assert "\npointout_s = 5.0\n" in out and "\ndeals = 3\n" in out
    assert "\nplayers = 4\n" in out and out.count("set on a phone; the file's") == 2
    again = load_config(write(tmp_path, out, "again.toml"))  # loads back: what is in effect
    assert (again.game.pointout_ns, again.game.deals) == (5_000_000_000, 3)
    with Store.open(store) as opened:
        opened.set_next_rules({"rules": "solo"})
    write(tmp_path, "[rules]\nplayers = 3\n")
    assert main(["config", "--config", str(path), "--store", str(store)]) == 0
    said = capsys.readouterr()
    assert "set on a phone" not in said.out
    assert said.err == (
        "referee: the rules a phone set are not used: [rules] rules: rules=solo needs"
        ' players=1; got "solo"\n'
    )


def test_cli_marks_every_key_a_phones_rules_override_those_that_follow_them_too(tmp_path, capsys):
    from referee.store.store import Store

    path = write(tmp_path, '[rules]\nrules = "solo"\nplayers = 1\n')
    store = tmp_path / "referee.db"
    with Store.open(store) as opened:
        opened.set_next_rules({"rules": "official"})
    assert main(["config", "--config", str(path), "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert '\n# set on a phone; the file\'s: "solo"\n# super, official' in out
    assert (
        '\n# follows rules = "official", set on a phone; the file\'s: 1\n# a whole number'
    ) in out
    assert "\nplayers = 4\n" in out and "`referee config\n# --reset-page` forgets them." in out


def test_cli_reset_page_forgets_a_phones_rules_in_a_store_no_referee_runs(tmp_path, capsys):
    from referee.store.store import Store

    store = tmp_path / "referee.db"
    with Store.open(store) as opened:
        opened.set_next_rules({"rules": "official", "pointout_s": 5.0})
    assert main(["config", "--reset-page", "--store", str(store)]) == 0
    assert capsys.readouterr().out == (
        f"{store}: the referee is not running; the rules a phone set: forgotten"
        " (rules official, pointout_s 5.0)\n"
    )
    with Store.open_readonly(store) as opened:
        assert opened.next_rules() == {}
    assert main(["config", "--reset-page", "--store", str(store)]) == 0
    assert capsys.readouterr().out.endswith("the rules a phone set: none: nothing to forget\n")
    missing = tmp_path / "none.db"
    assert main(["config", "--reset-page", "--store", str(missing)]) == 0
    assert not missing.exists()  # no store is made to be emptied


def test_cli_reset_page_asks_the_running_referee(tmp_path, capsys):
    from referee.store.store import Store

    from .daemon import Daemon

    store = tmp_path / "referee.db"
    with Store.open(store) as opened:
        opened.set_next_rules({"rules": "official"})
    daemon = Daemon(store, rules=RuleSet.SOLO, players=1)
    try:
        assert daemon.app.session.settings.rules is RuleSet.OFFICIAL
        assert main(["config", "--reset-page", "--store", str(store)]) == 0
        assert capsys.readouterr().out == (
            f"{store}: the rules a phone set are forgotten: the referee plays by the file's\n"
        )
        assert daemon.app.session.settings.rules is RuleSet.SOLO  # its lobby took them
        with Store.open_readonly(store) as opened:
            assert opened.next_rules() == {}
    finally:
        daemon.stop()


def test_the_camera_is_off_unless_a_source_is_named(tmp_path):
    assert default_config().camera.source == "off"
    for word in ("auto", "picamera", "/dev/video2"):
        assert load(tmp_path, f'[camera]\nsource = "{word}"\n').camera.source == word
    # A folder is named relative to the settings file, as the store is.
    assert load(tmp_path, '[camera]\nsource = "./frames"\n').camera.source == str(
        tmp_path / "frames"
    )
    assert error(tmp_path, '[camera]\nsource = "usb"\n') == (
        'referee.toml:2: [camera] source: must be "off", "auto" (the first camera that gives'
        ' frames), "picamera", a /dev/videoN device, or a folder whose newest image is what'
        ' the camera sees; got "usb"'
    )


def test_the_camera_shows_the_set_a_caller_takes_unless_told_to_judge_it(tmp_path):
    assert default_config().camera.judge is CameraJudge.SHOW
    for word in ("show", "propose", "decide"):
        config = load(tmp_path, f'[camera]\nsource = "auto"\njudge = "{word}"\n')
        assert config.camera == CameraConfig("auto", CameraJudge(word))
    assert error(tmp_path, '[camera]\njudge = "yes"\n') == (
        "referee.toml:2: [camera] judge: must be how the box judges the SET a caller takes: show,"
        ' propose or decide (docs/rules.md); got "yes"'
    )
