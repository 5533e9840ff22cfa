"""The settings file: one TOML file, checked key by key, every key described once.

SECTIONS holds each key's kind, default and description; the same words check a value,
explain a wrong one and comment the example file (`referee config --example`), so the
three cannot drift apart. The `[rules]` keys are the rules engine's own (RULE_KEYS); the
pins' defaults are the box's one pin map (hardware/pinmap.toml, which the package carries
as referee/pinmap.toml).
"""

import difflib
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import platformdirs

from .edges import BUTTONS, PLAYER_BUTTONS
from .pi_header import gpio_name, load_pinmap
from .rules.settings import (
    MAX_SEATS,
    NS_PER_MS,
    NS_PER_S,
    RULE_KEYS,
    Key,
    RuleSet,
    Settings,
    settings_from,
    settings_values,
)

ENV_VAR = "REFEREE_CONFIG"
SYSTEM_PATH = Path("/etc/referee/referee.toml")
NS_PER_US = 1_000
_NS_PER_UNIT = {"s": NS_PER_S, "ms": NS_PER_MS, "us": NS_PER_US}


class ConfigError(Exception):
    """A settings file that cannot be used; its message says where and what, on one line."""

    def __init__(
        self,
        what: str,
        path: Path | None = None,
        line: int | None = None,
        section: str | None = None,
        key: str | None = None,
    ) -> None:
        self.what = what
        self.path = path
        self.line = line
        self.section = section
        self.key = key
        place = "" if path is None else f"{path}:{line}: " if line else f"{path}: "
        name = "" if section is None else f"[{section}] {key}: " if key else f"[{section}]: "
        super().__init__(f"{place}{name}{what}")


class LedDriver(StrEnum):
    SHIFT_REGISTER = "shift_register"
    PINS = "pins"
    NONE = "none"


class SoundOutput(StrEnum):
    BEEPER = "beeper"
    SOUNDCARD = "soundcard"
    NONE = "none"


@dataclass(frozen=True)
class ButtonTiming:
    """The arbiter's timing (DESIGN.md, "The arbiter"); each field is its key in ns."""

    debounce_ns: int
    settle_ns: int
    resolution_ns: int
    stuck_ns: int
    end_hold_ns: int


@dataclass(frozen=True)
class LedsConfig:
    driver: LedDriver
    data: str | None  # the shift register's two pins: None unless it is the driver
    clock: str | None
    pins: dict[str, str]  # seat (P1..P8) → its LED's pin with driver "pins", else empty


@dataclass(frozen=True)
class SoundConfig:
    output: SoundOutput
    volume: float


@dataclass(frozen=True)
class DisplayConfig:
    width: int  # 0 by 0: the screen's own size
    height: int
    fps: int


@dataclass(frozen=True)
class SerialConfig:
    device: str
    baud: int


@dataclass(frozen=True)
class Config:
    rules: Settings
    buttons: ButtonTiming
    pins: dict[str, str]  # every button of BUTTONS → its pin, as "GPIOn"
    leds: LedsConfig
    beeper_pin: str | None
    sound: SoundConfig
    display: DisplayConfig
    serial: SerialConfig
    store_path: Path | None  # None: the store's own default place
    path: Path | None  # the file read; None when there was none


# How a pin may be named, said once: in the [pins] comment and in a wrong pin's message.
_PIN_NAMES = "GPIO17 (BCM number), BCM17, BOARD11 (header pin), J8:11, WPI0 or 17"


def _gpio_or_none(name: str) -> str:
    return name and gpio_name(name)


def _as_is(value: Any) -> Any:
    return value


def _within(low: float, high: float) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not low <= value <= high:
            raise ValueError
        return value

    return check


def _zero_or_within(low: int, high: int) -> Callable[[Any], Any]:
    within = _within(low, high)
    return lambda value: value and within(value)


def _not_empty(value: str) -> str:
    if not value:
        raise ValueError
    return value


def _choices(enum: type[StrEnum]) -> str:
    *most, last = (member.value for member in enum)
    return f"{', '.join(most)} or {last}"


@dataclass(frozen=True)
class Setting:
    """A key of the file: its name, kind, default and description, and how it is checked."""

    key: Key
    parse: Callable[[Any], Any] = _as_is  # the value to use; ValueError: not allowed
    pin: bool = False  # a pin name, where a TOML integer is a GPIO number too


_PINMAP = load_pinmap()


def _settings(*settings: Setting) -> dict[str, Setting]:
    return {setting.key.name: setting for setting in settings}


