"""The enclosure's drilling template, hardware/enclosure.svg: the lid and the back panel
at full size (one SVG unit is a millimetre: printed at 100 %, it can be taped to the box
and drilled through), every hole with its size.

The sizes are the parts list's (hardware/bom.csv); `make wiring` draws it again. A hole's
size is what the part asks for: check yours, a snap-in button wants its own diameter and a
panel 1 to 3 mm thick.
"""

import math
from dataclasses import dataclass

from .wiring_svg import INK, MUTED, SvgCanvas

# The parts list's project box: 200 x 150 x 70 mm.
BOX_W, BOX_D, BOX_H = 200.0, 150.0, 70.0
EDGE_MM = 8.0  # no hole nearer the panel's edge: the box's walls and their screws
GAP_MM = 4.0  # between two holes' edges, so the panel does not crack between them
MARGIN = 15.0  # around each panel on the page, for its title


@dataclass(frozen=True, slots=True)
class Hole:
    """A round hole (diameter), or a rectangular cut-out (width x height), at its centre."""

    what: str
    x: float
    y: float
    diameter: float = 0.0
    width: float = 0.0
    height: float = 0.0

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


@dataclass(frozen=True, slots=True)
class Panel:
    name: str
    width: float
    height: float
    holes: tuple[Hole, ...]


def _grille(x: float, y: float) -> tuple[Hole, ...]:
    """A 40 mm speaker's grille: a hex of 4 mm holes 7 mm apart, 3 rings' worth."""
    holes = [Hole("speaker grille", x, y, diameter=4)]
    for ring in (1, 2):
        for k in range(6 * ring):
            angle = 2 * math.pi * k / (6 * ring)
            holes.append(
                Hole(
                    "speaker grille",
                    round(x + 7 * ring * math.cos(angle), 2),
                    round(y + 7 * ring * math.sin(angle), 2),
                    diameter=4,
                )
            )
    return tuple(holes)


LID = Panel(
    "lid (top), seen from above",
    BOX_W,
    BOX_D,
    (
        # A 3.5" 480x320 panel's viewing area (73.4 x 49.0 mm), with 1 mm to spare.
        Hole("screen", 62, 58, width=75, height=51),
        Hole("VALID", 38, 118, diameter=30),
        Hole("INVALID", 80, 118, diameter=30),
        Hole("SUPER", 122, 118, diameter=30),
        Hole("UNDO", 164, 118, diameter=30),
        # Beside the speaker it plays on, away from the judge buttons' row: no REPLAY
        # pressed for UNDO. Optional: a lid without it replays with UNDO held.
        Hole("REPLAY (optional)", 176, 24, diameter=30),
        Hole("microphone", 136, 22, diameter=6),
        *_grille(150, 62),
    ),
)
BACK = Panel(
    "back panel, seen from outside",
    BOX_W,
    BOX_H,
    (
        *(Hole(f"P{n}", 23 + 22 * (n - 1), 24, diameter=12) for n in range(1, 9)),
        Hole("Pi power cable", 40, 52, width=14, height=8),
        Hole("12 V socket (12 V lamps)", 110, 52, diameter=8),
    ),
)
PANELS = (LID, BACK)


def drawing() -> str:
    """The template: each panel's outline, its holes, their sizes, and a scale to check
    the print by."""
    c = SvgCanvas()
    y = MARGIN
    width = BOX_W + 2 * MARGIN
    for panel in PANELS:
        c.text(
            MARGIN, y - 4, f"{panel.name}: {panel.width:g} x {panel.height:g} mm", 5, weight="bold"
        )
        c.box(MARGIN, y, panel.width, panel.height, fill="none", stroke=INK, stroke_width=0.5)
        for hole in panel.holes:
            x, hy = MARGIN + hole.x, y + hole.y
            if hole.diameter:
                c.add(
                    "circle",
                    cx=x,
                    cy=hy,
                    r=hole.diameter / 2,
                    fill="none",
                    stroke=INK,
                    stroke_width=0.35,
                )
            else:
                c.box(
                    x - hole.width / 2,
                    hy - hole.height / 2,
                    hole.width,
                    hole.height,
                    fill="none",
                    stroke=INK,
                    stroke_width=0.35,
                )
            c.line((x - 1.5, hy), (x + 1.5, hy), width=0.2)
            c.line((x, hy - 1.5), (x, hy + 1.5), width=0.2)
        for what, x, bottom, size in _labels(panel):
            c.text(MARGIN + x, y + bottom + 4, f"{what} {size}", 3.2, anchor="middle", fill=MUTED)
        y += panel.height + MARGIN + 8
    c.line((MARGIN, y), (MARGIN + 50, y), width=0.5)
    for end in (MARGIN, MARGIN + 50):
        c.line((end, y - 2), (end, y + 2), width=0.5)
    c.text(
        MARGIN + 55, y + 1.5, "50 mm: measure it on the print (print at 100 %, no fit to page)", 3.5
    )
    return c.render(y + 10, width, "mm")


def _labels(panel: Panel) -> list[tuple[str, float, float, str]]:
    """One label per kind of hole, under all of that kind (the grille's holes are named
    once): what, the centre's x, the lowest edge, the size."""
    kinds: dict[str, list[Hole]] = {}
    for hole in panel.holes:
        kinds.setdefault(hole.what, []).append(hole)
    out = []
    for what, holes in kinds.items():
        xs = [h.x for h in holes]
        bottom = max(h.y + h.half_extent[1] for h in holes)
        size = holes[0].size if len(holes) == 1 else f"{len(holes)} x {holes[0].size}"
        out.append((what, (min(xs) + max(xs)) / 2, bottom, size))
    return out
