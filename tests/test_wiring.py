import copy
import csv
import itertools
import random
import re
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from referee.config.pi_header import RESERVED, header, header_pin, load_pinmap
from tools import enclosure, wiring

ROOT = Path(__file__).resolve().parent.parent
SVG_NS = "{http://www.w3.org/2000/svg}"
OUT_OF_DATE = "is out of date with hardware/pinmap.toml: run `make wiring`"


@pytest.fixture(scope="module")
def pinmap():
    return load_pinmap()


def pin_names(pinmap):
    leds = pinmap["leds"]
    return [*pinmap["pins"].values(), leds["data"], leds["clock"], pinmap["beeper"]["pin"]]


def between_markers(text):
    return text.split(wiring.TABLE_BEGIN)[1].split(wiring.TABLE_END)[0]


def test_the_package_pin_map_is_the_hardware_one(pinmap):
    hardware = (ROOT / "hardware/pinmap.toml").read_text(encoding="utf-8")
    assert pinmap == tomllib.loads(hardware)


def test_the_committed_diagram_is_the_pin_maps(pinmap):
    committed = (ROOT / wiring.SVG_PATH).read_text(encoding="utf-8")
    assert committed == wiring.diagram(pinmap), f"{wiring.SVG_PATH} {OUT_OF_DATE}"


def test_the_committed_pin_table_is_the_pin_maps(pinmap):
    committed = between_markers((ROOT / wiring.DOC_PATH).read_text(encoding="utf-8"))
    assert committed == "\n" + wiring.pin_table(pinmap), f"the table in wiring.md {OUT_OF_DATE}"


def test_the_pin_map_uses_gpio_names_and_leaves_the_reserved_pins_free(pinmap):
    for name in pin_names(pinmap):
        assert re.fullmatch(r"GPIO\d+", name), f"{name}: name pins GPIO<n>, the gpiozero way"
        # gpiozero's own name of the pin: pi_header.gpio_name takes the map's names as they are
        assert header_pin(name).name == name, f"{name}: not gpiozero's name of its pin"
        assert header_pin(name).gpio not in RESERVED, f"{name} is kept free: {RESERVED}"


def test_the_pin_map_names_no_pin_twice(pinmap):
    names = pin_names(pinmap)
    assert len({header_pin(n) for n in names}) == len(names) == 16


def test_the_replay_button_is_drawn_with_the_judges_and_left_out_without_its_pin(pinmap):
    wires = {w.role: w for w in wiring.signals(pinmap)}
    assert wires["REPLAY"].group == "judges"
    assert wires["REPLAY"].what == "REPLAY button (blue, optional)"
    without = {**pinmap, "pins": {k: v for k, v in pinmap["pins"].items() if k != "REPLAY"}}
    assert "REPLAY" not in {w.role for w in wiring.signals(without)}
    row = wiring.pin_table(without).splitlines()[
        2 + header_pin(pinmap["pins"]["REPLAY"]).number - 1
    ]
    assert row.endswith("| free | |")  # a pin the map leaves to the builder


def test_a_pin_given_twice_is_refused(pinmap):
    twice = copy.deepcopy(pinmap)
    twice["pins"]["P2"] = twice["pins"]["P1"]
    with pytest.raises(ValueError, match="given twice"):
        wiring.pin_table(twice)


def test_an_unknown_button_is_refused(pinmap):
    extra = copy.deepcopy(pinmap)
    extra["pins"]["P9"] = extra["pins"]["P1"]
    with pytest.raises(ValueError, match="P9"):
        wiring.pin_table(extra)


def test_the_table_has_every_header_pin_and_says_what_each_used_one_feeds(pinmap):
    rows = wiring.pin_table(pinmap).splitlines()[2:]
    assert [int(r.split("|")[1]) for r in rows] == list(range(1, 41))
    cells = {int(r.split("|")[1]): r.split("|")[3].strip() for r in rows}
    for key, name in pinmap["pins"].items():
        assert cells[header_pin(name).number].startswith(f"**{key} ")
    assert cells[header_pin(pinmap["leds"]["data"]).number] == "**LED data**"
    assert cells[header_pin(pinmap["beeper"]["pin"]).number] == "**beeper**"
    for gpio, why in RESERVED.items():
        pin = next(p for p in header() if p.gpio == gpio)
        assert cells[pin.number] == f"left free: {why}"