def _setting(
    name: str, default: int | float | str, allowed: str, parse: Callable[[Any], Any] = _as_is
) -> Setting:
    return Setting(Key(name, type(default), allowed, default), parse)


def _pins(section: str, what: Mapping[str, str], parse: Callable[[str], str]) -> dict[str, Setting]:
    """Pin keys, whose defaults are the pin map's (none where it has none)."""
    defaults = _PINMAP.get(section, {})
    return {
        name: Setting(Key(name, str, text, defaults.get(name, "")), parse, pin=True)
        for name, text in what.items()
    }


_BUTTON_TEXT = {
    **{seat: f"player {seat[1:]}'s buzzer" for seat in PLAYER_BUTTONS},
    "VALID": "the green VALID button",
    "INVALID": "the red INVALID button",
    "SUPER": "the yellow SUPER button",
    "UNDO": "the UNDO button (held down, it ends the game)",
}
_WITH_REGISTER = f'with driver = "{LedDriver.SHIFT_REGISTER}"'
_WITH_PINS = f'with driver = "{LedDriver.PINS}", or "" for none'

_SECTION_TEXT = {
    "rules": "What the rules decide (RULES.md).",
    "buttons": 'How the arbiter reads the buttons (DESIGN.md, "The arbiter").',
    "pins": "The buttons' pins; each button wires between its pin and ground.\n"
    "Pins (here, in [leds] and [beeper]) are GPIO pins of the 40-pin header, named as\n"
    f"gpiozero does: {_PIN_NAMES}.",
    "leds": "The buzzers' LEDs.",
    "beeper": "The piezo beeper.",
    "sound": "Sounds.",
    "display": "The screen.",
    "serial": "The USB button board, when the buttons come from one.",
    "store": "The ledger of every accepted input (SQLite).",
}
SECTIONS: dict[str, dict[str, Setting]] = {
    "rules": {name: Setting(key) for name, key in RULE_KEYS.items()},
    "buttons": _settings(
        _setting(
            "debounce_ms",
            30.0,
            "milliseconds after a press's first edge whose edges are bounce, 0.1 to 1000",
            _within(0.1, 1000),
        ),
        _setting(
            "settle_ms",
            5.0,
            "milliseconds a serial board without watermark (T) lines may be late, 0 to 200",
            _within(0, 200),
        ),
        _setting(
            "resolution_us",
            100.0,
            "microseconds within which GPIO presses are too close to call, 0 to 100000",
            _within(0, 100_000),
        ),
        _setting(
            "stuck_s",
            10.0,
            "seconds held down until a button is stuck, more than end_hold_s, at most 3600",
            _within(0, 3600),
        ),
        _setting(
            "end_hold_s",
            3.0,
            "seconds UNDO is held down to end the game, 0.5 to 30",
            _within(0.5, 30),
        ),
    ),
    "pins": _pins("pins", {b: f"the pin of {_BUTTON_TEXT[b]}" for b in BUTTONS}, gpio_name),
    "leds": {
        **_settings(
            _setting(
                "driver",
                _PINMAP["leds"]["driver"],
                f"how the LEDs are driven: {_choices(LedDriver)}",
                LedDriver,
            )
        ),
        **_pins(
            "leds",
            {
                "data": f"the 74HC595's data pin {_WITH_REGISTER}",
                "clock": f"the 74HC595's clock pin (its latch wired to it) {_WITH_REGISTER}",
                **{
                    seat: f"the pin of player {seat[1:]}'s LED {_WITH_PINS}"
                    for seat in PLAYER_BUTTONS
                },
            },
            _gpio_or_none,
        ),
    },
    "beeper": _pins("beeper", {"pin": 'the beeper\'s pin, or "" for none'}, _gpio_or_none),
    "sound": _settings(
        _setting("output", "beeper", f"where sounds go: {_choices(SoundOutput)}", SoundOutput),
        _setting("volume", 0.5, "loudness, 0 to 1", _within(0, 1)),
    ),
    "display": _settings(
        _setting(
            "width",
            0,
            "pixels, 320 to 7680, or 0 with height 0 for the screen's own size",
            _zero_or_within(320, 7680),
        ),
        _setting(
            "height",
            0,
            "pixels, 240 to 4320, or 0 with width 0 for the screen's own size",
            _zero_or_within(240, 4320),
        ),
        _setting("fps", 30, "frames a second, 1 to 60", _within(1, 60)),
    ),
    "serial": _settings(
        _setting("device", "/dev/ttyACM0", "the board's serial device", _not_empty),
        _setting(
            "baud",
            115_200,
            "its bits a second for a UART board (a USB one ignores it), a positive whole number",
            _within(1, math.inf),
        ),
    ),
    "store": _settings(_setting("path", "", 'the ledger\'s file, or "" for the default place')),
}
# A timing key's ButtonTiming field and unit: debounce_ms → debounce_ns, in ms.
_TIMES = {
    name: (f"{stem}_ns", _NS_PER_UNIT[unit])
    for name in SECTIONS["buttons"]
    for stem, _, unit in [name.rpartition("_")]
}


