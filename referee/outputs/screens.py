"""The pygame screens, one per phase of the game, drawn from a View and nothing else.

Every screen has the same frame: a header (what is going on, and where the buttons come
from), the box's notices under it, the latest message at the bottom, and the phase's
own picture in the middle. Sizes are fractions of the surface, and what matters most in
a phase is the biggest thing on its screen. The words come from captions.py, shared
with the terminal, so both screens say the same.
"""

from collections.abc import Callable, Container, Mapping, Sequence
from math import ceil

import pygame
from pygame import Rect

from referee.names import shortened
from referee.rules import Call, Judgement, Phase, Result, sitting_out
from referee.rules.effects import seat as seat_name
from referee.rules.engine import SOLO_HALF_LIFE_NS
from referee.seats import Colour, label
from referee.seats import colour as seat_colour
from referee.units import NS_PER_S
from referee.view import Join, Severity, View

from . import captions, qr
from .canvas import MIN_SIZE, WATCHED_SIZE, Align, Canvas, fit, font
from .captions import KEY_LEGEND
from .layout import along, columns, fits_rows, grid, grid_columns, inset, rows, square
from .style import (
    ATTENTION,
    BACKGROUND,
    BAD,
    DIM,
    ERROR,
    FAINT,
    GOOD,
    INFO,
    INK,
    PANEL,
    TEXT,
    URGENT,
    ink_on,
)

NOTICES_SHARE = 0.25  # of the screen's height at most: the game comes first
NBSP = "\u00a0"  # a space the lines are not broken at
SEVERITY_ORDER = (Severity.ERROR, Severity.WARNING, Severity.INFO)
KEYBOARD = "keyboard"  # in the source's name: the keys are the buttons, so show them
NOTICE_STYLE: dict[Severity, tuple[Colour, str]] = {
    Severity.INFO: (INFO, ""),
    Severity.WARNING: (ATTENTION, "⚠ "),
    Severity.ERROR: (ERROR, "✖ "),
}
JUDGED: dict[Judgement, tuple[str, Colour]] = {
    Judgement.VALID: ("SET ✓", GOOD),
    Judgement.INVALID: ("no SET ✗", BAD),
    Judgement.TIMEOUT: ("too late ✗", BAD),
    Judgement.SHARED: ("shared", ATTENTION),
}
BADGE_RATIO = 2.6  # a seat's mark, "P3 ■", is this many times as wide as tall
TILE_RATIO = 1.2  # a tile of the scores or the lobby: a seat's mark over a number or a word
PLACE_RATIO = 3.0  # a place in the ranking: place, mark and points side by side

# Rows of the photo finish: more would not be legible on a 3.5" screen.
PHOTO_ROWS = 4
# The lengths a text naming players tries their names at, longest first (`named`).
NAME_LENGTHS = (24, 12, 8, 5)
# A name cut shorter than this (its ellipsis included) says less than the seat's number.
NAME_CUT_LEAST = 4
NEW_GAME_HINT = "SUPER starts a new game"
# The key bar. In more lines than one, a line breaks between two keys, never inside one.
_KEYS = [key.replace(" ", "\u00a0") for key in KEY_LEGEND]
KEYS_TIGHT = "keys: " + "\u00a0· ".join(_KEYS)
KEYS_ONE_LINE = (  # spaced out, tight, bare, barest
    "keys:\u00a0 " + "\u00a0 · ".join(_KEYS),
    KEYS_TIGHT,
    KEYS_TIGHT.removeprefix("keys: "),
    "  ".join(_KEYS),
)


