"""The Raspberry Pi's 40-pin header and the box's pin map on it.

The header: physical pin, BCM GPIO, 3V3/5V/GND, and the GPIOs the box keeps free for
screens and buses (docs/design.md, "Conventions followed"). The layout comes from
gpiozero's own board data rather than a second copy kept here, imported only when a
name needs it: gpiozero's package imports every device it has and importlib.metadata,
2.5 MB of `referee web`, which reads the settings but drives no pin. The pin map is
hardware/pinmap.toml, which the package carries as referee/pinmap.toml.
"""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpiozero.pins.pi import PiBoardInfo

PI_MODEL = Path("/proc/device-tree/model")


def is_raspberry_pi() -> bool:
    try:
        return "Raspberry Pi" in PI_MODEL.read_text(errors="replace")
    except OSError:
        return False


@cache
def _board() -> "PiBoardInfo":
    """Every Pi with the 40-pin header (the B+ onwards) shares its layout: the Pi 5's table
    stands for all, and gpiozero reads it without a Pi."""
    from gpiozero.pins.pi import PiBoardInfo

    return PiBoardInfo.from_revision(0xD04170)


RESERVED: Mapping[int, str] = {
    1: "HAT ID EEPROM clock",
    2: "I2C SDA",
    3: "I2C SCL",
    7: "SPI0 CE1 (touch)",
    8: "SPI0 CE0 (screen)",
    9: "SPI0 MISO",
    10: "SPI0 MOSI",
    11: "SPI0 SCLK",
    14: "UART TX",
    15: "UART RX",
    24: "SPI screen D/C",
    25: "SPI screen reset",
}


@dataclass(frozen=True, slots=True)
class HeaderPin:
    number: int  # physical pin, 1..40
    name: str  # "GPIO<n>" (BCM numbering), "3V3", "5V" or "GND"
    row: int  # 1..20, pin 1's row first
    col: int  # 1: the odd pins' column, 2: the even pins' (the board's edge)

    @property
    def gpio(self) -> int | None:
        return int(self.name.removeprefix("GPIO")) if self.name.startswith("GPIO") else None


@cache
def load_pinmap() -> Mapping[str, Any]:
    """The box's one pin map: [pins], [leds] and [beeper]."""
    text = resources.files("referee").joinpath("pinmap.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def _pinmap_names() -> frozenset[str]:
    """The pin map's own pins: "GPIOn" names of the header already (test_wiring checks
    each through gpiozero)."""
    pinmap = load_pinmap()
    leds, beeper = pinmap["leds"], pinmap["beeper"]
    names = [*pinmap["pins"].values(), leds["data"], leds["clock"], beeper["pin"]]
    return frozenset(name for name in names if name)


def gpio_name(name: str) -> str:
    """The "GPIOn" name of a header pin named any way gpiozero accepts; ValueError if none.

    A name of the pin map's is its own: the settings' defaults, and a settings file that
    names the pins as the example file does, are read without gpiozero's import."""
    if name in _pinmap_names():
        return name
    canonical: str = _board().to_gpio(name)  # gpiozero's PinInvalidPin is a ValueError
    return canonical


@cache
def header() -> tuple[HeaderPin, ...]:
    """All 40 pins, pin 1 first."""
    pins = _board().headers["J8"].pins
    return tuple(HeaderPin(p.number, p.name, p.row, p.col) for _, p in sorted(pins.items()))


def header_pin(name: str) -> HeaderPin:
    """The header pin a gpiozero pin name means: by BCM number ("GPIO<n>", "BCM<n>") or by
    physical pin ("BOARD<n>", "J8:<n>"). A name of no GPIO raises gpiozero's ValueError."""
    board = _board()
    _, info = next(board.find_pin(board.to_gpio(name)))
    number: int = info.number
    return header()[number - 1]