@dataclass(frozen=True)
class _Source:
    """The file the values come from: to say where a wrong one is."""

    path: Path | None
    doc: Mapping[str, Any]
    lines: Mapping[tuple[str, str], int]  # (section, key) → line; (section, "") its header

    def given(self, section: str, key: str) -> bool:
        table = self.doc.get(section)
        return isinstance(table, dict) and key in table

    def written(self, section: str, key: str) -> str:
        """The value as the file writes it, for a message."""
        return _toml(self.doc[section][key])

    def blame(self, *keys: tuple[str, str]) -> tuple[str, str]:
        """Of keys that clash, the first the file gives (the one to change), else the first."""
        return next((k for k in keys if self.given(*k)), keys[0])

    def line(self, section: str, key: str = "") -> int | None:
        # A key missing from the file is blamed on its section's header, which may be a
        # key at the top (`rules = {players = 2}`, or `rules = 3` by mistake).
        lines = self.lines
        return lines.get((section, key)) or lines.get((section, "")) or lines.get(("", section))

    def error(self, what: str, section: str, key: str = "") -> ConfigError:
        return ConfigError(what, self.path, self.line(section, key), section, key)


_TABLE_LINE = re.compile(r"""\s*\[\[?\s*([\w.-]+)\s*\]""")
_KEY_LINE = re.compile(r"""\s*["']?([\w.-]+)["']?\s*=""")


def _lines(text: str) -> dict[tuple[str, str], int]:
    """Where each table and key is, found by scanning: tomllib does not say (best effort)."""
    lines: dict[tuple[str, str], int] = {}
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _TABLE_LINE.match(line):
            table = header[1].split(".")
            lines.setdefault((table[0], table[1] if len(table) > 1 else ""), number)
        elif key := _KEY_LINE.match(line):
            # A dotted key (`rules.players = 3`) says its section itself.
            names = [*table, *key[1].split(".")]
            lines.setdefault((names[0], names[1]) if len(names) > 1 else ("", names[0]), number)
    return lines


def _toml(value: Any) -> str:
    """A value as TOML writes it; tables and arrays only by kind, as messages show them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # JSON's escapes are TOML's too, but TOML also wants DEL escaped.
        return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)  # a date or time


def _home(name: str) -> str | None:
    """The section that has a key of this name."""
    return next((section for section, keys in SECTIONS.items() if name in keys), None)


def _unknown(
    what: str, name: str, known: list[str], show: Callable[[str], str], home: str | None = None
) -> str:
    folded = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), folded, n=1)
    if close:
        hint = f"; did you mean {show(folded[close[0]])}?"
    elif home:
        hint = f"; it belongs in [{home}]"
    else:
        hint = ""
    return f"unknown {what}{hint} (known: {', '.join(map(show, known))})"


def _read(source: _Source, section: str, name: str, raw: Any) -> Any:
    setting = SECTIONS[section][name]
    kind = setting.key.kind
    value = str(raw) if setting.pin and type(raw) is int else raw
    given = type(value)
    try:
        # A TOML integer is fine where a float is wanted; a bool is never a number.
        if given is not kind and not (kind is float and given is int):
            raise ValueError
        return setting.parse(float(value) if kind is float else value)
    except ValueError:
        named = f", a GPIO pin named as gpiozero does ({_PIN_NAMES})" if setting.pin else ""
        what = f"must be {setting.key.allowed}{named}; got {_toml(raw)}"
        raise source.error(what, section, name) from None


def _read_file(source: _Source) -> dict[str, dict[str, Any]]:
    """The values the file gives, section by section, in the file's order."""
    given: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
    for section, table in source.doc.items():
        if section not in SECTIONS:
            if not isinstance(table, dict) and (home := _home(section)):
                line = source.line("", section)
                raise ConfigError(
                    f"{section} is outside any section; put it under [{home}]", source.path, line
                )
            raise source.error(_unknown("section", section, list(SECTIONS), "[{}]".format), section)
        if not isinstance(table, dict):
            raise source.error(f"must be a table of keys; got {_toml(table)}", section)
        for name, raw in table.items():
            if name not in SECTIONS[section]:
                what = _unknown("key", name, list(SECTIONS[section]), str, _home(name))
                raise source.error(what, section, name)
            given[section][name] = _read(source, section, name, raw)
    return given


