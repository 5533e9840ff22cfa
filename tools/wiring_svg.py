"""Draws hardware/wiring.svg by hand: the 40-pin header with every pin labelled, one
buzzer's wiring, and the LED board (74HC595, ULN2803A, eight lamps, the beeper).

Plain SVG text, no drawing library: it must read well in a markdown viewer, so the
picture sits on a white card (dark themes would hide black lines) and its text is large.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from referee.config.pi_header import HeaderPin

WIDTH = 1000
FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"

INK = "#222222"
MUTED = "#777777"
COLOURS: Mapping[str, str] = {
    "players": "#2563b0",
    "judges": "#8a3ca8",
    "board": "#0f8a6c",
    "GND": "#222222",
    "3V3": "#d9822b",
    "5V": "#d23b34",
    "idle": "#b8b8b8",
}
LEGEND = (
    ("players", "player buzzer"),
    ("judges", "judge button"),
    ("board", "LED board"),
    ("GND", "ground"),
    ("3V3", "3.3 V"),
    ("5V", "5 V"),
    ("idle", "left free / spare"),
)


@dataclass(frozen=True, slots=True)
class PinLabel:
    pin: HeaderPin
    text: str
    group: str  # a key of COLOURS other than the supplies, or "power"


class SvgCanvas:
    """SVG drawn as text: shapes and labels in the order added, on a white card."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, tag: str, body: str = "", /, **attrs: object) -> None:
        text = " ".join(f"{k.replace('_', '-')}={quoteattr(str(v))}" for k, v in attrs.items())
        self.parts.append(f"<{tag} {text}>{body}</{tag}>" if body else f"<{tag} {text}/>")

    def text(
        self,
        x: float,
        y: float,
        s: str,
        size: float = 13,
        anchor: str = "start",
        weight: str = "normal",
        fill: str = INK,
    ) -> None:
        self.add(
            "text",
            escape(s),
            x=x,
            y=y,
            font_size=size,
            text_anchor=anchor,
            font_weight=weight,
            fill=fill,
        )

    def line(self, *points: tuple[float, float], colour: str = INK, width: float = 2) -> None:
        self.add(
            "polyline",
            points=" ".join(f"{x:g},{y:g}" for x, y in points),
            fill="none",
            stroke=colour,
            stroke_width=width,
            stroke_linejoin="round",
        )

    def dot(self, x: float, y: float) -> None:
        self.add("circle", cx=x, cy=y, r=4, fill=INK)

    def box(self, x: float, y: float, w: float, h: float, **attrs: object) -> None:
        self.add("rect", x=x, y=y, width=w, height=h, **attrs)

    def resistor(self, x: float, y: float, label: str, vertical: bool = False) -> None:
        """A resistor centred on (x, y), 36 long, label beside it."""
        if vertical:
            self.box(x - 7, y - 18, 14, 36, fill="white", stroke=INK, stroke_width=2)
            self.text(x + 14, y + 5, label, size=12)
        else:
            self.box(x - 18, y - 7, 36, 14, fill="white", stroke=INK, stroke_width=2)
            self.text(x, y - 12, label, size=12, anchor="middle")

    def ground(self, x: float, y: float) -> None:
        for i, half in enumerate((12, 8, 4)):
            self.line((x - half, y + 5 * i), (x + half, y + 5 * i))

    def render(self, height: float, width: float = WIDTH, unit: str = "") -> str:
        """The document; `unit` "mm" makes one unit a millimetre when printed at 100 %."""
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}{unit}"'
            f' height="{height:g}{unit}" viewBox="0 0 {width:g} {height:g}"'
            f" font-family={quoteattr(FONT)}>"
        )
        card = f'<rect x="0" y="0" width="{width:g}" height="{height:g}" fill="white"/>'
        return "\n".join(
            ['<?xml version="1.0" encoding="UTF-8"?>', head, card, *self.parts, "</svg>\n"]
        )


def _colour(label: PinLabel) -> str:
    return COLOURS[label.pin.name] if label.group == "power" else COLOURS[label.group]


