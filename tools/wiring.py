"""The build documents made from the one pin map: the pin table in wiring.md and the
diagram hardware/wiring.svg; and the enclosure's drilling templates, a page a file in
hardware/enclosure/ (tools/enclosure.py). `python -m tools.wiring` (or `make wiring`) rewrites
them all.
"""

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.buttons import JUDGE_BUTTONS, PLAYER_BUTTONS, REPLAY
from referee.config.pi_header import RESERVED, HeaderPin, header, header_pin, load_pinmap

from . import enclosure
from .wiring_svg import PinLabel, draw

TABLE_BEGIN = "<!-- pin-table:begin -->"
TABLE_END = "<!-- pin-table:end -->"
SVG_PATH = Path("hardware/wiring.svg")
ENCLOSURE_DIR = Path("hardware/enclosure")
DOC_PATH = Path("wiring.md")

JUDGE_COLOURS: Mapping[str, str] = dict(
    zip(JUDGE_BUTTONS, ("green", "red", "yellow", "white"), strict=True)
)
REPLAY_COLOUR = "blue"


@dataclass(frozen=True, slots=True)
class Wire:
    """A header pin the box uses: what it is and where its wire goes."""

    role: str  # a button ("P1", "VALID"), "data", "clock", "beeper" or a supply ("gnd.board")
    pin: HeaderPin
    what: str
    goes_to: str
    group: str  # "players", "judges", "board" or "power"


def signals(pinmap: Mapping[str, Any]) -> list[Wire]:
    """The GPIOs the pin map uses, buttons first."""
    pins: Mapping[str, str] = pinmap["pins"]
    leds: Mapping[str, str] = pinmap["leds"]
    if leds.get("driver") != "shift_register":
        raise ValueError("the wiring documents describe only the shift_register LED driver")
    unknown = sorted(set(pins) - {*PLAYER_BUTTONS, *JUDGE_BUTTONS, REPLAY})
    if unknown:
        raise ValueError(f"the wiring documents know no button {unknown}")
    no_lug = "NO lug of its microswitch"
    wires = [Wire(p, header_pin(pins[p]), f"{p} buzzer", no_lug, "players") for p in PLAYER_BUTTONS]
    wires += [
        Wire(j, header_pin(pins[j]), f"{j} button ({colour})", no_lug, "judges")
        for j, colour in JUDGE_COLOURS.items()
    ]
    if REPLAY in pins:  # optional; its COM lug joins the judge buttons' ground
        what = f"{REPLAY} button ({REPLAY_COLOUR}, optional)"
        wires.append(Wire(REPLAY, header_pin(pins[REPLAY]), what, no_lug, "judges"))
    return [
        *wires,
        Wire("data", header_pin(leds["data"]), "LED data", "74HC595 SER (chip pin 14)", "board"),
        Wire(
            "clock",
            header_pin(leds["clock"]),
            "LED clock",
            "74HC595 SRCLK + RCLK (chip pins 11 + 12, tied)",
            "board",
        ),
        Wire(
            "beeper",
            header_pin(pinmap["beeper"]["pin"]),
            "beeper",
            "1 kΩ resistor to the transistor's base",
            "board",
        ),
    ]


def _distance(a: HeaderPin, b: HeaderPin) -> float:
    return abs(a.row - b.row) + (0.5 if a.col != b.col else 0.0)


def _nearest(name: str, to: Sequence[HeaderPin]) -> HeaderPin:
    """The `name` pin (GND, 3V3, 5V) with the shortest wires to a group of pins."""
    return min(
        (p for p in header() if p.name == name),
        key=lambda p: (sum(_distance(p, q) for q in to), p.number),
    )


