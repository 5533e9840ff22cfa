"""What the settings file may hold: every key's kind, default and description, once.

SECTIONS holds each key's kind, default and description; the same words check a value,
explain a wrong one and comment the example file (`referee config --example`), so the
three cannot drift apart. The `[rules]` keys are the rules engine's own (RULE_KEYS); the
pins' defaults are the box's one pin map (hardware/pinmap.toml, which the package carries
as referee/pinmap.toml).
"""

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from referee.buttons import BUTTONS, PLAYER_BUTTONS, REPLAY
from referee.rules.settings import RULE_KEYS, Key, Settings
from referee.units import NS_PER_MS, NS_PER_S, SMALLEST_SCREEN

from .pi_header import gpio_name, load_pinmap

NS_PER_US = 1_000
NS_PER_UNIT = {"s": NS_PER_S, "ms": NS_PER_MS, "us": NS_PER_US}


class LedDriver(StrEnum):
    SHIFT_REGISTER = "shift_register"
    PINS = "pins"
    NONE = "none"


class ReplayPitch(StrEnum):
    VARISPEED = "varispeed"  # a tape played slower: lower, every onset as sharp
    KEPT = "kept"  # a time stretch (audio/stretch.py): the voices' own pitch


class CameraJudge(StrEnum):
    """What the box does with the SET a caller takes, seen (docs/rules.md, "The camera")."""

    SHOW = "show"  # shown: the table judges
    PROPOSE = "propose"  # shown, and the table confirms or overrules it with one press
    DECIDE = "decide"  # entered as the verdict; the judges' buttons and UNDO overrule it


class SoundOutput(StrEnum):
    BEEPER = "beeper"
    SOUNDCARD = "soundcard"
    NONE = "none"


@dataclass(frozen=True)
class ButtonTiming:
    """The arbiter's timing; each field is its key of [buttons] in ns."""

    debounce_ns: int
    settle_ns: int
    resolution_ns: int
    stuck_ns: int
    end_hold_ns: int
    replay_hold_ns: int  # 0: no gesture


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
class AudioConfig:
    """The microphone and the calls' clips (the auditive photo finish)."""

    microphone: str  # "auto", "off" or an ALSA capture device's name
    clip_before_s: float
    clip_after_s: float
    clips_mb: float  # 0: no clip is kept
    replay_slowdown: float  # 4: a replay lasts four times as long
    replay_pitch: ReplayPitch  # varispeed: two octaves lower at 4x; kept: as it was


@dataclass(frozen=True)
class CameraConfig:
    """The camera over the table (issue 32): what it sees, read as the cards laid out."""

    # "off", "auto" (the first /dev/video* that gives frames), "picamera", a /dev/videoN
    # device, or a folder whose newest image is what the camera sees (an absolute path)
    source: str
    judge: CameraJudge = CameraJudge.SHOW
    hint_where: bool = False  # a hint asked again shows where the SET is


CAMERA_WORDS = ("off", "auto", "picamera")


def _camera_source(value: str) -> str:
    # A path has a slash (./frames, relative to the settings file) or starts with ~: a
    # bare word that is none of the words ("Auto", "usb") is a mistake, not a folder.
    if value in CAMERA_WORDS or "/" in value or value.startswith("~"):
        return _no_nul(value)
    raise ValueError


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
class WebConfig:
    listen: str  # "auto", "off" or HOST:PORT (listen_address)


@dataclass(frozen=True)
class Config:
    game: Settings  # the [rules] table: what the next game plays by
    buttons: ButtonTiming
    pins: dict[str, str]  # every button of BUTTONS, and REPLAY if fitted → its pin, "GPIOn"
    leds: LedsConfig
    beeper_pin: str | None
    sound: SoundConfig
    audio: AudioConfig
    camera: CameraConfig
    display: DisplayConfig
    serial: SerialConfig
    store_path: Path | None  # None: the store's own default place
    web: WebConfig
    path: Path | None  # the file read; None when there was none


# How a pin may be named, said once: in the [pins] comment and in a wrong pin's message.
PIN_NAMES = "GPIO17 (BCM number), BCM17, BOARD11 (header pin), J8:11, WPI0 or 17"


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


def listen_address(text: str) -> tuple[str, int]:
    """HOST:PORT (an IPv6 address in brackets: [::]:8080) as the host and the port;
    ValueError if it is not one."""
    host, colon, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not (colon and host and port.isdigit() and port.isascii() and int(port) <= 65535):
        raise ValueError(f"not HOST:PORT: {text!r}")
    return host, int(port)


def _listen(value: str) -> str:
    if value not in ("auto", "off"):
        listen_address(value)
    return value


class Unmet(ValueError):
    """A value that breaks a condition the key's description leaves out (it is rare)."""