def _where(pin: HeaderPin) -> str:
    return f"{pin.name} · header pin {pin.number}"


# The header picture: pin 1 at the top, odd pins in the left column.
HEADER_TOP = 150
PITCH = 30
LEFT_PIN, RIGHT_PIN = 480, 520


def _pin_y(pin: HeaderPin) -> int:
    return HEADER_TOP + (pin.row - 1) * PITCH


def _header(c: SvgCanvas, labels: Sequence[PinLabel]) -> int:
    c.text(40, 102, "1. The Pi's 40-pin header, seen from above", size=18, weight="bold")
    c.text(
        40,
        124,
        "Pin 1 has the square pad, at the end farthest from the USB ports;"
        " the even pins run along the board's edge.",
        size=13,
        fill=MUTED,
    )
    bottom = _pin_y(labels[-1].pin)
    c.box(456, HEADER_TOP - 22, 88, bottom - HEADER_TOP + 44, rx=6, fill="#3a3a3a")
    for label in labels:
        pin, y = label.pin, _pin_y(label.pin)
        left = pin.col == 1
        x = LEFT_PIN if left else RIGHT_PIN
        colour = _colour(label)
        used = label.group != "idle"
        dark = colour not in (COLOURS["idle"], COLOURS["3V3"])
        if pin.number == 1:
            c.box(x - 11, y - 11, 22, 22, fill=colour, stroke="white", stroke_width=1.5)
        else:
            c.add("circle", cx=x, cy=y, r=11, fill=colour, stroke="white", stroke_width=1.5)
        c.text(
            x,
            y + 4,
            str(pin.number),
            size=11,
            anchor="middle",
            weight="bold",
            fill="white" if dark else INK,
        )
        words = f"{label.text} · {pin.name}"
        width = 8.2 * len(words) + 16  # DejaVu Sans Bold at 13 px: wider than most fonts
        edge = x - 28 if left else x + 28
        start = edge - width if left else edge
        c.line((x + (-11 if left else 11), y), (edge, y), colour=colour, width=2)
        if used:
            c.box(start, y - 12, width, 24, rx=5, fill="white", stroke=colour, stroke_width=2)
        c.text(
            edge - 8 if left else edge + 8,
            y + 5,
            words,
            anchor="end" if left else "start",
            weight="bold" if used else "normal",
            fill=INK if used else MUTED,
        )
    hat_bottom = _pin_y(labels[25].pin) + 12
    c.line(
        (28, HEADER_TOP - 12),
        (20, HEADER_TOP - 12),
        (20, hat_bottom),
        (28, hat_bottom),
        colour=MUTED,
    )
    c.add(
        "text",
        "a HAT-style screen covers pins 1-26",
        x=14,
        y=(HEADER_TOP + hat_bottom) // 2,
        font_size=12,
        text_anchor="middle",
        fill=MUTED,
        transform=f"rotate(-90 14 {(HEADER_TOP + hat_bottom) // 2})",
    )
    y = bottom + 60
    x = 40
    for key, text in LEGEND:
        c.add("circle", cx=x + 8, cy=y - 5, r=8, fill=COLOURS[key])
        c.text(x + 22, y, text, size=13)
        x += 30 + 8 * len(text) + 12
    return y + 30


