"""The checks: the values a settings file gives, each and together, into a Config.

Every wrong value stops with one ConfigError naming the file, the line and the key.
"""

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from referee.buttons import PLAYER_BUTTONS
from referee.errors import ConfigError
from referee.rules.settings import SettingError, Settings, settings_from

from .lines import Source
from .schema import (
    CAMERA_WORDS,
    PIN_NAMES,
    SECTIONS,
    TIMES,
    AudioConfig,
    ButtonTiming,
    CameraConfig,
    Config,
    DisplayConfig,
    LedDriver,
    LedsConfig,
    SerialConfig,
    SoundConfig,
    SoundOutput,
    Unmet,
    WebConfig,
    toml_value,
)


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


def _read(source: Source, section: str, name: str, raw: Any) -> Any:
    setting = SECTIONS[section][name]
    kind = setting.key.kind
    value = str(raw) if setting.pin and type(raw) is int else raw
    try:
        if not setting.key.takes(value):
            raise ValueError
        return setting.parse(float(value) if kind is float else value)
    except (ValueError, OverflowError) as err:  # OverflowError: an integer beyond any float
        named = f", a GPIO pin named as gpiozero does ({PIN_NAMES})" if setting.pin else ""
        unmet = f", {err}" if isinstance(err, Unmet) else ""
        what = f"must be {setting.key.allowed}{named}{unmet}; got {toml_value(raw)}"
        raise source.error(what, section, name) from None


def _read_file(source: Source) -> dict[str, dict[str, Any]]:
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
            raise source.error(f"must be a table of keys; got {toml_value(table)}", section)
        given[section] = _read_table(source, section, table)
    return given


def _read_table(source: Source, section: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """A section's values, each checked alone, in the order given."""
    read = {}
    for name, raw in table.items():
        if name not in SECTIONS[section]:
            what = _unknown("key", name, list(SECTIONS[section]), str, _home(name))
            raise source.error(what, section, name)
        read[name] = _read(source, section, name, raw)
    return read


def check_rules(table: Mapping[str, Any], path: Path | None = None) -> Settings:
    """Rule keys as the settings file's `[rules]` table would give them, checked each and
    together with the same checks and words: ConfigError, naming path when given."""
    source = Source(path, {"rules": table}, {})
    return _rules(_read_table(source, "rules", table), source)


def _rules(given: dict[str, Any], source: Source) -> Settings:
    """The rule keys as the engine's Settings; a wrong one blamed as settings_from blames it."""
    try:
        return settings_from(given)
    except SettingError as err:
        got = source.written("rules", err.key)
        raise source.error(f"{err.what}; got {got}", "rules", err.key) from None


def _timing(values: dict[str, Any], source: Source) -> ButtonTiming:
    if values["stuck_s"] <= values["end_hold_s"]:
        section, key = source.blame(("buttons", "stuck_s"), ("buttons", "end_hold_s"))
        raise source.error(
            f"stuck_s ({values['stuck_s']}) must be more than end_hold_s ({values['end_hold_s']})",
            section,
            key,
        )
    if values["replay_hold_s"] >= values["end_hold_s"]:
        section, key = source.blame(("buttons", "replay_hold_s"), ("buttons", "end_hold_s"))
        raise source.error(
            f"replay_hold_s ({values['replay_hold_s']}) must be less than end_hold_s"
            f" ({values['end_hold_s']})",
            section,
            key,
        )
    return ButtonTiming(
        **{field: round(values[name] * unit) for name, (field, unit) in TIMES.items()}
    )


def _leds(values: dict[str, Any], players: int, source: Source) -> LedsConfig:
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


def _distinct(pins: list[tuple[tuple[str, str], str]], source: Source) -> None:
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


def _store_path(
    text: str, source: Source, section: str = "store", key: str = "path"
) -> Path | None:
    """A path the file names (the store's, the camera's folder), made absolute."""
    if not text:
        return None
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # ~user with no such user, or ~ with no home directory
        user = text.split("/")[0]
        what = "no home directory is known" if user == "~" else "no such user on this computer"
        got = source.written(section, key)
        raise source.error(f"{toml_value(user)}: {what}; got {got}", section, key) from None
    # Relative to the settings file, and made absolute now: lgpio changes the working
    # directory when it is imported.
    base = source.path.parent if source.path else Path()
    return (base / path).absolute()


def _camera(values: dict[str, Any], source: Source) -> CameraConfig:
    text, judge, where = values["source"], values["judge"], values["hint_where"]
    if text in CAMERA_WORDS:
        return CameraConfig(text, judge, where)
    return CameraConfig(str(_store_path(text, source, "camera", "source")), judge, where)


def check(source: Source) -> Config:
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
    pins = {button: pin for button, pin in values["pins"].items() if pin}
    used = [(("pins", b), pin) for b, pin in pins.items()]
    used += [(("leds", k), pin) for k, pin in (("data", leds.data), ("clock", leds.clock)) if pin]
    used += [(("leds", seat), pin) for seat, pin in leds.pins.items()]
    used += [(("beeper", "pin"), beeper_pin)] if beeper_pin else []
    _distinct(used, source)
    return Config(
        game=rules,
        buttons=_timing(values["buttons"], source),
        pins=pins,
        leds=leds,
        beeper_pin=beeper_pin,
        sound=sound,
        audio=AudioConfig(**values["audio"]),
        camera=_camera(values["camera"], source),
        display=display,
        serial=SerialConfig(**values["serial"]),
        store_path=_store_path(values["store"]["path"], source),
        web=WebConfig(**values["web"]),
        path=source.path,
    )