def _rules_problem(values: Mapping[str, Any]) -> str | None:
    try:
        settings_from(values)
    except ValueError as err:
        return str(err)
    return None


def _rules(given: dict[str, Any], source: _Source) -> Settings:
    """The rule keys as the engine's Settings; a wrong one named by what settings_from says."""
    for name, value in given.items():
        # A value that no rule set and number of players can go with is wrong in itself.
        companions = (
            {"rules": r.value, "players": n} for r in RuleSet for n in range(1, MAX_SEATS + 1)
        )
        if all(_rules_problem({**c, name: value}) for c in companions):
            raise source.error(
                f"must be {RULE_KEYS[name].allowed}; got {source.written('rules', name)}",
                "rules",
                name,
            )
    if _rules_problem(given) is None:
        return settings_from(given)
    # Keys that clash (rules=solo with players=2): blame the first, in the file's order,
    # that the keys before it cannot go with.
    so_far: dict[str, Any] = {}
    for name, value in given.items():
        so_far[name] = value
        if problem := _rules_problem(so_far):
            break
    raise source.error(f"{problem}; got {source.written('rules', name)}", "rules", name)


def _timing(values: dict[str, Any], source: _Source) -> ButtonTiming:
    if values["stuck_s"] <= values["end_hold_s"]:
        section, key = source.blame(("buttons", "stuck_s"), ("buttons", "end_hold_s"))
        raise source.error(
            f"stuck_s ({values['stuck_s']}) must be more than end_hold_s ({values['end_hold_s']})",
            section,
            key,
        )
    return ButtonTiming(
        **{field: round(values[name] * unit) for name, (field, unit) in _TIMES.items()}
    )


def _leds(values: dict[str, Any], players: int, source: _Source) -> LedsConfig:
    driver: LedDriver = values["driver"]
    if driver is LedDriver.SHIFT_REGISTER:
        for name in ("data", "clock"):
            if not values[name]:
                raise source.error(f'driver = "{driver}" needs this pin; got ""', "leds", name)
        return LedsConfig(driver, values["data"], values["clock"], {})
    if driver is LedDriver.PINS:
        for seat in PLAYER_BUTTONS[:players]:
            if not values[seat]:
                what = f'driver = "{driver}" needs a pin for every seat up to players = {players}'
                raise source.error(f'{what}; got ""', "leds", seat)
        return LedsConfig(driver, None, None, {s: values[s] for s in PLAYER_BUTTONS if values[s]})
    return LedsConfig(driver, None, None, {})


def _distinct(pins: list[tuple[tuple[str, str], str]], source: _Source) -> None:
    """No two buttons, LEDs or the beeper on one pin, however each was named."""
    owners: dict[str, tuple[str, str]] = {}
    for where, pin in pins:
        owner = owners.setdefault(pin, where)
        if owner == where:
            continue
        section, key = source.blame(where, owner)
        other = owner if (section, key) == where else where
        written = source.written(section, key) if source.given(section, key) else f'"{pin}"'
        alias = "" if written == f'"{pin}"' else f", which is {pin}"
        raise source.error(
            f"must be a pin no other button, LED or the beeper uses; got {written}{alias},"
            f" the pin of [{other[0]}] {other[1]}",
            section,
            key,
        )


def _store_path(text: str, source: _Source) -> Path | None:
    if not text:
        return None
    path = Path(text).expanduser()
    # Relative to the settings file, and made absolute now: lgpio changes the working
    # directory when it is imported (DESIGN.md).
    base = source.path.parent if source.path else Path()
    return (base / path).absolute()