def _buzzer(c: SvgCanvas, top: int, at: Mapping[str, HeaderPin]) -> int:
    c.text(40, top + 30, "2. Every buzzer and judge button", size=18, weight="bold")
    c.text(
        40,
        top + 52,
        "The microswitch's COM and NO lugs only: NO closes when pressed. Lug order varies:"
        " read the marks.",
        size=13,
        fill=MUTED,
    )
    y = top + 110
    gpio_y, gnd_y = y + 70, y + 100
    # The Pi's side: the button's pin, its internal pull-up, and a ground pin.
    c.box(40, y - 30, 290, 150, rx=8, fill="#f4f4f4", stroke=MUTED, stroke_dasharray="6 4")
    c.text(56, y - 8, "the Pi", size=13, weight="bold", fill=MUTED)
    c.text(56, y + 12, "inside: a pull-up (about 50 kΩ) to 3.3 V,", size=12, fill=MUTED)
    c.text(56, y + 28, "switched on by referee", size=12, fill=MUTED)
    c.text(
        316,
        gpio_y + 5,
        "the button's GPIO (table)",
        size=13,
        anchor="end",
        weight="bold",
        fill=COLOURS["players"],
    )
    c.text(
        316,
        gnd_y + 5,
        f"GND: pin {at['gnd.players'].number} (buzzers), {at['gnd.judges'].number} (judges)",
        size=13,
        anchor="end",
        weight="bold",
    )
    # The microswitch, lugs at the bottom: NO to the GPIO, COM to ground, NC left empty.
    c.box(420, y - 20, 180, 56, rx=6, fill="white", stroke=INK, stroke_width=2)
    c.text(510, y + 2, "microswitch", size=13, anchor="middle", weight="bold")
    lugs = {"NO": 450, "COM": 510, "NC": 570}
    for lug, lx in lugs.items():
        c.box(lx - 8, y + 36, 16, 14, fill="#cccccc", stroke=INK)
        c.text(lx, y + 26, lug, size=12, anchor="middle")
    c.line(
        (lugs["NO"], y + 50),
        (lugs["NO"], gpio_y),
        (330, gpio_y),
        colour=COLOURS["players"],
        width=3,
    )
    c.line((lugs["COM"], y + 50), (lugs["COM"], gnd_y), (330, gnd_y), width=3)
    c.text(lugs["NC"], y + 70, "nothing", size=12, anchor="middle", fill=MUTED)
    # The lamp: + to the lamp supply, minus to this player's ULN2803A output.
    c.box(760, y - 20, 130, 56, rx=6, fill="#fff7d6", stroke=INK, stroke_width=2)
    c.text(825, y + 2, "lamp", size=13, anchor="middle", weight="bold")
    c.text(825, y + 20, "(5 V or 12 V)", size=12, anchor="middle")
    c.text(792, y + 52, "\N{MINUS SIGN}", size=15, anchor="middle", weight="bold")
    c.text(858, y + 52, "+", size=15, anchor="middle", weight="bold")
    c.line((792, y + 60), (792, gnd_y), (730, gnd_y), colour=COLOURS["board"], width=3)
    c.line((858, y + 60), (858, gnd_y + 8), colour=COLOURS["5V"], width=3)
    c.text(722, gnd_y - 16, "this player's", size=12, anchor="end")
    c.text(722, gnd_y, "ULN2803A output", size=12, anchor="end")
    c.text(858, gnd_y + 26, "V+ (5 V or 12 V)", size=12, anchor="middle")
    c.text(825, gnd_y + 48, "(judge buttons need no lamp)", size=12, anchor="middle", fill=MUTED)
    return gnd_y + 70


