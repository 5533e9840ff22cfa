"""The enclosure's drilling templates, hardware/enclosure/: for each screen the build
guide offers, its box's lid, back panel and floor at full size, every hole with its size,
on pages that print on A4 and on Letter alike.

One SVG unit is a millimetre: printed at 100 % (actual size), a page can be taped to the
box and drilled through. A page is PAGE_W x PAGE_H, inside the printable part of both
sheets (A4 210 x 297, Letter 215.9 x 279.4, less a printer's margins); a panel larger
than a page is cut into tiles that overlap by OVERLAP, with the same numbered marks on
both, to be laid one on the other. Every page has a 100 mm bar to check the print by.

The sizes are the parts list's (hardware/bom.csv) and the datasheets' (each screen's
says which); `make wiring` draws them again. A hole's size is what the part asks for: check
yours, a snap-in button wants its own diameter and a panel 1 to 3 mm thick.
"""

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

from .wiring_svg import INK, MUTED, SvgCanvas

EDGE_MM = 8.0  # no hole nearer a panel's edge: the box's walls and their screws
WALL_MM = 4.0  # what is mounted behind a panel keeps this clear of its edge (the walls)
GAP_MM = 4.0  # between two holes' edges, so the panel does not crack between them

# A page: the printable part of an A4 and of a Letter sheet alike, a printer's 5 to 15 mm
# margins taken off both.
PAGE_W, PAGE_H = 190.0, 250.0
INSET = 4.0  # nothing drawn nearer the page's edge
HEADER = 18.0  # the title's four lines
FOOTER = 13.0  # the check bar and its words
AREA_W = PAGE_W - 2 * INSET
AREA_H = PAGE_H - 2 * INSET - HEADER - FOOTER
OVERLAP = 20.0  # the band two tiles of a panel share, with their marks
CHECK_MM = 100.0

# The Raspberry Pi 4 and 5: a board 85 x 56 mm, four M2.5 holes 58 x 49 mm apart, 3.5 mm in
# from the edges at the end away from the USB and Ethernet sockets (Raspberry Pi's
# mechanical drawings of the Pi 4 Model B and the Pi 5).
PI_BOARD = (85.0, 56.0)
PI_HOLES = ((3.5, 3.5), (61.5, 3.5), (3.5, 52.5), (61.5, 52.5))
M25_HOLE = 2.7  # clearance for M2.5
M3_HOLE = 3.2  # clearance for M3
# The LED board: the parts list's 5 x 7 cm stripboard, a 3.2 mm hole drilled 4 mm in from
# each corner (strips there left unused).
LED_BOARD = (70.0, 50.0)
LED_HOLE_IN = 4.0
SPEAKER_MM = 40.0  # the speaker under the grille (a 40 mm one, the grille's size)
# The camera over the table's lead (wiring.md, "A camera over the table"): a Pi camera's
# ribbon, 16 mm wide at its 15-pin end (1 mm pitch; a Pi 5's cable is 11.5 mm at its 22-pin
# end), or a webcam's USB-A plug, some 16 x 8 mm moulded; either passes a 20 x 10 slot.
CAMERA_RIBBON_MM = 16.0
USB_PLUG_MM = (16.0, 8.0)
CAMERA_SLOT = (20.0, 10.0)
BAR_OUT = 5.0  # a bar's screw, this far outside the screen's outline


@dataclass(frozen=True, slots=True)
class Hole:
    """A round hole (diameter), or a rectangular cut-out (width x height), at its centre.
    As a part (Panel.parts), the outline of what is mounted behind the panel: drawn
    dashed, not cut. `part`: the part a hole belongs to (a grille to its speaker)."""

    what: str
    x: float
    y: float
    diameter: float = 0.0
    width: float = 0.0
    height: float = 0.0
    part: str = ""

    @property
    def half_extent(self) -> tuple[float, float]:
        if self.diameter:
            return self.diameter / 2, self.diameter / 2
        return self.width / 2, self.height / 2

    @property
    def size(self) -> str:
        if self.diameter:
            return f"⌀{self.diameter:g}"
        return f"{self.width:g} x {self.height:g}"

    def box(self) -> tuple[float, float, float, float]:
        """Left, top, right, bottom."""
        w, h = self.half_extent
        return self.x - w, self.y - h, self.x + w, self.y + h