def supplies(signals: Sequence[Wire]) -> list[Wire]:
    """The ground and supply pins each group of parts takes: the nearest ones."""

    def group(name: str) -> list[HeaderPin]:
        return [w.pin for w in signals if w.group == name]

    board = group("board")
    return [
        Wire(
            "gnd.players",
            _nearest("GND", group("players")),
            "ground: buzzers",
            "every buzzer's COM lug",
            "power",
        ),
        Wire(
            "gnd.judges",
            _nearest("GND", group("judges")),
            "ground: judges",
            "the judge buttons' COM lugs",
            "power",
        ),
        Wire(
            "gnd.board",
            _nearest("GND", board),
            "ground: LED board",
            "74HC595 pins 8 + 13, ULN2803A pin 9, transistor emitter, 12 V supply \N{MINUS SIGN}",
            "power",
        ),
        Wire(
            "3v3.board",
            _nearest("3V3", board),
            "3.3 V: LED board",
            "74HC595 pins 16 + 10",
            "power",
        ),
        Wire(
            "5v.board",
            _nearest("5V", board),
            "5 V: LED board",
            "piezo +, and the lamps' + if they are 5 V lamps",
            "power",
        ),
    ]


def _by_pin(wires: Sequence[Wire]) -> dict[int, Wire]:
    """Wires by header pin; groups sharing a ground pin share its row."""
    by_pin: dict[int, Wire] = {}
    for w in wires:
        old = by_pin.get(w.pin.number)
        if old is not None:
            if old.group != "power" or w.group != "power":
                raise ValueError(f"header pin {w.pin.number} is given twice")
            w = Wire(
                old.role, w.pin, f"{old.what}; {w.what}", f"{old.goes_to}; {w.goes_to}", "power"
            )
        by_pin[w.pin.number] = w
    return by_pin


def _idle(pin: HeaderPin) -> str:
    if pin.gpio is None:
        return "spare"
    if pin.gpio in RESERVED:
        return f"left free: {RESERVED[pin.gpio]}"
    return "free"


def _wires(pinmap: Mapping[str, Any]) -> list[Wire]:
    sig = signals(pinmap)
    return [*sig, *supplies(sig)]


def pin_table(pinmap: Mapping[str, Any]) -> str:
    """The markdown table of all 40 header pins, as it stands between the markers."""
    used = _by_pin(_wires(pinmap))
    lines = ["| Pin | Name | What | Wire goes to |", "|---:|---|---|---|"]
    for pin in header():
        wire = used.get(pin.number)
        if wire is None:
            lines.append(f"| {pin.number} | {pin.name} | {_idle(pin)} | |")
        else:
            lines.append(f"| {pin.number} | {pin.name} | **{wire.what}** | {wire.goes_to} |")
    return "\n".join(lines) + "\n"


def diagram(pinmap: Mapping[str, Any]) -> str:
    """The text of hardware/wiring.svg."""
    wires = _wires(pinmap)
    used = _by_pin(wires)
    labels = [
        PinLabel(pin, used[pin.number].what, used[pin.number].group)
        if pin.number in used
        else PinLabel(pin, _idle(pin), "idle")
        for pin in header()
    ]
    return draw(labels, {w.role: w.pin for w in wires})


def with_table(doc: str, table: str) -> str:
    """`doc` with `table` put between the pin-table markers."""
    head, begin, rest = doc.partition(TABLE_BEGIN)
    _, end, tail = rest.partition(TABLE_END)
    if not begin or not end:
        raise ValueError(f"the markers {TABLE_BEGIN} and {TABLE_END} are missing")
    return f"{head}{TABLE_BEGIN}\n{table}{TABLE_END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.wiring", description=__doc__)
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the repository to write into (default: the one this module is in)",
    )
    root: Path = parser.parse_args(argv).root.resolve()
    pinmap = load_pinmap()
    doc = root / DOC_PATH
    try:
        text = with_table(doc.read_text(encoding="utf-8"), pin_table(pinmap))
    except (OSError, ValueError) as err:
        print(f"{doc}: {err}", file=sys.stderr)
        return 1
    doc.write_text(text, encoding="utf-8")
    (root / SVG_PATH).write_text(diagram(pinmap), encoding="utf-8")
    pages = root / ENCLOSURE_DIR
    pages.mkdir(exist_ok=True)
    drawn = {page.file: enclosure.page_svg(page) for page in enclosure.all_pages()}
    for old in pages.glob("*.svg"):  # a page no drawing has any more
        if old.name not in drawn:
            old.unlink()
    for name, text in drawn.items():
        (pages / name).write_text(text, encoding="utf-8")
    print(f"wrote {root / SVG_PATH}, {len(drawn)} pages in {pages} and the pin table in {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