def _board(c: SvgCanvas, top: int, at: Mapping[str, HeaderPin]) -> int:
    board = COLOURS["board"]
    c.text(
        40, top + 30, "3. The LED board: 74HC595, ULN2803A and the lamps", size=18, weight="bold"
    )
    c.text(
        40,
        top + 52,
        "Small grey numbers are the chips' own pin numbers (pin 1 is left of the notch).",
        size=13,
        fill=MUTED,
    )
    chip_top = top + 110
    rows = [chip_top + 56 + 34 * i for i in range(8)]
    chip_bottom = rows[-1] + 30
    sr_x, sr_w = 330, 130
    uln_x, uln_w = 580, 130
    for x, w, name in ((sr_x, sr_w, "74HC595"), (uln_x, uln_w, "ULN2803A")):
        c.box(
            x, chip_top, w, chip_bottom - chip_top, rx=6, fill="#f2f2f2", stroke=INK, stroke_width=2
        )
        c.text(x + w / 2, chip_top + 24, name, size=14, anchor="middle", weight="bold")
    # 74HC595 inputs, grouped by what feeds them.
    inputs = (
        ("SER", 14),
        ("SRCLK", 11),
        ("RCLK", 12),
        ("SRCLR", 10),
        ("VCC", 16),
        ("OE", 13),
        ("GND", 8),
    )
    for (name, number), y in zip(inputs, rows, strict=False):
        c.text(sr_x + 8, y + 5, name, size=12)
        c.text(sr_x - 6, y - 5, str(number), size=11, anchor="end", fill=MUTED)
    feeds = (
        (rows[0], rows[0], _where(at["data"]), board),
        (rows[1], rows[2], _where(at["clock"]), board),
        (rows[3], rows[4], _where(at["3v3.board"]), COLOURS["3V3"]),
        (rows[5], rows[6], _where(at["gnd.board"]), INK),
    )
    for first, last, text, colour in feeds:
        c.line((300, first), (sr_x, first), colour=colour)
        if last != first:
            c.line((300, last), (sr_x, last), colour=colour)
            c.line((300, first), (300, last), colour=colour)
        mid = (first + last) / 2
        c.line((270, mid), (300, mid), colour=colour)
        c.text(262, mid + 5, text, size=13, anchor="end", weight="bold", fill=colour)
    c.text(
        sr_x + sr_w / 2,
        chip_bottom + 20,
        "100 nF from pin 16 to pin 8",
        size=12,
        anchor="middle",
        fill=MUTED,
    )
    # QA..QH into the ULN2803A inputs, its outputs to the lamps' minus lugs.
    outputs = (
        ("QA", 15),
        ("QB", 1),
        ("QC", 2),
        ("QD", 3),
        ("QE", 4),
        ("QF", 5),
        ("QG", 6),
        ("QH", 7),
    )
    rail = 930
    for i, ((name, number), y) in enumerate(zip(outputs, rows, strict=True)):
        c.text(sr_x + sr_w - 8, y + 5, name, size=12, anchor="end")
        c.text(sr_x + sr_w + 6, y - 5, str(number), size=11, fill=MUTED)
        c.line((sr_x + sr_w, y), (uln_x, y), colour=board)
        c.text(uln_x + 8, y + 5, f"{i + 1}B", size=12)
        c.text(uln_x - 6, y - 5, str(i + 1), size=11, anchor="end", fill=MUTED)
        c.text(uln_x + uln_w - 8, y + 5, f"{i + 1}C", size=12, anchor="end")
        c.text(uln_x + uln_w + 6, y - 5, str(18 - i), size=11, fill=MUTED)
        # The lamp: cathode (bar) towards the ULN2803A, anode towards the supply rail.
        c.line((uln_x + uln_w, y), (790, y), colour=board)
        c.add(
            "polygon",
            points=f"790,{y} 814,{y - 11} 814,{y + 11}",
            fill="#ffd84d",
            stroke=INK,
            stroke_width=1.5,
        )
        c.line((790, y - 11), (790, y + 11), width=2.5)
        c.line((814, y), (rail, y), colour=COLOURS["5V"])
        c.text(872, y - 6, f"P{i + 1} lamp", size=12, anchor="middle", weight="bold")
    # COM (to the lamp supply) and GND of the ULN2803A.
    com_x, com_y = uln_x + uln_w - 30, chip_top - 26
    c.line((com_x, chip_top), (com_x, com_y), (rail, com_y), colour=COLOURS["5V"])
    c.text(com_x - 6, chip_top - 8, "COM 10", size=12, anchor="end")
    c.line((rail, com_y), (rail, rows[-1]), colour=COLOURS["5V"], width=3)
    for y in rows:
        c.dot(rail, y)
    c.text(rail, com_y - 10, "V+", size=15, anchor="middle", weight="bold", fill=COLOURS["5V"])
    gnd_x = uln_x + uln_w / 2
    c.line((gnd_x, chip_bottom), (gnd_x, chip_bottom + 20))
    c.ground(gnd_x, chip_bottom + 20)
    c.text(gnd_x + 18, chip_bottom + 18, "GND 9", size=12)
    note = chip_bottom + 70
    c.text(
        40,
        note,
        f"V+ = 5 V (header pin {at['5v.board'].number}) for 5 V lamps, or the 12 V supply's +"
        " for 12 V lamps (its \N{MINUS SIGN} to GND).",
        size=13,
    )
    c.text(
        40,
        note + 20,
        "Lamps with no resistor inside (bare LEDs) need one in series: see wiring.md.",
        size=13,
        fill=MUTED,
    )
    return note + 40