@dataclass(frozen=True, slots=True)
class Panel:
    name: str  # "lid": its page's file name says it
    title: str  # how it is seen on the page
    width: float
    height: float
    holes: tuple[Hole, ...]
    parts: tuple[Hole, ...] = ()
    top: str = ""  # what its top edge (y = 0) is, said along it


@dataclass(frozen=True, slots=True)
class Screen:
    """A screen the build guide offers, as its datasheet gives it, mounted landscape (or
    portrait, the Touch Display 2) as the box shows it."""

    key: str  # the drawings' file names: hardware/enclosure/<key>-lid.svg
    name: str
    outline: tuple[float, float]  # the module (glass and board) seen from the front
    active: tuple[float, float]  # the picture: the window is this, 1 mm more each side


@dataclass(frozen=True, slots=True)
class Drawing:
    screen: Screen
    box: tuple[float, float, float]  # width, depth, height
    how: str  # how the screen and the Pi are held, for the page's title
    panels: tuple[Panel, ...]


@dataclass(frozen=True, slots=True)
class Page:
    """One sheet: a panel, or a tile of one (its part x0..x0+w, y0..y0+h, in the panel's
    millimetres), turned a quarter if it fits better so."""

    drawing: Drawing
    panel: Panel
    file: str
    x0: float
    y0: float
    w: float
    h: float
    turned: bool
    tile: int  # 1-based; of `tiles`
    tiles: int
    marks: tuple[tuple[str, float, float], ...]  # alignment marks on this tile: label, x, y


# Each screen's figures, and where they come from.
# Waveshare's specification of the 3.5inch RPi LCD (A): display size 73.44 x 48.96 mm. Its
# board is the Pi's size and sits on the Pi's header, over the Pi; the picture is drawn
# centred on it (the window is checked against the screen before it is cut).
HAT = Screen(
    "hat-3.5",
    '3.5" HAT screen (Waveshare 3.5inch RPi LCD (A) or a clone)',
    PI_BOARD,
    (73.44, 48.96),
)
# The same 3.5-inch 480x320 panel's active area; the boards differ by maker (about 98 x 56
# mm): the upright bars hold any up to 62 mm high, whatever its length.
SPI = Screen("spi-3.5", '3.5" SPI module (ST7796S, 480x320)', (98.0, 56.0), (73.44, 48.96))
# The panels 5- and 7-inch HDMI screens are built on, from their datasheets: Innolux
# AT050TN43 (5", 800x480), outline 120.7 x 75.8 mm, active area 108.0 x 64.8 mm; Innolux
# AT070TN92 (7", 800x480; 1024x600 ones are near its size), outline 165.0 x 100.0 mm,
# active area 154.08 x 85.92 mm. A screen in a case of its own is larger: measure it.
HDMI_5 = Screen("hdmi-5", '5" HDMI screen (800x480)', (120.7, 75.8), (108.0, 64.8))
HDMI_7 = Screen("hdmi-7", '7" HDMI screen (800x480 or 1024x600)', (165.0, 100.0), (154.08, 85.92))
# Raspberry Pi's documentation of the Touch Display 2 (7-inch): outline 189.5 x 120 mm,
# active area 154.5 x 87 mm, 15 mm deep; a portrait panel, and the box shows it so
# (wiring.md, "DSI: Raspberry Pi Touch Display 2").
DSI_7 = Screen(
    "dsi-7", '7" Raspberry Pi Touch Display 2 (portrait, 720x1280)', (120.0, 189.5), (87.0, 154.5)
)


def _window(screen: Screen, cx: float, cy: float) -> tuple[Hole, Hole]:
    """The window the picture shows through (its active area and 1 mm more each side,
    rounded up to half a millimetre), and the screen's outline behind the lid, both
    centred on (cx, cy): check yours against the print before cutting."""
    w, h = (math.ceil((side + 2) * 2) / 2 for side in screen.active)
    window = Hole("window", cx, cy, width=w, height=h, part="screen")
    outline = Hole("screen", cx, cy, width=screen.outline[0], height=screen.outline[1])
    return window, outline