def test_each_group_takes_its_nearest_ground(pinmap):
    supplies = {w.role: w.pin for w in wiring.supplies(wiring.signals(pinmap))}
    judges = [header_pin(pinmap["pins"][j]) for j in wiring.JUDGE_COLOURS]
    assert supplies["gnd.judges"].name == "GND"
    assert max(abs(supplies["gnd.judges"].row - p.row) for p in judges) <= 2
    assert supplies["3v3.board"].name == "3V3"
    assert supplies["5v.board"].name == "5V"


def test_groups_sharing_a_ground_pin_share_its_row(pinmap):
    # Without the optional REPLAY: a fifth judge pin far from the others makes a shared
    # ground too rare to find by shuffling.
    pins = {key: name for key, name in pinmap["pins"].items() if key != "REPLAY"}
    keys, names = list(pins), list(pins.values())
    rng = random.Random(1)
    for _ in range(1000):  # shuffle the buttons until players and judges share a ground
        rng.shuffle(names)
        shuffled = {**pinmap, "pins": dict(zip(keys, names, strict=True))}
        at = {w.role: w.pin for w in wiring.supplies(wiring.signals(shuffled))}
        if at["gnd.players"] == at["gnd.judges"]:
            break
    else:
        pytest.fail("no shuffle of the buttons shares a ground")
    number = at["gnd.players"].number
    row = next(r for r in wiring.pin_table(shuffled).splitlines() if r.startswith(f"| {number} |"))
    assert "**ground: buzzers; ground: judges**" in row
    assert "every buzzer's COM lug; the judge buttons' COM lugs" in row


def test_the_diagram_is_valid_svg_labelling_every_pin(pinmap):
    root = ET.fromstring(wiring.diagram(pinmap).encode())
    assert root.tag == f"{SVG_NS}svg"
    texts = {t.text for t in root.iter(f"{SVG_NS}text")}
    for key, name in pinmap["pins"].items():
        assert any(t.startswith(f"{key} ") and t.endswith(f"· {name}") for t in texts), key
    assert (
        f"{pinmap['leds']['data']} · header pin {header_pin(pinmap['leds']['data']).number}"
        in texts
    )