def _beeper(c: SvgCanvas, top: int, at: Mapping[str, HeaderPin]) -> int:
    board = COLOURS["board"]
    c.text(
        40,
        top + 30,
        "4. The beeper: a passive piezo switched by an NPN transistor",
        size=18,
        weight="bold",
    )
    base_y = top + 240
    c.text(262, base_y + 5, _where(at["beeper"]), size=13, anchor="end", weight="bold", fill=board)
    c.line((270, base_y), (350, base_y), colour=board)
    c.resistor(368, base_y, "1 kΩ")
    # The transistor: base bar, collector up, emitter (with its arrow) down.
    tx = 460
    c.line((386, base_y), (tx - 10, base_y))
    c.add("circle", cx=tx, cy=base_y, r=26, fill="none", stroke=INK, stroke_width=2)
    c.line((tx - 10, base_y - 14), (tx - 10, base_y + 14), width=3)
    c.line((tx - 10, base_y - 6), (tx + 12, base_y - 22), (tx + 12, base_y - 50))
    c.line((tx - 10, base_y + 6), (tx + 12, base_y + 22), (tx + 12, base_y + 50))
    c.add(
        "polygon",
        points=f"{tx + 12},{base_y + 22} {tx + 1},{base_y + 19} {tx + 7},{base_y + 12}",
        fill=INK,
    )
    c.text(tx - 32, base_y - 8, "B", size=12, anchor="end")
    c.text(tx + 20, base_y - 32, "C", size=12)
    c.text(tx + 20, base_y + 42, "E", size=12)
    c.text(tx + 40, base_y + 5, "NPN: BC337 or 2N2222", size=13)
    c.ground(tx + 12, base_y + 50)
    c.text(tx + 32, base_y + 62, _where(at["gnd.board"]), size=13)
    # The piezo between 5 V and the collector, a resistor across it to empty it each cycle.
    low, high = base_y - 50, base_y - 140
    c.dot(tx + 12, low)
    c.dot(tx + 12, high)
    c.line((tx + 12, low), (tx + 12, high))
    c.box(tx - 18, low - 70, 60, 40, rx=4, fill="#fff7d6", stroke=INK, stroke_width=2)
    c.text(tx + 12, low - 45, "piezo", size=12, anchor="middle")
    c.text(tx + 48, low - 66, "+", size=14, weight="bold")
    c.line((tx + 12, low), (tx + 100, low), (tx + 100, high), (tx + 12, high))
    c.resistor(tx + 100, (low + high) / 2, "1 kΩ", vertical=True)
    c.line((tx + 12, high), (tx + 12, high - 20), colour=COLOURS["5V"])
    c.text(
        tx + 12,
        high - 28,
        f"+5 V: header pin {at['5v.board'].number}",
        size=13,
        anchor="middle",
        weight="bold",
        fill=COLOURS["5V"],
    )
    return base_y + 90


def draw(labels: Sequence[PinLabel], at: Mapping[str, HeaderPin]) -> str:
    """The whole diagram: `labels` for the 40 pins, `at` the header pin of each role."""
    c = SvgCanvas()
    c.text(40, 44, "referee: wiring the box", size=24, weight="bold")
    c.text(
        40,
        68,
        "Generated from hardware/pinmap.toml by `make wiring`; wiring.md walks through it.",
        size=13,
        fill=MUTED,
    )
    y = _header(c, labels)
    y = _buzzer(c, y, at)
    y = _board(c, y, at)
    y = _beeper(c, y, at)
    return c.render(y + 20)