def _bars(outline: Hole, *, across: float, upright: bool) -> tuple[Hole, ...]:
    """The screws of two bars (wood or aluminium strips, on spacers as thick as the
    screen) that press the screen against the lid from behind: upright bars `across` mm
    apart with a screw above and below the outline, or level ones with a screw each side."""
    w, h = outline.half_extent
    if upright:
        at = [(dx, dy) for dx in (-across / 2, across / 2) for dy in (-h - BAR_OUT, h + BAR_OUT)]
    else:
        at = [(dx, dy) for dx in (-w - BAR_OUT, w + BAR_OUT) for dy in (-across / 2, across / 2)]
    what = "bars, M3"
    return tuple(Hole(what, outline.x + dx, outline.y + dy, diameter=M3_HOLE) for dx, dy in at)


def _grille(x: float, y: float) -> tuple[Hole, ...]:
    """A 40 mm speaker's grille: a hex of 4 mm holes 7 mm apart, 3 rings' worth."""
    holes = [Hole("grille", x, y, diameter=4, part="40 mm speaker")]
    for ring in (1, 2):
        for k in range(6 * ring):
            angle = 2 * math.pi * k / (6 * ring)
            holes.append(
                Hole(
                    "grille",
                    round(x + 7 * ring * math.cos(angle), 2),
                    round(y + 7 * ring * math.sin(angle), 2),
                    diameter=4,
                    part="40 mm speaker",
                )
            )
    return tuple(holes)


def _lid(
    box: tuple[float, float, float],
    screen: Screen,
    centre: tuple[float, float],
    holder: tuple[Hole, ...],
    judges: tuple[tuple[float, float], ...],
    replay: tuple[float, float],
    microphone: tuple[float, float],
    speaker: tuple[float, float],
) -> Panel:
    window, outline = _window(screen, *centre)
    named = zip(("VALID", "INVALID", "SUPER", "UNDO"), judges, strict=True)
    return Panel(
        "lid",
        "lid (top), seen from above",
        box[0],
        box[1],
        (
            window,
            *holder,
            *(Hole(what, x, y, diameter=30) for what, (x, y) in named),
            # Beside the speaker it plays on, away from the judge buttons: no REPLAY
            # pressed for UNDO. Optional: a lid without it replays with UNDO held.
            Hole("REPLAY", *replay, diameter=30),
            Hole("mic", *microphone, diameter=6),
            *_grille(*speaker),
        ),
        (outline, Hole("40 mm speaker", *speaker, diameter=SPEAKER_MM)),
        "the back of the box (the buzzers' side)",
    )


def _back(box: tuple[float, float, float]) -> Panel:
    """The buzzers' 12 mm holes (a GX12 socket, or an M12 cable gland) in a row; below
    them the leads: the Pi's power, the 12 V socket (an M8-threaded panel socket: measure
    yours), a USB microphone on its cable to the table's middle, a speaker outside the
    box, HDMI to a TV, and the camera over the table (its ribbon, or a webcam's USB
    plug). Each slot lets its plug through."""
    width, _, height = box
    row1, row2 = round(height * 0.34), round(height * 0.74)
    buzzers = tuple(
        Hole(f"P{n}", width / 2 + (n - 4.5) * 22, row1, diameter=12) for n in range(1, 9)
    )
    leads = (
        ("power", 14.0, 8.0),
        ("12 V", 8.0, 0.0),
        ("mic", 18.0, 10.0),
        ("speaker", 18.0, 10.0),
        ("HDMI", 24.0, 14.0),
        ("camera", *CAMERA_SLOT),
    )
    gap = 10.0
    x = (width - sum(w for _, w, _ in leads) - gap * (len(leads) - 1)) / 2
    row: list[Hole] = []
    for what, w, h in leads:
        if h:
            row.append(Hole(what, x + w / 2, row2, width=w, height=h))
        else:
            row.append(Hole(what, x + w / 2, row2, diameter=w))
        x += w + gap
    return Panel(
        "back",
        "back panel, seen from outside",
        width,
        height,
        (*buzzers, *row),
        (),
        "the top (the lid's side)",
    )