def test_main_rewrites_the_table_between_the_markers_and_the_diagram(tmp_path, pinmap, capsys):
    (tmp_path / "hardware").mkdir()
    doc = tmp_path / wiring.DOC_PATH
    doc.write_text(f"# Before\n{wiring.TABLE_BEGIN}\nstale\n{wiring.TABLE_END}\nAfter\n", "utf-8")
    assert wiring.main(["--root", str(tmp_path)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith(f"# Before\n{wiring.TABLE_BEGIN}\n| Pin |")
    assert text.endswith(f"|\n{wiring.TABLE_END}\nAfter\n")
    assert between_markers(text) == "\n" + wiring.pin_table(pinmap)
    assert (tmp_path / wiring.SVG_PATH).read_text(encoding="utf-8") == wiring.diagram(pinmap)
    assert "wrote" in capsys.readouterr().out


def test_main_refuses_a_document_without_markers(tmp_path, capsys):
    (tmp_path / "hardware").mkdir()
    doc = tmp_path / wiring.DOC_PATH
    doc.write_text("# No markers here\n", encoding="utf-8")
    assert wiring.main(["--root", str(tmp_path)]) == 1
    assert "markers" in capsys.readouterr().err
    assert doc.read_text(encoding="utf-8") == "# No markers here\n"
    assert not (tmp_path / wiring.SVG_PATH).exists()


# Every pin named anywhere in the repository must come from the one pin map, so that
# nobody hard-codes a pin. The exceptions are the few files whose job is to name other
# pins: they may name the ones the map leaves free (RESERVED), and the tests of pin
# errors also names that are no GPIO of the header at all; a usable GPIO outside the
# map, never.
# Files about the Pico name the Pico's pins, another chip's: they are skipped.
PIN_NAME = re.compile(r"\b(?:GPIO|BCM|BOARD)\d{1,2}\b")  # gpiozero's names, case and all
MAY_NAME_FREE_PINS = {
    "hardware/pinmap.toml": "says which pins it leaves free and why",
    "hardware/wiring.svg": "draws all 40 pins of the header",
    "wiring.md": "its table lists all 40 pins; its screen section names the screen's pins",
    "tests/test_config.py": "shows that settings accept any header pin and refuse the rest",
}
MAY_NAME_NO_PIN = {"tests/test_config.py", "tests/test_gpio.py"}  # to show them refused
OTHER_BOARDS = ("hardware/pico/",)


def tracked_text_files():
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    for name in filter(None, listed.split("\0")):
        path = ROOT / name
        # A symbolic link (referee/pinmap.toml) is read under its target's name.
        if name.startswith(OTHER_BOARDS) or path.is_symlink() or not path.is_file():
            continue
        try:
            yield name, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def test_every_pin_named_in_the_repository_comes_from_the_pin_map(pinmap):
    mapped = {header_pin(n) for n in pin_names(pinmap)}
    strays = []
    for name, text in tracked_text_files():
        for line_no, line in enumerate(text.splitlines(), 1):
            for match in PIN_NAME.finditer(line):
                try:
                    pin = header_pin(match.group())
                except ValueError:
                    if name not in MAY_NAME_NO_PIN:
                        strays.append(f"{name}:{line_no}: {match.group()} is no header GPIO")
                    continue
                free = pin.gpio in RESERVED and name in MAY_NAME_FREE_PINS
                if pin not in mapped and not free:
                    strays.append(f"{name}:{line_no}: {match.group()} is not in the pin map")
    assert not strays, "take pins from hardware/pinmap.toml:\n" + "\n".join(strays)


# wiring.md's "Series resistors for bare LEDs": | 12 V | blue, white (3.0 V) | ... | 560 Ω |
RESISTOR_ROW = re.compile(r"^\| (\d+) V \| ([a-z, ]+) \(.*\| (\d+) Ω \|$", re.MULTILINE)


def test_the_parts_list_buys_the_resistors_wiring_md_says_to_use():
    """The parts list said 680 Ohm for bare LEDs on 12 V where wiring.md said 560 Ohm for
    blue and white: the list must name each of wiring.md's values for its lamps."""
    with (ROOT / "hardware" / "bom.csv").open(newline="") as f:
        [part] = [row for row in csv.DictReader(f) if row["part"] == "LED series resistors"]
    said = part["description"]
    rows = RESISTOR_ROW.findall((ROOT / "wiring.md").read_text())
    assert len(rows) == 4, rows
    for supply, colours, ohms in rows:
        lamps = said.split(f"{supply} V lamps: ")[1].split(".")[0]
        assert f"{ohms} Ohm {colours.replace(', ', '/').replace(' and ', '/')}" in lamps, (
            supply,
            colours,
            ohms,
            said,
        )


def test_every_row_of_the_parts_list_has_its_six_columns():
    with (ROOT / "hardware" / "bom.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert all(len(row) == len(rows[0]) for row in rows), [r for r in rows if len(r) != 6]


# The enclosure's drilling templates (tools/enclosure.py): a page a file.
PAGES = enclosure.all_pages()
PANELS = [(drawing, panel) for drawing in enclosure.DRAWINGS for panel in drawing.panels]
A4, LETTER = (210.0, 297.0), (215.9, 279.4)
PRINTER_MARGIN = 10.0  # what a printer leaves blank at an edge, at most


def test_the_committed_enclosure_pages_are_the_ones_drawn():
    committed = {
        path.name: path.read_text(encoding="utf-8")
        for path in (ROOT / wiring.ENCLOSURE_DIR).glob("*.svg")
    }
    drawn = {page.file: enclosure.page_svg(page) for page in PAGES}
    assert committed.keys() == drawn.keys(), "hardware/enclosure/ is out of date: run `make wiring`"
    for name, text in drawn.items():
        assert committed[name] == text, f"{name} is out of date: run `make wiring`"


def test_main_writes_the_enclosure_pages_and_drops_one_no_drawing_has(tmp_path):
    (tmp_path / "hardware" / "enclosure").mkdir(parents=True)
    stale = tmp_path / wiring.ENCLOSURE_DIR / "old-lid.svg"
    stale.write_text("<svg/>", encoding="utf-8")
    doc = tmp_path / wiring.DOC_PATH
    doc.write_text(f"{wiring.TABLE_BEGIN}\n{wiring.TABLE_END}\n", encoding="utf-8")
    assert wiring.main(["--root", str(tmp_path)]) == 0
    written = sorted(p.name for p in (tmp_path / wiring.ENCLOSURE_DIR).iterdir())
    assert written == sorted(page.file for page in PAGES)


def test_one_drawing_for_each_screen_the_parts_list_offers():
    """The template fitted the 3.5" screen alone: each kind of screen the parts list
    offers has a drawing of its own."""
    with (ROOT / "hardware" / "bom.csv").open(newline="") as f:
        offered = [row["part"] for row in csv.DictReader(f) if row["needed"] == "pick one screen"]
    kinds = {drawing.screen.key.split("-")[0] for drawing in enclosure.DRAWINGS}
    assert len(offered) == 4
    for part in offered:  # "Screen (SPI module)": spi
        assert part.split("(")[1].split()[0].rstrip(")").lower() in kinds, part


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.file)
def test_every_page_prints_whole_at_full_size_on_a4_and_on_letter(page):
    """The template was 230 x 291 mm, wider than either sheet: at 100 % the lid's right
    side was cut off. A page fits both, a printer's margins off, with its 100 mm bar."""
    for sheet_w, sheet_h in (A4, LETTER):
        assert sheet_w >= enclosure.PAGE_W + 2 * PRINTER_MARGIN
        assert sheet_h >= enclosure.PAGE_H + 2 * PRINTER_MARGIN
    svg = ET.fromstring(enclosure.page_svg(page))
    assert (svg.get("width"), svg.get("height")) == (
        f"{enclosure.PAGE_W:g}mm",
        f"{enclosure.PAGE_H:g}mm",
    )
    assert svg.get("viewBox") == f"0 0 {enclosure.PAGE_W:g} {enclosure.PAGE_H:g}"
    inside_x = (enclosure.INSET, enclosure.PAGE_W - enclosure.INSET)
    inside_y = (enclosure.INSET, enclosure.PAGE_H - enclosure.INSET)
    bars = []
    for child in svg:  # the page's own lines and words; the panel's are clipped to its tile
        if child.tag == f"{SVG_NS}text":
            x, y, size = (float(child.get(k)) for k in ("x", "y", "font-size"))
            right = x + enclosure.GLYPH_EM * size * len(child.text)
            assert inside_x[0] <= x and right <= inside_x[1], child.text
            # A capital rises 0.73 of the size above the line, a descender 0.24 below.
            assert inside_y[0] <= y - 0.73 * size and y + 0.24 * size <= inside_y[1], child.text
        elif child.tag == f"{SVG_NS}polyline":
            points = [tuple(map(float, p.split(","))) for p in child.get("points").split()]
            for x, y in points:
                assert inside_x[0] <= x <= inside_x[1] and inside_y[0] <= y <= inside_y[1]
            if len(points) == 2 and points[0][1] == points[1][1]:
                bars.append(abs(points[1][0] - points[0][0]))
    assert enclosure.CHECK_MM == 100 and 100 in bars, "no 100 mm bar to check the print by"
    shown_w, shown_h = (page.h, page.w) if page.turned else (page.w, page.h)
    assert shown_w <= enclosure.AREA_W and shown_h <= enclosure.AREA_H


@pytest.mark.parametrize("drawing", enclosure.DRAWINGS, ids=lambda d: d.screen.key)
def test_the_tiles_of_a_panel_cover_it_and_each_overlap_carries_the_same_marks(drawing):
    for panel in drawing.panels:
        tiles = [page for page in enclosure.pages(drawing) if page.panel is panel]
        xs = sorted({t.x0 for t in tiles})
        ys = sorted({t.y0 for t in tiles})
        w, h = tiles[0].w, tiles[0].h
        assert xs[0] == ys[0] == 0
        assert xs[-1] + w == pytest.approx(panel.width)
        assert ys[-1] + h == pytest.approx(panel.height)
        for a, b in itertools.pairwise(xs):
            assert a + w - b >= enclosure.OVERLAP
        for a, b in itertools.pairwise(ys):
            assert a + h - b >= enclosure.OVERLAP
        at = {(t.x0, t.y0): t for t in tiles}
        for (x0, y0), tile in at.items():
            i, j = xs.index(x0), ys.index(y0)
            nexts = [(xs[i + 1], y0)] if i + 1 < len(xs) else []
            nexts += [(x0, ys[j + 1])] if j + 1 < len(ys) else []
            for other in nexts:  # the tile to its right, the one below it
                shared = set(tile.marks) & set(at[other].marks)
                assert len(shared) >= 2, (panel.name, tile.file)


def _overlap(a: enclosure.Hole, b: enclosure.Hole, gap: float = 0.0) -> bool:
    (al, at, ar, ab), (bl, bt, br, bb) = a.box(), b.box()
    return al < br + gap and bl < ar + gap and at < bb + gap and bt < ab + gap


@pytest.mark.parametrize(
    "drawing, panel", PANELS, ids=lambda x: getattr(x, "name", "") or x.screen.key
)
def test_every_hole_keeps_clear_of_the_edges_and_of_the_others(drawing, panel):
    for hole in panel.holes:
        left, top, right, bottom = hole.box()
        assert left >= enclosure.EDGE_MM and right <= panel.width - enclosure.EDGE_MM, hole
        assert top >= enclosure.EDGE_MM and bottom <= panel.height - enclosure.EDGE_MM, hole
    for a, b in itertools.combinations(panel.holes, 2):
        if a.what == b.what == "grille":
            continue  # a pattern of its own, 3 mm between holes
        (aw, ah), (bw, bh) = a.half_extent, b.half_extent
        apart_x = abs(a.x - b.x) - aw - bw
        apart_y = abs(a.y - b.y) - ah - bh
        assert max(apart_x, apart_y) >= enclosure.GAP_MM, (a, b)


@pytest.mark.parametrize(
    "drawing, panel", PANELS, ids=lambda x: getattr(x, "name", "") or x.screen.key
)
def test_what_is_mounted_behind_a_panel_fits_in_the_box_and_no_hole_cuts_into_it(drawing, panel):
    """The screen, the speaker, the Pi and the LED board: inside the walls, clear of each
    other, and no hole through one that is not its own (a button through the screen)."""
    for part in panel.parts:
        left, top, right, bottom = part.box()
        assert left >= enclosure.WALL_MM and right <= panel.width - enclosure.WALL_MM, part
        assert top >= enclosure.WALL_MM and bottom <= panel.height - enclosure.WALL_MM, part
    for a, b in itertools.combinations(panel.parts, 2):
        assert not _overlap(a, b, enclosure.GAP_MM), (a, b)
    for hole in panel.holes:
        for part in panel.parts:
            if hole.part != part.what:
                assert not _overlap(hole, part), (hole, part)
            else:
                assert not _overlap(part, hole) or all(
                    p >= q for p, q in zip(part.half_extent, hole.half_extent, strict=True)
                )


def test_a_hat_screen_sits_on_the_pi_right_under_its_window():
    """A HAT screen had no way shown to reach its window: the Pi stands on the floor
    straight under it, and the window is in the screen's outline."""
    [hat] = [d for d in enclosure.DRAWINGS if d.screen is enclosure.HAT]
    lid, _, floor = hat.panels
    screen = next(p for p in lid.parts if p.what == "screen")
    pi = next(p for p in floor.parts if p.what.startswith("Raspberry Pi"))
    assert (screen.x, screen.y, screen.half_extent) == (pi.x, pi.y, pi.half_extent)
    window = next(h for h in lid.holes if h.what == "window")
    assert _overlap(window, screen) and all(
        w < s for w, s in zip(window.half_extent, screen.half_extent, strict=True)
    )


def test_every_back_panel_lets_the_cameras_ribbon_or_its_usb_plug_out():
    """The camera over the table had no way out of the box: each back panel has a slot
    its 15-pin ribbon and a webcam's USB-A plug both pass."""
    for drawing in enclosure.DRAWINGS:
        back = drawing.panels[1]
        [slot] = [h for h in back.holes if h.what == "camera"]
        assert slot.width > enclosure.CAMERA_RIBBON_MM
        assert slot.width > enclosure.USB_PLUG_MM[0] and slot.height > enclosure.USB_PLUG_MM[1]


def test_the_pi_holes_are_58_by_49_mm_apart():
    for drawing in enclosure.DRAWINGS:
        floor = drawing.panels[2]
        holes = [h for h in floor.holes if h.what == "Pi, M2.5"]
        if not holes:  # the Touch Display 2 carries the Pi on its back
            assert drawing.screen is enclosure.DSI_7
            continue
        xs, ys = sorted({h.x for h in holes}), sorted({h.y for h in holes})
        assert (xs[1] - xs[0], ys[1] - ys[0]) == (58, 49)
        assert all(h.diameter == enclosure.M25_HOLE for h in holes)