class Screen:
    """One view being drawn on one surface, with the sizes derived from the surface."""

    def __init__(self, canvas: Canvas, view: View) -> None:
        self.canvas = canvas
        self.view = view
        self.state = view.state
        area = canvas.rect
        self.pad = max(2, min(area.width, area.height) // 60)
        self.radius = self.pad * 2

    # --- pieces -------------------------------------------------------------------------

    def text(
        self,
        box: Rect,
        text: str,
        colour: Colour = TEXT,
        *,
        align: Align = "center",
        max_lines: int = 1,
        max_size: int | None = None,
        watched: bool = False,
    ) -> int:
        """Draw the text as large as fits (up to max_size); return the size it got.
        Watched: the table watches it from its seats (the canvas's WATCHED_SIZE)."""
        return self.canvas.text(
            box, text, colour, align=align, max_lines=max_lines, max_size=max_size, watched=watched
        )

    def either(
        self,
        box: Rect,
        said: Sequence[str],
        colour: Colour = TEXT,
        *,
        align: Align = "center",
        max_lines: int = 1,
        max_size: int | None = None,
    ) -> None:
        """The first of the texts (in full, then shorter) that fits legibly; else the
        last: fewer words on a small screen rather than smaller ones."""
        text = next((t for t in said if self.canvas.fits(box, t, max_lines)), said[-1])
        self.text(box, text, colour, align=align, max_lines=max_lines, max_size=max_size)

    def texts(
        self,
        lines: Sequence[tuple[Rect, str, Colour]],
        align: Align = "center",
        watched: bool = False,
    ) -> None:
        """Texts that belong together, all one size."""
        size = self.canvas.common_size([box for box, _, _ in lines], [t for _, t, _ in lines])
        for box, text, colour in lines:
            self.text(box, text, colour, align=align, max_size=size, watched=watched)

    def panel(self, box: Rect, colour: Colour = PANEL, margin: int | None = None) -> Rect:
        """A rounded panel; returns the box inside it that is safe for text, margin (else
        the pad) in from its edges."""
        self.canvas.fill(box, colour, self.radius)
        return inset(box, self.pad if margin is None else margin)

    def badges(
        self, marks: Sequence[tuple[Rect, int]], unlit: Container[int] = (), watched: bool = False
    ) -> None:
        """Seats' marks, all one size: number and symbol on the seat's colour, or only
        outlined in it when unlit (out of the game, locked)."""
        inner, shown, size = self.marks(marks, watched)
        for (box, seat), text_box, said in zip(marks, inner, shown, strict=True):
            colour = seat_colour(seat)
            radius = min(self.radius, box.height // 3)
            if seat in unlit:
                self.canvas.frame(box, colour, max(1, self.pad // 2), radius)
                ink = DIM
            else:
                self.canvas.fill(box, colour, radius)
                ink = ink_on(colour)
            self.text(text_box, said, ink, max_size=size, watched=watched)

    def marks(
        self, marks: Sequence[tuple[Rect, int]], watched: bool = False
    ) -> tuple[list[Rect], list[str], int]:
        """Where the seats' marks' texts go in their badges, the texts (each name as
        long as fits), and their one size."""
        inner = [_badge_text_box(box) for box, _ in marks]
        numbers = self.canvas.common_size(inner, [label(seat) for _, seat in marks])
        # A name may make the marks' text smaller than the numbers', down to this.
        least = min(numbers, max(WATCHED_SIZE if watched else MIN_SIZE, numbers * 2 // 3))
        shown = [self.mark(box, seat, least) for box, (_, seat) in zip(inner, marks, strict=True)]
        return inner, shown, min(numbers, self.canvas.common_size(inner, shown))

    def mark(self, box: Rect, seat: int, size: int) -> str:
        """The seat's mark: its player's name, shortened to fit the box at `size` or
        larger ("Alexand… ◆"), else the seat's number ("P4 ◆")."""
        name = self.view.name(seat)
        if name is None:
            return label(seat)
        fits, longest = 1, len(name)  # the name's length that fits, and one that does not
        if fit(label(seat, name), box.width, box.height)[0] >= size:
            return label(seat, name)
        while longest - fits > 1:
            middle = (fits + longest) // 2
            said = label(seat, shortened(name, middle))
            fits, longest = (
                (middle, longest) if fit(said, box.width, box.height)[0] >= size else (fits, middle)
            )
        return label(seat, shortened(name, fits)) if fits >= NAME_CUT_LEAST else label(seat)

    def named(self, make: Callable[[Callable[[int], str]], str]) -> list[str]:
        """A text naming players, made with their names in full, then shorter and shorter,
        and last with the seats' numbers: for `either`, which shows the first that fits."""

        def cut(length: int) -> Callable[[int], str]:
            return lambda p: shortened(captions.who(self.view, p), length)

        return [make(cut(length)) for length in NAME_LENGTHS] + [make(seat_name)]

    def seat_row(self, box: Rect, said: str, seats: Sequence[int]) -> None:
        """A label and seats' marks in one row, centred as a group."""
        weights = [3.6] + [BADGE_RATIO] * len(seats)
        width = min(box.width, round(box.height * sum(weights)) + self.pad * len(seats))
        group = Rect(box.centerx - width // 2, box.y, width, box.height)
        first, *marks = columns(group, weights, self.pad)
        self.text(first, said, DIM, align="right")
        self.badges(list(zip(marks, seats, strict=True)))

    def timer(self, box: Rect, left_ns: int, full_ns: int) -> None:
        """A timer's digits over a bar that drains with them; red for the last 3 s."""
        shown = captions.shown_ns(left_ns)
        colour = URGENT if captions.urgent(shown) else TEXT
        digits, bar = rows(box, [0.75, 0.25], self.pad, [self.big_px(), self.pad])
        self.text(digits, f"{captions.seconds(left_ns)} s", colour, watched=True)
        # A thin bar, however tall its box: a thick one reads as a switch.
        bar = inset(bar, self.pad // 2)
        bar = Rect(bar.x, bar.y, bar.width, min(bar.height, self.pad * 2))
        self.canvas.fill(bar, FAINT, bar.height // 2)
        if width := round(bar.width * min(1.0, shown / full_ns)):
            self.canvas.fill(Rect(bar.x, bar.y, width, bar.height), colour, bar.height // 2)

    def pips(self, box: Rect, lit: int) -> None:
        """Three dots for the last three seconds, one going out with each second."""
        for i, cell in enumerate(columns(_wide(box, 3.5), [1, 1, 1], self.pad)):
            dot = inset(square(cell), self.pad // 2)
            if i < lit:
                self.canvas.disc(dot, URGENT)
            else:
                self.canvas.disc(dot, FAINT, max(1, self.pad // 2))

    # --- the frame ----------------------------------------------------------------------

    def lines_px(self, lines: int) -> int:
        """How tall `lines` lines of the smallest text allowed are."""
        f = font(MIN_SIZE)
        return f.get_linesize() * (lines - 1) + f.get_height()

    def badge_px(self, watched: bool = False) -> int:
        """How tall a seat's mark must be for its text to be legible (or watched)."""
        text = self.big_px() if watched else self.lines_px(1)
        return text * 4 // 3  # the text, and the inset around it

    def big_px(self) -> int:
        """How tall a line of watched text is at its smallest."""
        return font(WATCHED_SIZE).get_height()

    def draw(self) -> None:
        self.canvas.fill(self.canvas.rect, BACKGROUND)
        area = inset(self.canvas.rect, self.pad)
        shown = self.notices(area.height)
        legend = KEYBOARD in self.view.source
        two = self.lines_px(2) + 2 * self.pad  # a panel of two lines
        weights = [0.08] + [0.08] * len(shown) + [0.77 - 0.08 * len(shown)]
        least = [self.lines_px(1)] + [two] * len(shown) + [0]
        if legend:
            # In as few lines as it fits: two where one does not (480x320), three on a
            # narrow portrait screen (480x800).
            legend_lines = next(
                (n for n in (2, 3) if fit(KEYS_TIGHT, area.width, self.lines_px(n), n)[0]), 3
            )
            weights, least = [*weights, 0.08], [*least, self.lines_px(legend_lines)]
        weights, least = [*weights, 0.15], [*least, self.lines_px(2) + self.pad]
        boxes = rows(area, weights, self.pad, least)
        header, main, footer = boxes[0], boxes[1 + len(shown)], boxes[-1]
        self.header(header)
        for box, (colour, said) in zip(boxes[1 : 1 + len(shown)], shown, strict=True):
            self.either(self.panel(box, colour), said, ink_on(colour), max_lines=2)
        if legend:
            # One line where it fits, spaced out or tight: two would be larger, but a bar
            # read in two halves.
            # Without its "keys:" where that makes it one line (800x480).
            one = next((k for k in KEYS_ONE_LINE if self.canvas.fits(boxes[-2], k)), None)
            self.text(boxes[-2], one or KEYS_TIGHT, DIM, max_lines=1 if one else legend_lines)
        self.footer(footer)
        SCREENS[self.name()](self, main)

    def notices(self, height: int) -> list[tuple[Colour, tuple[str, ...]]]:
        """The notices that fit (a quarter of the screen), the most severe first, each in
        full and shorter; the last one shown counts those left out."""
        given = (*self.view.notices, *captions.camera_notices(self.view))
        notices = sorted(given, key=lambda n: SEVERITY_ORDER.index(n.severity))
        room = max(1, int(height * NOTICES_SHARE // max(0.08 * height, self.lines_px(2))))
        lines = []
        for i, notice in enumerate(notices[:room]):
            colour, mark = NOTICE_STYLE[notice.severity]
            rest = len(notices) - room if i == room - 1 and len(notices) > room else 0
            more = f" (+{rest} more)" if rest else ""
            said = (notice.text, notice.short) if notice.short else (notice.text,)
            lines.append((colour, tuple(mark + text + more for text in said)))
        return lines

    def header(self, box: Rect) -> None:
        title, source = columns(box, [0.6, 0.4], self.pad)
        self.text(title, TITLES[self.name()], align="left")
        # Where the buttons come from, small: in full where it fits, else its first word.
        said = self.view.source
        first = said.split(" (")[0]
        shown = [said, first]
        # What records the table is shown whatever else fits (privacy), each mark whole.
        if marks := "  ·  ".join(m.replace(" ", NBSP) for m in captions.marks(self.view)):
            shown = [f"{marks}  ·  {said}", f"{marks}  ·  {first}", marks]
        small = box.height * 2 // 5
        self.either(source, shown, DIM, align="right", max_lines=2, max_size=small)

    def footer(self, box: Rect) -> None:
        if not self.view.messages:
            return
        message = self.view.messages[-1]
        colour = ATTENTION if message.startswith("ignored:") else TEXT
        self.canvas.fill(box, PANEL, self.radius)
        inside = inset(box, max(1, self.pad // 2))
        # A hint saying where the SET is: a small screen shows what comes before its cards.
        short = message.partition(captions.CARDS_SEEN)[0]
        said = list(dict.fromkeys([captions.named(self.view, message), message, short]))
        self.either(inside, said, colour, max_lines=2, max_size=inside.height * 2 // 5)

    def name(self) -> str:
        state = self.state
        if self.view.replay is not None:
            return "replay"
        if state.claim:
            return "claim"
        if state.solo is not None and state.phase is Phase.OPEN:
            return "solo"
        if self.view.settings.book.owes and state.phase is Phase.OPEN:
            return "solitaire"
        if state.result is not None:
            return "result"
        return state.phase.value

    # --- lobby and super-round join: who is in ------------------------------------------

    def roster(self, box: Rect, seats: Sequence[int], joined: set[int], locked: set[int]) -> None:
        """A tile per seat: lit when in, with IN or LOCKED written under it where there
        is room for both legibly (else the tiles alone: lit says in)."""
        first = grid_columns(box, len(seats), TILE_RATIO, self.pad)
        cells = self.roster_cells(box, seats, first)
        if not self.names_whole(cells, seats):
            # Fewer tiles abreast, and wider, where that shows the names whole: "Chl… ●"
            # beside the QR code was "Chloé ●" on the scores.
            wider = (self.roster_cells(box, seats, cols) for cols in range(first - 1, 0, -1))
            cells = next((c for c in wider if self.names_whole(c, seats)), cells)
        self.badges(
            [(mark, s) for (mark, _), s in zip(cells, seats, strict=True)], set(seats) - joined
        )
        said = ["IN" if s in joined else "LOCKED" if s in locked else "" for s in seats]
        self.texts(
            [
                (inset(under, self.pad // 2), word, GOOD if word == "IN" else DIM)
                for (_, under), word in zip(cells, said, strict=True)
                if under is not None
            ]
        )

    def roster_cells(
        self, box: Rect, seats: Sequence[int], cols: int
    ) -> list[tuple[Rect, Rect | None]]:
        """Each seat's tile in `cols` columns: its mark, and under it the box for IN or
        LOCKED where both fit legibly (else the mark alone: None)."""
        tiles = grid(box, len(seats), cols, self.pad)
        under = [self.badge_px(), self.lines_px(1) + self.pad]
        if not fits_rows(tiles[0], under, self.pad // 2):
            return [(tile, None) for tile in tiles]
        return [
            (mark, word)
            for mark, word in (rows(t, [0.6, 0.4], self.pad // 2, under) for t in tiles)
        ]

    def names_whole(self, cells: Sequence[tuple[Rect, Rect | None]], seats: Sequence[int]) -> bool:
        """Every named seat's mark shows its name in full in these cells, legibly."""
        _, shown, size = self.marks([(mark, s) for (mark, _), s in zip(cells, seats, strict=True)])
        named = [(said, s) for said, s in zip(shown, seats, strict=True) if self.view.name(s)]
        return size >= MIN_SIZE and all(said == label(s, self.view.name(s)) for said, s in named)

    def lobby(self, box: Rect) -> None:
        if (join := self.view.join) is not None:
            # How a phone joins beside the seats; under them on a portrait screen.
            box, sign = along(box, [0.6, 0.4], self.pad)
            self.join_sign(sign, join)
        ask, seats, hint = rows(box, [0.2, 0.62, 0.18], self.pad)
        said = ["Press your buzzer to join", "Press to join"]
        asked = next((t for t in said if self.canvas.fits(ask, t)), said[-1])
        small = max(MIN_SIZE, self.text(ask, asked) * 3 // 4)
        joined = {p.id for p in self.state.players}
        self.roster(seats, range(1, self.view.settings.players + 1), joined, set())
        need = self.view.settings.min_players
        if len(joined) >= need:
            start = [f"{len(joined)} in: press SUPER to start", "SUPER starts"]
            self.either(hint, start, GOOD, max_size=small)
        else:
            players = "one player" if need == 1 else f"{need} players"
            wait = [f"SUPER needs {players} in to start", f"SUPER needs {players}"]
            self.either(hint, wait, DIM, max_size=small)

    def join_sign(self, box: Rect, join: Join) -> None:
        """The page's QR code and the PIN, large, and its address; where phones cannot
        reach it, why not. Where there is no room the address goes first: the code holds
        it. Side by side on a wide panel (under the seats of a portrait screen)."""
        inside = self.panel(box)
        line = self.lines_px(1)
        pin = [f"PIN {join.pin}"] if join.pin is not None else ["no PIN: see the log", "no PIN"]
        address = (join.url or "").removeprefix("http://").removesuffix("/")
        if join.url is None or join.unreachable:
            said = join.unreachable if join.url is None else f"{address}: {join.unreachable}"
            what, code = rows(inside, [0.5, 0.5], self.pad, [line, line])
            self.either(what, [f"the page: {said}", said, join.unreachable], DIM, max_lines=2)
            self.either(code, pin)
            return
        if inside.width >= 1.6 * inside.height:
            shown, words = columns(inside, [0.5, 0.5], self.pad)
            code, where = rows(words, [0.6, 0.4], self.pad // 2)
        else:
            shown, code, where = rows(inside, [0.7, 0.18, 0.12], self.pad // 2, [0, line, 0])
            if not self.canvas.fits(where, address):
                # The address's row to the code instead: on a 3.5" screen, a module of 4
                # pixels, not 3: read from half as far again (bench/qr.py, 12.5 -> 19 cm).
                shown, code = rows(inside, [0.82, 0.18], self.pad // 2, [0, line])
        shown_pin = next((t for t in pin if self.canvas.fits(code, t)), pin[-1])
        size = self.text(code, shown_pin)
        if self.canvas.fits(where, address):
            self.text(where, address, DIM, max_size=max(MIN_SIZE, size * 3 // 4))
        qr.draw(self.canvas, shown, join.url)

    def super_join(self, box: Rect) -> None:
        sr = self.state.super_round
        assert sr is not None
        ask, seats, hint = rows(box, [0.2, 0.62, 0.18], self.pad)
        small = self.text(ask, "Press your buzzer to join") * 3 // 4
        seated = [p.id for p in self.state.players]
        self.roster(seats, seated, set(sr.participants), set(self.state.locked))
        if sr.participants:
            self.text(hint, "SUPER flips the card  ·  UNDO cancels", GOOD, max_size=small)
        else:
            self.text(hint, "nobody in yet: SUPER now cancels", DIM, max_size=small)

    # --- open play ----------------------------------------------------------------------

    def scores(self, box: Rect) -> None:
        """A tile per player: the seat's mark, the points large, and LOCKED or DEALS under
        them; where the tiles are too low for that (eight players on a 3.5" screen), the
        locked are said under the scores instead."""
        players = self.state.players
        tiles, bottom = self.tiles_and_line(box)
        out = sitting_out(self.view.settings, self.state)
        under = {}
        for p in players:
            if p.locked:
                under[p.id] = ("LOCKED", BAD)
            elif p.id == self.state.dealer:
                under[p.id] = ("SITS OUT" if p.id == out else "DEALS", ATTENTION)
        status = self.tiles(
            tiles,
            [(p.id, p.points) for p in players],
            {*self.state.locked, *([out] if out else [])},
            {p.id for p in players if p.locked},
            under,
        )
        locked = [captions.who(self.view, p.id) for p in players if p.locked and not status]
        self.bottom_line(bottom, f"locked: {', '.join(locked)}" if locked else "")

    def tiles_and_line(self, box: Rect) -> tuple[Rect, Rect]:
        """Room for tiles, and a line under them."""
        tiles, bottom = rows(box, [0.89, 0.11], self.pad, [0, self.lines_px(1)])
        return tiles, bottom

    def tiles(
        self,
        box: Rect,
        points: Sequence[tuple[int, int]],
        unlit: Container[int] = (),
        dimmed: Container[int] = (),
        under: Mapping[int, tuple[str, Colour]] | None = None,
        framed: Container[int] = (),
    ) -> bool:
        """A tile per (seat, points), row by row: the seat's mark over the points, large,
        and a word under them (`under`, by seat) where the tiles are tall enough; whether
        they were. Unlit seats' marks are outlined, dimmed seats' points dim, framed
        seats' tiles framed."""
        line, gap = self.lines_px(1), self.pad // 2

        def lowest(cols: int) -> Rect:  # rows of tiles may differ by a pixel
            return min(grid(box, len(points), cols, self.pad), key=lambda tile: tile.height)

        def tall_enough(cols: int) -> bool:
            return fits_rows(inset(lowest(cols), gap), [self.badge_px(), self.big_px()], gap)

        cols = grid_columns(box, len(points), TILE_RATIO, self.pad)
        # Rows of tiles too low for the points (a square screen): more abreast, fewer rows.
        if not tall_enough(cols):
            cols = next((c for c in range(cols + 1, len(points) + 1) if tall_enough(c)), cols)
        boxes = grid(box, len(points), cols, self.pad)
        inside = inset(lowest(cols), self.pad)
        least, weights = [self.badge_px(), self.big_px(), line], [0.34, 0.48, 0.18]
        status = fits_rows(inside, least, gap)
        if not status:
            least, weights = least[:2], [0.4, 0.6]
        # The panel's margin gives way before the points do.
        margin = self.pad if fits_rows(inside, least, gap) else gap
        cells = [rows(self.panel(cell, margin=margin), weights, gap, least) for cell in boxes]
        on = list(zip(cells, points, strict=True))
        self.badges([(mark, seat) for (mark, *_), (seat, _) in on], unlit)
        self.texts(
            [(box, str(n), DIM if seat in dimmed else TEXT) for (_, box, *_), (seat, n) in on],
            watched=True,
        )
        for cell, (seat, _) in zip(boxes, points, strict=True):
            if seat in framed:
                self.canvas.frame(cell, ATTENTION, max(2, self.pad // 2), self.radius)
        for (_, _, *below), (seat, _) in on:
            if below and seat in (under or {}):
                self.text(below[0], *(under or {})[seat])
        return status

    def bottom_line(self, box: Rect, before: str = "") -> None:
        """Under the scores: the bank, or the match's deal and dealer, and the deck by
        sight; after what the tiles had no room for."""
        view = self.view
        book = f"bank {self.state.bank}" if view.settings.book.bank else captions.deal(view)
        said = "  ·  ".join(filter(None, [book, captions.deck_by_sight(view)]))
        full = "  ·  ".join(filter(None, [before, said]))
        self.either(box, list(dict.fromkeys([full, said, book or ""])), DIM)

    def solo(self, box: Rect) -> None:
        solo = self.state.solo
        value = captions.increment(self.view)
        assert solo is not None and value is not None
        line, big = self.lines_px(1), self.big_px()
        least = [line, big, line, big + 2 * self.pad]
        if fits_rows(box, least, self.pad):
            what, worth, note, score = rows(box, [0.14, 0.46, 0.12, 0.28], self.pad, least)
            self.text(what, "a SET now scores")
            self.text(worth, f"+{value}", BAD if solo.zeroed else TEXT, watched=True)
        else:  # under the key bar on a 3.5" screen: the words beside the number
            now, note, score = rows(box, [0.5, 0.15, 0.35], self.pad, least[1:])
            what, worth = columns(now, [0.55, 0.45], self.pad)
            self.text(what, "a SET now scores", align="right", max_size=big)
            self.text(worth, f"+{value}", BAD if solo.zeroed else TEXT, align="left", watched=True)
        if solo.zeroed:
            self.text(note, "after a wrong no-SET claim", BAD)
        else:
            halves = f"halves every {SOLO_HALF_LIFE_NS // NS_PER_S} s"
            self.text(note, "  ·  ".join(filter(None, [halves, captions.cards(self.view)])), DIM)
        sets = "1 SET" if solo.sets == 1 else f"{solo.sets} SETs"
        said, points, found = columns(self.panel(score), [0.3, 0.4, 0.3], self.pad)
        self.texts([(said, "score", DIM), (found, sets, DIM)])
        self.text(points, str(self.state.players[0].points), watched=True)

    def solitaire(self, box: Rect) -> None:
        """The SETs found, large; what is owed and where the cards are, under them."""
        state = self.state
        line = self.lines_px(1)
        least = [line, self.big_px(), line + 2 * self.pad]
        what, found, counts = rows(box, [0.14, 0.5, 0.36], self.pad, least)
        self.text(what, "SETs found")
        self.text(found, str(state.players[0].points), watched=True)
        owed, deck, table = (self.panel(cell) for cell in columns(counts, [1, 1, 1], self.pad))
        self.texts(
            [
                (owed, f"owed {state.owed}", BAD if state.owed else DIM),
                (deck, f"deck {state.deck}", TEXT),
                (table, f"table {state.table}", TEXT),
            ]
        )

    def result(self, box: Rect) -> None:
        """Solitaire's end: won or lost, as big as it gets."""
        state = self.state
        line = self.lines_px(1)
        least = [self.big_px(), line + 2 * self.pad, line]
        word, detail, again = rows(box, [0.6, 0.26, 0.14], self.pad, least)
        won = state.result is Result.WON
        self.text(word, "WON" if won else "LOST", GOOD if won else BAD, watched=True)
        sets = state.players[0].points
        found = "1 SET found" if sets == 1 else f"{sets} SETs found"
        self.text(self.panel(detail), f"{found}  ·  owed {state.owed}")
        self.text(again, NEW_GAME_HINT, DIM)

    def claim(self, box: Rect) -> None:
        ask, valid, invalid, worth = rows(box, [0.4, 0.16, 0.16, 0.28], self.pad)
        small = self.text(ask, "No SET on the table?") // 2
        self.texts(
            [(valid, "VALID: right, there is none", GOOD), (invalid, "INVALID: there is one", BAD)]
        )
        self.text(worth, f"a SET now scores +{captions.increment(self.view)}", DIM, max_size=small)

    # --- a call -------------------------------------------------------------------------

    def call(self, box: Rect) -> None:
        """The margin over the caller, the point-out timer and the photo finish, side by
        side (stacked on a portrait screen): the timer has its own column, so that both
        it and the caller are large even under a notice on a 3.5" screen."""
        call = self.state.pending
        assert call is not None and call.turn is not None
        line = self.lines_px(1)
        head, body = rows(box, [0.16, 0.84], self.pad, [line, 0])
        tie = len(call.callers) > 1
        # One player has no one to be first over: no margin, no photo finish.
        alone = captions.photo_finish_call(self.view) is None
        if alone:
            said = self.named(lambda who: f"{who(call.callers[0])} calls SET")
            who, timer = along(body, [0.55, 0.45], self.pad)
        else:
            said = self.named(lambda who: captions.margin(call, who))
            who, timer, finish = along(body, [0.4, 0.18, 0.42], self.pad)
        self.either(head, said, ATTENTION if tie else TEXT)
        asides: list[tuple[list[str], Colour]] = []
        if (hint := captions.shared_cards_hint(self.view)) is not None:
            asides.append(([hint, "SUPER: shared cards"], ATTENTION))
        if (paused := captions.countdown_left_ns(self.view)) is not None:
            asides.append(([f"countdown paused: {captions.seconds(paused)} s"], DIM))
        caller, turn, *under = rows(
            who,
            [0.6, 0.16] + [0.24] * len(asides),
            self.pad,
            [self.badge_px(watched=True), line] + [self.lines_px(2)] * len(asides),
        )
        # Less wide than other marks: the column is narrow on a 3.5" screen.
        self.badges([(_wide(caller, BADGE_RATIO * 0.85), call.turn)], watched=True)
        self.text(
            turn,
            f"co-caller {len(call.verdicts) + 1} of {len(call.callers)}"
            if tie
            else "show your SET",
        )
        for aside, (said, colour) in zip(under, asides, strict=True):
            self.either(aside, said, colour, max_lines=2)
        if (pointout := captions.pointout_left_ns(self.view)) is not None:
            self.timer(timer, pointout, self.view.settings.pointout_ns)
        else:
            self.text(timer, "no time limit", DIM, max_lines=2)
        if not alone:
            self.photo_finish(finish, call)

    def photo_finish(self, box: Rect, call: Call) -> None:
        inside = self.panel(box)
        title, listing = rows(inside, [0.13, 0.87], self.pad // 2, [self.lines_px(1), 0])
        self.text(title, "photo finish", DIM)
        gap = max(1, self.pad // 2)
        presses = captions.offsets(call)
        said = [_press(call, seat, offset) for seat, offset in presses]
        # Each press's offset beside its mark; under it where the column is too narrow
        # for that (a square or 480 px wide portrait screen: the column is tall instead).
        line = self.lines_px(1)
        when_width = (listing.width - self.pad) * 0.6
        beside = all(fit(text, round(when_width), line)[0] >= MIN_SIZE for text, _ in said)
        row_px = self.badge_px() if beside else self.badge_px() + gap + line
        # As many rows as stay legible, up to PHOTO_ROWS: the first few presses matter.
        room = (listing.height + gap) // (row_px + gap)
        slots = rows(listing, [1] * max(1, min(PHOTO_ROWS, room)), gap)
        if len(presses) > len(slots) == 1:
            # Room for one row only (a short screen under notices): the headline above
            # has the margin; here, how many pressed.
            self.text(slots[0], f"{len(presses)} presses", DIM)
            return
        if len(presses) > len(slots):
            later = len(presses) - (len(slots) - 1)
            presses, said = presses[: len(slots) - 1], said[: len(slots) - 1]
            self.text(slots[-1], f"+{later} more", DIM)
        cells = [
            columns(slot, [0.4, 0.6], self.pad)
            if beside
            else rows(slot, [0.6, 0.4], gap, [self.badge_px(), line])
            for slot in slots[: len(presses)]
        ]
        on = list(zip(cells, presses, said, strict=True))
        self.badges([(mark, seat) for (mark, _), (seat, _), _ in on])
        self.texts([(when, text, colour) for (_, when), _, (text, colour) in on], "left")

    # --- the super round's countdown ----------------------------------------------------

    def countdown(self, box: Rect) -> None:
        sr = self.state.super_round
        left = captions.countdown_left_ns(self.view)
        assert sr is not None and left is not None
        remind = self.view.settings.must_use_flipped
        weights = [0.15, 0.62, 0.1] + ([0.13] if remind else [])
        line = self.lines_px(1)
        least = [self.badge_px(), self.big_px(), 0] + ([line + 2 * self.pad] if remind else [])
        who, digits, pips, *reminder = rows(box, weights, self.pad, least)
        self.seat_row(who, "may call:", sr.participants)
        shown = captions.shown_ns(left)
        urgent = captions.urgent(shown)
        self.text(digits, captions.seconds(left), URGENT if urgent else TEXT, watched=True)
        self.pips(pips, ceil(shown / NS_PER_S) if urgent else 0)
        if reminder:
            self.text(self.panel(reminder[0], ATTENTION), "the SET must use the flipped card", INK)

    # --- the end ------------------------------------------------------------------------

    def over(self, box: Rect) -> None:
        """The ranking, a place a row: in one column where the rows are tall and wide
        enough for every place, mark and points, else in two, else (eight players on a
        3.5" screen, a narrow portrait one) as the scores' tiles in order of place."""
        ranking = self.state.ranking
        listing, bottom = rows(box, [0.88, 0.12], self.pad, [0, self.lines_px(1)])
        split = len(self.state.deal_ends) > 1  # a match: each deal's points, then the total
        by_deal = captions.deal_points(self.state)
        places = [r.place for r in ranking]
        said = [
            (
                ("=" if places.count(r.place) > 1 else "") + _ordinal(r.place),
                " · ".join(str(n) for n in by_deal[r.player]),
            )
            for r in ranking
        ]
        layouts = (self.ranking_rows(listing, cols, split) for cols in (1, 2))
        layout = next(
            (found for found in layouts if found and self.legible(found[1], said, split)), None
        )
        if layout is None:
            self.ranked_tiles(box)
            return
        slots, cells = layout
        for slot, entry in zip(slots, ranking, strict=False):
            self.panel(slot)
            if entry.place == 1:
                self.canvas.frame(slot, ATTENTION, max(2, self.pad // 2), self.radius)
        if (worked_out := captions.solo_end(self.view)) is not None:
            self.text(slots[1], worked_out, max_lines=2)  # one player: room below
        on = list(zip(cells, ranking, said, strict=True))
        self.badges([(_wide(mark, BADGE_RATIO), r.player) for (_, mark, _, _), r, _ in on])
        self.texts(
            [
                (place, ordinal, ATTENTION if r.place == 1 else TEXT)
                for (place, _, _, _), r, (ordinal, _) in on
            ]
        )
        if split:
            self.texts([(under, deals, DIM) for (_, _, under, _), _, (_, deals) in on], "left")
        self.texts([(points, str(r.points), TEXT) for (_, _, _, points), r, _ in on], "right", True)
        again = NEW_GAME_HINT
        if split:
            self.either(bottom, [f"deals, then total  ·  {again}", again], DIM)
        elif self.view.settings.book.bank:
            self.either(bottom, [f"bank {self.state.bank}  ·  {again}", again], DIM)
        else:
            self.text(bottom, again, DIM)

    def ranking_rows(
        self, listing: Rect, cols: int, split: bool
    ) -> tuple[list[Rect], list[tuple[Rect, Rect, Rect, Rect]]] | None:
        """The ranking's rows in `cols` columns: each row's panel, and in it the boxes of
        the place, the mark, the deals' points (a match) and the points; None where the
        rows would be too low for the points."""
        ranking = self.state.ranking
        need = self.big_px() + 2 * self.pad
        if len(ranking) > 1 and not fits_rows(
            listing, [need] * ceil(len(ranking) / cols), self.pad
        ):
            return None
        per_col = max(ceil(len(ranking) / cols), min(3, (listing.height + self.pad) // need))
        # Rows stretched across a TV would leave each place far from its player.
        width = min(listing.width, round(listing.height * 2.4 * cols))
        listing = Rect(listing.centerx - width // 2, listing.y, width, listing.height)
        slots = [
            slot
            for col in columns(listing, [1] * cols, self.pad * 2)
            for slot in rows(col, [1] * per_col, self.pad)
        ]
        cells = []
        for slot in slots[: len(ranking)]:
            inside = inset(slot, self.pad)
            if split and cols == 1:
                place, mark, under, points = columns(inside, [0.2, 0.28, 0.34, 0.18], self.pad)
            elif split:  # in two columns: place and mark over the deals, the total beside
                left, points = columns(inside, [0.66, 0.34], self.pad)
                top, under = rows(left, [0.5, 0.5], self.pad // 2)
                place, mark = columns(top, [0.4, 0.6], self.pad)
            else:
                place, mark, points = columns(inside, [0.28, 0.4, 0.32], self.pad)
                under = Rect(mark.x, mark.y, 0, 0)
            cells.append((place, mark, under, points))
        return slots, cells

    def legible(
        self,
        cells: Sequence[tuple[Rect, Rect, Rect, Rect]],
        said: Sequence[tuple[str, str]],
        split: bool,
    ) -> bool:
        """Every place, mark and deals' points legible in its box, every points watched."""
        ranking = self.state.ranking
        for (place, mark, under, points), r, (ordinal, deals) in zip(
            cells, ranking, said, strict=True
        ):
            if not (
                self.canvas.fits(place, ordinal)
                and self.canvas.fits(_badge_text_box(_wide(mark, BADGE_RATIO)), label(r.player))
                and (not split or self.canvas.fits(under, deals))
                and fit(str(r.points), points.width, points.height)[0] >= WATCHED_SIZE
            ):
                return False
        return True

    def ranked_tiles(self, box: Rect) -> None:
        """The ranking as tiles in order of place, the winners framed, each place under
        its points where the tiles have room: where a row a place would make the points
        smaller than the table can read. Equal points share a place, so the order and
        the points say the ranking even where the places are not written."""
        ranking = self.state.ranking
        places = [r.place for r in ranking]
        under = {
            r.player: (
                ("=" if places.count(r.place) > 1 else "") + _ordinal(r.place),
                ATTENTION if r.place == 1 else TEXT,
            )
            for r in ranking
        }
        winners = {r.player for r in ranking if r.place == 1}
        tiles, bottom = self.tiles_and_line(box)
        shown = self.tiles(tiles, [(r.player, r.points) for r in ranking], (), (), under, winners)
        bank = f"bank {self.state.bank}" if self.view.settings.book.bank else ""
        said = [
            "  ·  ".join(filter(None, ["" if shown else "in order of place", bank, NEW_GAME_HINT])),
            "  ·  ".join(filter(None, [bank, NEW_GAME_HINT])),
            NEW_GAME_HINT,
        ]
        self.either(bottom, said, DIM)


def _replay(screen: Screen, box: Rect) -> None:
    """A call's sound again, slowed down: the waveform around its presses, each press a line
    in its seat's colour under its seat's mark, each onset a tick below (a soft one
    outlined only), a cursor where it is heard when it is there, and the whole clip's
    progress as a bar."""
    replay = screen.view.replay
    assert replay is not None
    canvas, pad = screen.canvas, screen.pad
    line = screen.lines_px(1)
    title, marks, wave, ticks, progress, legend = rows(
        box,
        [0.12, 0.14, 0.5, 0.06, 0.02, 0.1],
        pad // 2,
        [line, screen.badge_px(), 0, pad * 2, pad, line],
    )
    screen.text(title, captions.named(screen.view, replay.title))
    mid, half = wave.centery, wave.height * 0.45
    count = len(replay.lows)
    width = max(1, wave.width // max(1, count))
    for i, (low, high) in enumerate(zip(replay.lows, replay.highs, strict=True)):
        x = wave.left + i * wave.width // count
        top, bottom = round(mid - high * half), round(mid - low * half)
        canvas.fill(Rect(x, top, width, max(1, bottom - top)), DIM)
    stroke = max(2, pad // 2)
    first, last = replay.span

    def at(share: float) -> int | None:
        """Where a point of the clip is drawn; None outside the span."""
        if not first <= share <= last or last <= first:
            return None
        return wave.left + round((share - first) / (last - first) * (wave.width - 1))

    for x in filter(None, map(at, replay.gaps)):
        canvas.fill(Rect(x, wave.top, stroke, wave.height), ERROR)
    spike = min(ticks.height, 3 * stroke)
    soft = set(replay.soft)
    for share in replay.onsets:
        if (spot := at(share)) is None:
            continue
        tip = (spot, ticks.bottom - spike)
        corners = [tip, (spot - spike, ticks.bottom), (spot + spike, ticks.bottom)]
        # Outlined: the detector cannot back this start's place (a weak rise, or a voice
        # over another); filled: a sharp rise from the room's level.
        width = max(1, stroke // 2) if share in soft else 0
        pygame.draw.polygon(canvas.surface, ATTENTION, corners, width)
    shown = [(seat, where) for seat, share in replay.presses if (where := at(share)) is not None]
    for seat, where in shown:
        line_box = Rect(where - stroke // 2, marks.bottom, stroke, wave.bottom - marks.bottom)
        canvas.fill(line_box, seat_colour(seat))
    # The marks side by side in press order, the first caller's leftmost: the lines below
    # are ms apart, no room to stand a mark over each.
    slots = columns(marks, [1] * len(shown), pad) if shown else []
    badge_w = min([marks.height * 3, *(slot.width for slot in slots)])
    placed = []
    for slot, (seat, _) in zip(slots, shown, strict=True):
        mark = Rect(0, marks.top, badge_w, marks.height)
        mark.centerx = slot.centerx
        placed.append((mark, seat))
    screen.badges(placed)
    if (cursor := at(replay.cursor)) is not None:
        canvas.fill(Rect(cursor - stroke // 2, wave.top, stroke, wave.height), TEXT)
    canvas.fill(progress, FAINT, progress.height // 2)
    done = Rect(progress.left, progress.top, round(progress.width * replay.cursor), progress.height)
    canvas.fill(done, TEXT, progress.height // 2)
    unsure = "  ·  △ a soft start: unsure" if soft else ""
    # A sharp start, not a voice: a clink or a tap in the room is one too (docs/rules.md).
    said = f"│ a press  ·  ▲ a sharp start{unsure}" if replay.heard else "not heard: no speaker"
    short = ["▲ sharp  ·  △ unsure" if soft else "▲ a sharp start"] if replay.heard else []
    screen.either(legend, [f"{said}  ·  REPLAY again stops", said, *short], DIM)


SCREENS: dict[str, Callable[[Screen, Rect], None]] = {
    "replay": _replay,
    "lobby": Screen.lobby,
    "open": Screen.scores,
    "solo": Screen.solo,
    "claim": Screen.claim,
    "solitaire": Screen.solitaire,
    "result": Screen.result,
    "call": Screen.call,
    "super-join": Screen.super_join,
    "super-countdown": Screen.countdown,
    "super-call": Screen.call,
    "over": Screen.over,
}
TITLES = {
    "replay": "REPLAY",
    "lobby": "NEW GAME",
    "open": "SCORES",
    "solo": "SOLO",
    "claim": "NO SET?",
    "solitaire": "SOLITAIRE",
    "result": "GAME OVER",
    "call": "SET!",
    "super-join": "SUPER ROUND",
    "super-countdown": "SUPER ROUND",
    "super-call": "SUPER ROUND: SET!",
    "over": "GAME OVER",
}


def draw_screen(canvas: Canvas, view: View) -> None:
    Screen(canvas, view).draw()


def _press(call: Call, seat: int, offset: str) -> tuple[str, Colour]:
    """A press in the photo finish: its verdict once judged, else its offset."""
    judged = call.callers[: len(call.verdicts)]
    if seat in judged:
        return JUDGED[call.verdicts[judged.index(seat)]]
    return offset, TEXT if seat in call.callers else DIM


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _badge_text_box(box: Rect) -> Rect:
    """Where a seat's mark's text goes in its badge."""
    return inset(box, max(1, min(box.height // 8, box.width // 12)))


def _wide(box: Rect, ratio: float) -> Rect:
    """The largest box ratio times as wide as tall that fits in this one, centred in it."""
    width = min(box.width, round(box.height * ratio))
    out = Rect(0, 0, width, min(box.height, max(1, round(width / ratio))))
    out.center = box.center
    return out