def _pi(x: float, y: float) -> tuple[Hole, tuple[Hole, ...]]:
    """The Pi's board with its top-left corner at (x, y) as seen from above, its USB-C and
    HDMI edge to the back of the box (y = 0), so its leads reach the back panel; its four
    M2.5 holes."""
    w, h = PI_BOARD
    board = Hole(
        "Raspberry Pi 4/5: its USB-C and HDMI edge to the back",
        x + w / 2,
        y + h / 2,
        width=w,
        height=h,
    )
    # Turned half round from its drawing (the USB-C edge there is the bottom one).
    holes = tuple(
        Hole("Pi, M2.5", x + w - hx, y + h - hy, diameter=M25_HOLE, part=board.what)
        for hx, hy in PI_HOLES
    )
    return board, holes


def _led_board(x: float, y: float) -> tuple[Hole, tuple[Hole, ...]]:
    w, h = LED_BOARD
    board = Hole("LED board (5 x 7 cm stripboard)", x + w / 2, y + h / 2, width=w, height=h)
    holes = tuple(
        Hole("LED board, M3", x + dx, y + dy, diameter=M3_HOLE, part=board.what)
        for dx in (LED_HOLE_IN, w - LED_HOLE_IN)
        for dy in (LED_HOLE_IN, h - LED_HOLE_IN)
    )
    return board, holes


def _floor(box: tuple[float, float, float], pi_at: tuple[float, float] | None) -> Panel:
    """The floor, seen from above (from inside the box): the LED board at the right-hand
    back, and the Pi where `pi_at` puts its corner (None: the Pi is on the screen's back)."""
    width = box[0]
    led, led_holes = _led_board(width - 12 - LED_BOARD[0], 12)
    parts, holes = [led], [*led_holes]
    if pi_at is not None:
        pi, pi_holes = _pi(*pi_at)
        parts.append(pi)
        holes += pi_holes
    return Panel(
        "floor",
        "floor (bottom), seen from above: from inside the box",
        box[0],
        box[1],
        tuple(holes),
        tuple(parts),
        "the back of the box",
    )


def _drawings() -> tuple[Drawing, ...]:
    """Each screen's box, laid out by hand: the screen at the left and at the back, the
    judge buttons in front of it, where the judge sits, REPLAY and the speaker to the
    right. The tests check that nothing overlaps and every page fits."""
    small = (200.0, 150.0, 70.0)  # the parts list's project box
    judges_row = ((38.0, 118.0), (80.0, 118.0), (122.0, 118.0), (164.0, 118.0))
    hat_window, _ = _window(HAT, 62, 58)
    hat = Drawing(
        HAT,
        small,
        "the Pi on tall standoffs from the floor, the screen on it pressed to the lid",
        (
            _lid(small, HAT, (62, 58), (), judges_row, (176, 24), (136, 22), (150, 62)),
            _back(small),
            # The Pi right under the window: the HAT's board is the Pi's size, over it.
            _floor(small, (hat_window.x - PI_BOARD[0] / 2, hat_window.y - PI_BOARD[1] / 2)),
        ),
    )
    _, spi_outline = _window(SPI, 62, 58)
    spi = Drawing(
        SPI,
        small,
        "two upright bars across the module's back; the Pi on the floor",
        (
            _lid(
                small,
                SPI,
                (62, 58),
                _bars(spi_outline, across=60, upright=True),
                judges_row,
                (176, 24),
                (136, 22),
                (150, 62),
            ),
            _back(small),
            _floor(small, (12, 12)),
        ),
    )
    _, hdmi5_outline = _window(HDMI_5, 68, 53)
    hdmi5 = Drawing(
        HDMI_5,
        small,
        "two upright bars across the screen's back; the Pi on the floor",
        (
            _lid(
                small,
                HDMI_5,
                (68, 53),
                _bars(hdmi5_outline, across=80, upright=True),
                judges_row,
                (175, 24),
                (140, 22),
                (170, 68),
            ),
            _back(small),
            _floor(small, (12, 12)),
        ),
    )
    large = (240.0, 180.0, 80.0)
    _, hdmi7_outline = _window(HDMI_7, 90, 66)
    hdmi7 = Drawing(
        HDMI_7,
        large,
        "two upright bars across the screen's back; the Pi on the floor",
        (
            _lid(
                large,
                HDMI_7,
                (90, 66),
                _bars(hdmi7_outline, across=110, upright=True),
                ((57, 145), (99, 145), (141, 145), (183, 145)),
                (205, 30),
                (205, 118),
                (205, 80),
            ),
            _back(large),
            _floor(large, (12, 12)),
        ),
    )
    tall = (230.0, 200.0, 70.0)
    _, dsi_outline = _window(DSI_7, 76, 100)
    dsi = Drawing(
        DSI_7,
        tall,
        "two level bars across the display's back; the Pi screwed on the display's back",
        (
            _lid(
                tall,
                DSI_7,
                (76, 100),
                _bars(dsi_outline, across=120, upright=False),
                ((164, 28), (204, 28), (164, 70), (204, 70)),
                (164, 118),
                (206, 118),
                (184, 165),
            ),
            _back(tall),
            _floor(tall, None),
        ),
    )
    return hat, spi, hdmi5, hdmi7, dsi