def _no_nul(value: str) -> str:
    # The operating system ends a path at a NUL: what is opened would not be what is named.
    if "\0" in value:
        raise Unmet("with no NUL character")
    return value


def _not_empty(value: str) -> str:
    if not value:
        raise ValueError
    return _no_nul(value)


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

SECTION_TEXT = {
    "rules": "What the rules decide (docs/rules.md).",
    "buttons": "How the buttons are read: a press counts from its first edge; the edges\n"
    "after it within debounce_ms are its bounce.",
    "pins": "The buttons' pins; each button wires between its pin and ground.\n"
    "Pins (here, in [leds] and [beeper]) are GPIO pins of the 40-pin header, named as\n"
    f"gpiozero does: {PIN_NAMES}.",
    "leds": "The buzzers' LEDs.",
    "beeper": "The piezo beeper.",
    "sound": "Sounds.",
    "audio": "The microphone: each call's sound kept as a clip, replayed slowed down.\n"
    "While it listens the screen shows a microphone mark; only the last 30 s are in\n"
    "memory, and only the calls' clips are written (beside the store).",
    "camera": "The camera over the table: the cards laid out, read (docs/operating.md).\n"
    "While it watches the screen shows a camera mark; its frames are read in memory,\n"
    "and only each call's snapshot is written (beside its clip, within clips_mb).",
    "display": "The screen.",
    "serial": "The USB button board, when the buttons come from one.",
    "store": "The ledger of every accepted input (SQLite).",
    "web": "The page on the table's phones (`referee web`, docs/web.md).",
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
        _setting(
            "replay_hold_s",
            1.0,
            "seconds UNDO is held down, and let go before end_hold_s, for REPLAY;"
            " 0 for none, else less than end_hold_s",
            _within(0, 30),
        ),
    ),
    "pins": {
        **_pins("pins", {b: f"the pin of {_BUTTON_TEXT[b]}" for b in BUTTONS}, gpio_name),
        **_pins(
            "pins",
            {REPLAY: 'the pin of the optional blue REPLAY button, or "" for none'},
            _gpio_or_none,
        ),
    },
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
    "audio": _settings(
        _setting(
            "microphone",
            "auto",
            'a capture device: "auto" (the first there is, if any), "off", or an ALSA name',
            _not_empty,
        ),
        _setting(
            "clip_before_s", 1.0, "seconds of a clip before its call, 0 to 10", _within(0, 10)
        ),
        _setting(
            "clip_after_s", 2.0, "seconds of a clip after its call, 0.5 to 10", _within(0.5, 10)
        ),
        _setting(
            "clips_mb",
            200.0,
            "megabytes the clips may take, 0 (none kept) to 100000",
            _within(0, 100_000),
        ),
        _setting(
            "replay_slowdown", 4.0, "how many times slower a replay plays, 1 to 8", _within(1, 8)
        ),
        _setting(
            "replay_pitch",
            "varispeed",
            f"how a replay is slowed: {_choices(ReplayPitch)} (its own pitch; README.md)",
            ReplayPitch,
        ),
    ),
    "camera": _settings(
        _setting(
            "source",
            "off",
            '"off", "auto" (the first camera that gives frames), "picamera", a /dev/videoN'
            " device, or a folder whose newest image is what the camera sees",
            _camera_source,
        ),
        _setting(
            "judge",
            "show",
            f"how the box judges the SET a caller takes: {_choices(CameraJudge)} (docs/rules.md)",
            CameraJudge,
        ),
        _setting(
            "hint_where",
            False,
            "true: a hint asked again within a few seconds shows where the SET is (docs/rules.md)",
        ),
    ),
    "display": _settings(
        _setting(
            "width",
            0,
            f"pixels, {SMALLEST_SCREEN[0]} to 7680, or 0 with height 0 for the screen's own size",
            _zero_or_within(SMALLEST_SCREEN[0], 7680),
        ),
        _setting(
            "height",
            0,
            f"pixels, {SMALLEST_SCREEN[1]} to 4320, or 0 with width 0 for the screen's own size",
            _zero_or_within(SMALLEST_SCREEN[1], 4320),
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
    "store": _settings(
        _setting("path", "", 'the ledger\'s file, or "" for the default place', _no_nul)
    ),
    "web": _settings(
        _setting(
            "listen",
            "auto",
            'HOST:PORT to serve the page on, "off", or "auto" (on a Pi 0.0.0.0:8080, else'
            " 127.0.0.1:8080)",
            _listen,
        )
    ),
}
# A timing key's ButtonTiming field and unit: debounce_ms → debounce_ns, in ms.
TIMES = {
    name: (f"{stem}_ns", NS_PER_UNIT[unit])
    for name in SECTIONS["buttons"]
    for stem, _, unit in [name.rpartition("_")]
}


def toml_value(value: Any) -> str:
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