def _config(source: _Source) -> Config:
    given = _read_file(source)
    values = {
        section: {
            name: given[section][name]
            if name in given[section]
            else _read(source, section, name, s.key.default)
            for name, s in settings.items()
        }
        for section, settings in SECTIONS.items()
    }
    rules = _rules(given["rules"], source)
    leds = _leds(values["leds"], rules.players, source)
    beeper_pin = values["beeper"]["pin"] or None
    sound = SoundConfig(**values["sound"])
    if sound.output is SoundOutput.BEEPER and beeper_pin is None:
        section, key = source.blame(("sound", "output"), ("beeper", "pin"))
        what = f'the beeper needs a pin: [sound] output = "{sound.output}" with [beeper] pin = ""'
        raise source.error(what, section, key)
    display = DisplayConfig(**values["display"])
    if (display.width == 0) != (display.height == 0):
        section, key = source.blame(("display", "width"), ("display", "height"))
        what = "width and height must both be 0 (the screen's own size) or both be set"
        what += f"; got {display.width} by {display.height}"
        raise source.error(what, section, key)
    used = [(("pins", b), pin) for b, pin in values["pins"].items()]
    used += [(("leds", k), pin) for k, pin in (("data", leds.data), ("clock", leds.clock)) if pin]
    used += [(("leds", seat), pin) for seat, pin in leds.pins.items()]
    used += [(("beeper", "pin"), beeper_pin)] if beeper_pin else []
    _distinct(used, source)
    return Config(
        rules=rules,
        buttons=_timing(values["buttons"], source),
        pins=dict(values["pins"]),
        leds=leds,
        beeper_pin=beeper_pin,
        sound=sound,
        display=display,
        serial=SerialConfig(**values["serial"]),
        store_path=_store_path(values["store"]["path"], source),
        path=source.path,
    )


def search_paths() -> list[Path]:
    """Where the settings file is looked for, first found first."""
    env = os.environ.get(ENV_VAR)
    user = platformdirs.user_config_path("referee") / "referee.toml"
    return [*([Path(env)] if env else []), user, SYSTEM_PATH]


def default_config() -> Config:
    return _config(_Source(None, {}, {}))


def load_config(path: Path | None = None) -> Config:
    """The settings in `path`, or in the first file of search_paths(); defaults if none."""
    if path is None:
        env = os.environ.get(ENV_VAR)
        if env and not Path(env).exists():
            # Named on purpose: falling back to the defaults would hide a typo.
            raise ConfigError(f"no such settings file (named by ${ENV_VAR})", Path(env))
        path = next((p for p in search_paths() if p.exists()), None)
        if path is None:
            return default_config()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("no such settings file", path) from None
    except OSError as err:
        raise ConfigError(f"cannot read the settings: {err.strerror}", path) from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"cannot read the settings: not UTF-8 ({err.reason})", path) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        at = re.search(r"at line (\d+)", str(err))
        raise ConfigError(f"not TOML: {err}", path, int(at[1]) if at else None) from None
    return _config(_Source(path, doc, _lines(text)))


def _values(config: Config) -> dict[str, dict[str, Any]]:
    """The keys that load back into this config: what `_config` reads, inverted."""
    leds = config.leds
    return {
        "rules": settings_values(config.rules),
        "buttons": {
            name: getattr(config.buttons, field) / unit for name, (field, unit) in _TIMES.items()
        },
        "pins": config.pins,
        "leds": {
            "driver": leds.driver,
            "data": leds.data or "",
            "clock": leds.clock or "",
            **{seat: leds.pins.get(seat, "") for seat in PLAYER_BUTTONS},
        },
        "beeper": {"pin": config.beeper_pin or ""},
        "sound": asdict(config.sound),
        "display": asdict(config.display),
        "serial": asdict(config.serial),
        "store": {"path": str(config.store_path or "")},
    }


def _render(config: Config, header: list[str]) -> str:
    values = _values(config)
    out = [f"# {line}" for line in header]
    for section, settings in SECTIONS.items():
        out += ["", *(f"# {line}" for line in _SECTION_TEXT[section].splitlines()), f"[{section}]"]
        for name, setting in settings.items():
            out += [f"# {setting.key.allowed}", f"{name} = {_toml(values[section][name])}"]
    return "\n".join(out) + "\n"


def render_config(config: Config) -> str:
    """The settings in effect, as a settings file that loads back into them."""
    if config.path is None:
        looked = ", ".join(map(str, search_paths()))
        return _render(
            config,
            [
                "The settings in effect: the defaults, as no settings file was found",
                f"(looked for {looked}).",
            ],
        )
    return _render(config, [f"The settings in effect, read from {config.path}."])


def example_config() -> str:
    """Every key with its default and what it may be: the committed referee.example.toml."""
    return _render(
        default_config(),
        [
            "The referee box's settings: every key, with its default and what it may be.",
            "Generated by `referee config --example`: do not edit. To change a setting, put",
            'its section and key in referee.toml (README.md, "Settings"); `referee config`',
            "checks the file and shows the settings in effect.",
        ],
    )