DRAWINGS = _drawings()


def _spans(length: float, room: float) -> list[float]:
    """Where each tile starts along a side `length` long, tiles `room` long: one if it
    fits, else as few as overlap by OVERLAP at least, spread evenly."""
    if length <= room:
        return [0.0]
    count = math.ceil((length - OVERLAP) / (room - OVERLAP))
    step = (length - room) / (count - 1)
    return [round(i * step, 3) for i in range(count)]


MARK_CLEAR = 8.0  # a mark's middle this far from any hole, so that it stays on the paper


def _marks(
    starts: list[float], room: float, along: float, clear: Callable[[float, float], bool]
) -> list[tuple[float, float]]:
    """Alignment marks in the bands where tiles overlap, as (across, along): three along
    each band, near a fifth, a half and four fifths of the way, each where `clear` says
    nothing is cut, the band's middle first."""
    out: list[tuple[float, float]] = []
    for a, b in itertools.pairwise(starts):
        low, high = b, a + room  # the band both tiles show
        middle = (low + high) / 2
        offsets = [0.0]
        for k in range(1, int((high - low) / 2 // 4) + 1):
            offsets += [-4.0 * k, 4.0 * k]
        spots = [
            (middle + dx, y)
            for dx in offsets
            if low + 5 <= middle + dx <= high - 5
            for y in (EDGE_MM + 2 * k for k in range(int((along - 2 * EDGE_MM) / 2) + 1))
            if clear(middle + dx, y)
        ]
        for share in (0.2, 0.5, 0.8):
            spread = [
                (abs(y - along * share) + abs(x - middle), x, y)
                for x, y in spots
                if all(math.hypot(x - u, y - v) >= 25 for u, v in out)
            ]
            if spread:
                _, x, y = min(spread)
                out.append((x, y))
    return out


def _clear_of(panel: Panel, *, bands_across_y: bool) -> Callable[[float, float], bool]:
    """Whether a mark at (across, along) keeps MARK_CLEAR from every hole and clear of
    every label; `bands_across_y`: the bands cut the panel's height, across its y."""
    boxes = [(hole.box(), hole.what == "window") for hole in panel.holes]
    for x, y, lines in _labels(panel):
        half = max(len(line) for line in lines) * LABEL_SIZE * GLYPH_EM / 2
        low = y + (len(lines) - 1) * LABEL_LINE + 1
        words = (x - half - 2, y - LABEL_SIZE - 2, x + half + 2, low + 2)
        boxes.append((words, False))

    def clear(u: float, v: float) -> bool:
        x, y = (v, u) if bands_across_y else (u, v)
        for (left, top, right, bottom), window in boxes:
            dx = max(left - x, 0.0, x - right)
            dy = max(top - y, 0.0, y - bottom)
            inside = min(x - left, right - x, y - top, bottom - y)
            if window and inside >= MARK_CLEAR:  # on the paper cut out last
                continue
            if math.hypot(dx, dy) < MARK_CLEAR:
                return False
        return True

    return clear


def pages(drawing: Drawing) -> list[Page]:
    """The drawing's sheets, a panel (or a tile of it) on each, turned a quarter where
    that takes fewer sheets."""
    out: list[Page] = []
    for panel in drawing.panels:
        flat = (_spans(panel.width, AREA_W), _spans(panel.height, AREA_H))
        turned = (_spans(panel.width, AREA_H), _spans(panel.height, AREA_W))
        turn = len(turned[0]) * len(turned[1]) < len(flat[0]) * len(flat[1])
        xs, ys = turned if turn else flat
        room_w, room_h = (AREA_H, AREA_W) if turn else (AREA_W, AREA_H)
        w, h = min(panel.width, room_w), min(panel.height, room_h)
        marks = _marks(xs, room_w, panel.height, _clear_of(panel, bands_across_y=False))
        across = _marks(ys, room_h, panel.width, _clear_of(panel, bands_across_y=True))
        marks += [(x, y) for y, x in across]
        labelled = [(str(n), x, y) for n, (x, y) in enumerate(marks, 1)]
        tiles = [(x0, y0) for y0 in ys for x0 in xs]
        for n, (x0, y0) in enumerate(tiles, 1):
            name = f"{drawing.screen.key}-{panel.name}"
            mine = tuple(m for m in labelled if x0 <= m[1] <= x0 + w and y0 <= m[2] <= y0 + h)
            out.append(
                Page(
                    drawing,
                    panel,
                    f"{name}.svg" if len(tiles) == 1 else f"{name}-{n}.svg",
                    x0,
                    y0,
                    w,
                    h,
                    turn,
                    n,
                    len(tiles),
                    mine,
                )
            )
    return out


def all_pages() -> list[Page]:
    return [page for drawing in DRAWINGS for page in pages(drawing)]


def _draw_hole(c: SvgCanvas, hole: Hole, *, part: bool) -> None:
    style: dict[str, object] = {"fill": "none", "stroke": MUTED if part else INK}
    style["stroke_width"] = 0.3 if part else 0.35
    if part:
        style["stroke_dasharray"] = "2 1.5"
    if hole.diameter:
        c.add("circle", cx=hole.x, cy=hole.y, r=hole.diameter / 2, **style)
    else:
        left, top, _, _ = hole.box()
        c.box(left, top, hole.width, hole.height, **style)
    if not part:  # a cross to centre-punch
        c.line((hole.x - 1.5, hole.y), (hole.x + 1.5, hole.y), width=0.2)
        c.line((hole.x, hole.y - 1.5), (hole.x, hole.y + 1.5), width=0.2)


def _draw_panel(c: SvgCanvas, panel: Panel) -> None:
    """The panel in its own millimetres: its edge, what sits behind it, its holes, their
    labels."""
    c.box(0, 0, panel.width, panel.height, fill="none", stroke=INK, stroke_width=0.5)
    if panel.top:
        c.text(panel.width / 2, 4.5, f"↑ {panel.top}", 2.8, anchor="middle", fill=MUTED)
    for part in panel.parts:
        _draw_hole(c, part, part=True)
        left, top, right, _ = part.box()
        if part.diameter == 0 and part.what != "screen":  # a board; the window and the
            # grille say what is behind them
            c.text((left + right) / 2, top - 1.8, part.what, 2.6, anchor="middle", fill=MUTED)
    for hole in panel.holes:
        _draw_hole(c, hole, part=False)
    for x, y, lines in _labels(panel):
        for n, line in enumerate(lines):
            c.text(x, y + n * LABEL_LINE, line, LABEL_SIZE, anchor="middle", fill=MUTED)


LABEL_SIZE = 3.0
LABEL_LINE = 3.6
GLYPH_EM = 0.52  # a DejaVu Sans glyph's mean width, in font sizes


def _labels(panel: Panel) -> list[tuple[float, float, tuple[str, ...]]]:
    """One label per kind of hole (the grille's holes are named once): where its first
    line goes, and its lines, the name and the size. Under the holes of its kind, or
    under the part they belong to; a board's in the middle of its holes; the window's
    in it, with the size of the screen behind it."""
    kinds: dict[str, list[Hole]] = {}
    for hole in panel.holes:
        kinds.setdefault(hole.what, []).append(hole)
    parts = {part.what: part for part in panel.parts}
    out: list[tuple[float, float, tuple[str, ...]]] = []
    for what, holes in kinds.items():
        size = holes[0].size if len(holes) == 1 else f"{len(holes)} x {holes[0].size}"
        left = min(h.box()[0] for h in holes)
        right = max(h.box()[2] for h in holes)
        top = min(h.box()[1] for h in holes)
        bottom = max(h.box()[3] for h in holes)
        part = parts.get(holes[0].part)
        if what == "window" and part is not None:
            x, y = holes[0].x, holes[0].y
            out.append((x, y + 5, ("window", size, f"dashed: the screen, {part.size}")))
        elif part is not None and len(holes) == 4:  # a board's corners
            out.append(((left + right) / 2, (top + bottom) / 2, (what, size)))
        elif part is None and len(holes) == 4:  # the bars' screws, round the screen
            last = max(holes, key=lambda h: (h.y, h.x))
            # Beside the screen, the words go outward, off its outline.
            screen = parts.get("screen")
            beside = screen is not None and last.x > screen.box()[2]
            shift = max(len(what), len(size)) * LABEL_SIZE * GLYPH_EM / 2 - 1.6 if beside else 0
            out.append((last.x + shift, last.box()[3] + 3.5, (what, size)))
        elif part is not None:  # the speaker under the grille
            lines = (what, size, f"(dashed: a {part.what})")
            out.append(((left + right) / 2, part.box()[3] + 3.5, lines))
        else:
            out.append(((left + right) / 2, bottom + 3.5, (what, size)))
    return out


def page_svg(page: Page) -> str:
    """One sheet: its title, its panel's tile at full size (clipped to the tile, with the
    marks that line it up with the next), and the 100 mm bar."""
    c = SvgCanvas()
    drawing, panel = page.drawing, page.panel
    w, d, h = drawing.box
    tile = f", page {page.tile} of {page.tiles}" if page.tiles > 1 else ""
    c.text(INSET, INSET + 4, f"{panel.title}{tile}", 4.2, weight="bold")
    c.text(INSET, INSET + 8.5, f"{drawing.screen.name}; box {w:g} x {d:g} x {h:g} mm", 2.8)
    turned = ", turned a quarter: its top edge is at the right" if page.turned else ""
    c.text(INSET, INSET + 12.1, f"This panel: {panel.width:g} x {panel.height:g} mm{turned}.", 2.8)
    c.text(INSET, INSET + 15.7, f"{drawing.how[0].upper()}{drawing.how[1:]}.", 2.8, fill=MUTED)
    # The tile, at full size: turned, its panel's x runs down the page, its y right to left.
    ox, oy = INSET, INSET + HEADER
    pw, ph = (page.h, page.w) if page.turned else (page.w, page.h)
    if page.turned:
        place = f"translate({ox + pw + page.y0:g} {oy - page.x0:g}) rotate(90)"
    else:
        place = f"translate({ox - page.x0:g} {oy - page.y0:g})"
    clip = (
        f'<clipPath id="tile"><rect x="{page.x0:g}" y="{page.y0:g}" width="{page.w:g}"'
        f' height="{page.h:g}"/></clipPath>'
    )
    inner = SvgCanvas()
    _draw_panel(inner, panel)
    for label, x, y in page.marks:
        inner.add("circle", cx=x, cy=y, r=3, fill="none", stroke=INK, stroke_width=0.3)
        inner.line((x - 5, y), (x + 5, y), width=0.2)
        inner.line((x, y - 5), (x, y + 5), width=0.2)
        inner.text(x + 4, y - 4, label, 3.5, weight="bold")
    body = "".join(inner.parts)
    c.add("g", f'{clip}<g clip-path="url(#tile)">{body}</g>', transform=place)
    if page.tiles > 1:
        c.box(ox, oy, pw, ph, fill="none", stroke=MUTED, stroke_width=0.2, stroke_dasharray="1 2")
    # The bar to check the print by: 100 mm, a tick every 10.
    y = PAGE_H - INSET - 7
    c.line((INSET, y), (INSET + CHECK_MM, y), width=0.5)
    for k in range(11):
        tall = 2.5 if k in (0, 10) else 1.2
        c.line((INSET + 10 * k, y - tall), (INSET + 10 * k, y + tall), width=0.3)
    c.text(INSET + CHECK_MM + 3, y + 1, "100 mm: measure it before you trust the page", 2.8)
    c.text(
        INSET,
        PAGE_H - INSET - 1,
        "Print at 100 % (actual size, no fit to page), A4 or Letter."
        + (
            " Tape the parts so that their numbered marks lie one on the other."
            if page.tiles > 1
            else ""
        ),
        2.6,
        fill=MUTED,
    )
    return c.render(PAGE_H, PAGE_W, "mm")
