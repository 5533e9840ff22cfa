"""The game in a terminal: the scoreboard, the call and its photo finish, timers, notices.

For a machine without a screen (or over ssh). It redraws the whole picture only when
its text changes; the main loop asks captions.next_change_ns when a timer needs a frame.
"""

import functools
import os
import re
import unicodedata
from dataclasses import replace
from typing import TextIO

from referee.names import ELLIPSIS
from referee.rules import Phase, sitting_out
from referee.seats import Colour, colour, label
from referee.view import Severity, View

from . import captions
from .style import ATTENTION, DIM, ERROR, URGENT

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
CLEAR = "\x1b[H\x1b[2J"
ALT_SCREEN_ON, ALT_SCREEN_OFF = "\x1b[?1049h\x1b[?25l", "\x1b[?25h\x1b[?1049l"
MESSAGES_SHOWN = 4
REPLAY_BAR = 20  # characters of the replay's progress
DEFAULT_WIDTH = 80
# The most columns a player's name takes: a name of 24 letters whole, one of 24 CJK
# characters (48 columns) cut.
NAME_COLUMNS = 24


Style = tuple[Colour | None, bool]  # a colour (None: the terminal's own) and bold
Segment = tuple[str, Style]
PLAIN: Style = (None, False)
GAP = "   "  # between the segments of a line (the players of a row)
INDENT = "  "  # a line that had to break goes on, indented


def _paint(text: str, style: Style, colour_on: bool) -> str:
    rgb, bold = style
    if not colour_on:
        return text
    start = (BOLD if bold else "") + (f"\x1b[38;2;{rgb[0]};{rgb[1]};{rgb[2]}m" if rgb else "")
    return f"{start}{text}{RESET}" if start else text


def render(
    view: View, *, colour_on: bool = True, width: int = 80, height: int | None = None
) -> str:
    """The whole picture as text (with ANSI colour when colour_on), no line wider than
    width columns: lines break between words, inside one only where it is wider than a
    line. Taller than height, it loses first the log, then the keys, the blank lines, the
    notices (the least severe first) and the deal's line: the game itself (title, scores,
    what happens) stays on screen."""
    view = replace(view, names=tuple((seat, _cut(name)) for seat, name in view.names))
    fitted = [(drop, _fit(segments, width)) for drop, segments in _lines(view)]
    if height is not None:
        rows = sum(len(lines) for _, lines in fitted)
        for i in sorted(range(len(fitted)), key=lambda i: -fitted[i][0]):
            if rows <= height or fitted[i][0] == KEEP:
                break
            rows -= len(fitted[i][1])
            fitted[i] = (KEEP, [])
    out = [_paint_line(line, colour_on) for _, lines in fitted for line in lines]
    return "\n".join(out[:height]) + "\n"


# What a short terminal drops first: the higher, the sooner (render).
KEEP, DEAL, ERRORS, NOTICES, BLANK, KEYS, LOG = 0, 1, 2, 3, 4, 5, 6


def _lines(view: View) -> list[tuple[int, list[Segment]]]:
    """The picture, each line a list of segments (the players of a row, or one text),
    with how soon a short terminal drops it."""
    state, settings = view.state, view.settings
    lines: list[tuple[int, list[Segment]]] = [
        (KEEP, [(f"SET referee · {settings.rules} rules · {_source(view)}", (None, True))]),
        (BLANK, []),
    ]
    caller = state.pending.turn if state.pending else None
    sr = state.super_round
    row: list[Segment] = []
    for p in state.players:
        tags = []
        if p.locked and state.phase is not Phase.OVER:  # as the screen: over, it is moot
            tags.append("LOCKED")
        if p.id == caller:
            tags.append("CALLING")
        if sr is not None and p.id in sr.participants:
            tags.append("in super round")
        if p.id == state.dealer and state.phase is not Phase.OVER:
            tags.append("DEALS" + (", sits out" if sitting_out(settings, state) else ""))
        text = f"{label(p.id, view.name(p.id))} {p.points:>3}" + (
            f" [{', '.join(tags)}]" if tags else ""
        )
        row.append((text, (colour(p.id), p.id == caller)))
    if settings.book.bank and state.phase is not Phase.LOBBY:
        row.append((f"bank {state.bank}", PLAIN))
    # Four players a line at most, so that a row reads as one (and fits a narrow terminal).
    rows = [row[i : i + 4] for i in range(0, len(row), 4)] or [[("nobody has joined yet", PLAIN)]]
    lines += [(KEEP, r) for r in rows]
    deal = (captions.deal(view), captions.cards(view), captions.deck_by_sight(view))
    lines += [(DEAL, [(line, PLAIN)]) for line in deal if line]
    lines.append((BLANK, []))
    lines.append((KEEP, [(captions.headline(view).upper(), (None, True))]))
    if (replay := view.replay) is not None:
        bar = round(REPLAY_BAR * replay.cursor)
        heard = "" if replay.heard else " (not heard: no speaker)"
        title = captions.named(view, replay.title)
        playing = f"REPLAY: {title}{heard} [{'#' * bar}{'.' * (REPLAY_BAR - bar)}]"
        presses = " ".join(label(seat, view.name(seat)) for seat, _ in replay.presses)
        lines.append((KEEP, [(playing, (ATTENTION, True))]))
        lines.append(
            (
                KEEP,
                [(f"   presses {presses or 'none'}; {len(replay.onsets)} voice onset(s)", PLAIN)],
            )
        )
    lines += [(KEEP, [segment]) for segment in _details(view)]
    lines.append((BLANK, []))
    for notice in (*view.notices, *captions.camera_notices(view)):
        error = notice.severity is Severity.ERROR
        mark = "!!" if error else "!"
        said = (f"{mark} {notice.text}", (ERROR if error else ATTENTION, True))
        lines.append((ERRORS if error else NOTICES, [said]))
    lines += [
        (LOG, [(f"> {captions.named(view, m)}", PLAIN)]) for m in view.messages[-MESSAGES_SHOWN:]
    ]
    if "keyboard" in view.source:
        legend: list[Segment] = [(entry, (DIM, False)) for entry in ("keys:", *captions.KEY_LEGEND)]
        lines += [(KEYS, []), (KEYS, legend)]
    return lines


def _source(view: View) -> str:
    return " · ".join((view.source, *captions.marks(view)))


def columns(text: str) -> int:
    """The columns a terminal gives the text: East Asian wide and full-width characters
    two, combining marks and format characters none, the rest one."""
    if text.isascii():
        return len(text)
    return sum(map(_char_columns, text))


@functools.lru_cache(maxsize=4096)  # a picture's few hundred characters, every frame
def _char_columns(char: str) -> int:
    if unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _head(text: str, width: int) -> str:
    """The longest start of the text within width columns, its base characters' marks
    with them."""
    used = 0
    for i, char in enumerate(text):
        used += _char_columns(char)
        if used > width:
            return text[:i]
    return text


def _cut(name: str) -> str:
    """The name in at most NAME_COLUMNS columns: cut, with an ellipsis when it was."""
    if columns(name) <= NAME_COLUMNS:
        return name
    return _head(name, NAME_COLUMNS - columns(ELLIPSIS)).rstrip() + ELLIPSIS


def _fit(segments: list[Segment], width: int) -> list[list[Segment]]:
    """A line's segments in lines no wider than width columns: breaks go between segments
    first, then between the words of a segment too wide alone."""
    if not segments:
        return [[]]
    lines: list[list[Segment]] = [[]]
    used = 0
    for text, style in segments:
        size = columns(text)
        need = size + (len(GAP) if lines[-1] else 0)
        if lines[-1] and used + need > width:
            lines.append([])
            used, need = 0, size
        if size <= width - used:
            lines[-1].append((GAP + text if lines[-1] else text, style))
            used += need
            continue
        pieces = _wrap(text, width)
        for i, piece in enumerate(pieces):
            if i:
                lines.append([])
            lines[-1].append((piece, style))
        used = columns(pieces[-1])
    return lines


_WORD = re.compile(r"\s*\S+")
_SPACES = str.maketrans("\t\n\v\f\r", "     ")  # a line's breaks are the picture's own


def _wrap(text: str, width: int) -> list[str]:
    """The text in lines of at most width columns, broken between words, each line after
    the first indented; a word wider than a line alone (a name on a narrow terminal) is
    broken where it meets the edge."""
    lines: list[str] = []
    line = ""
    for word in _WORD.findall(text.translate(_SPACES)):
        if not line:
            line = word  # the text's own indent stays
        elif columns(line) + columns(word) <= width:
            line += word
        else:
            lines.append(line)
            line = INDENT + word.lstrip()
        while columns(line) > width:
            head = _head(line, width)
            if not head.strip() and line[:1].isspace():
                line = line.lstrip()  # only the indent fits: the word goes on without it
                continue
            head = head or line[:1]  # a character wider than the line: alone on one
            lines.append(head)
            line = INDENT + line[len(head) :]
    return [*lines, line]


def _paint_line(segments: list[Segment], colour_on: bool) -> str:
    out = []
    for text, style in segments:
        lead = text[: len(text) - len(text.lstrip(" "))]  # the gap is never painted
        out.append(lead + _paint(text[len(lead) :], style, colour_on))
    return "".join(out)


def _details(view: View) -> list[Segment]:
    state = view.state
    out: list[Segment] = []
    if (left := captions.pointout_left_ns(view)) is not None:
        out.append((f"time to show it: {captions.seconds(left)} s", PLAIN))
    if (left := captions.countdown_left_ns(view)) is not None and state.phase in (
        Phase.SUPER_COUNTDOWN,
        Phase.SUPER_CALL,
    ):
        paused = " (paused)" if captions.countdown_paused(view) else ""
        hot = URGENT if captions.urgent(left) and not paused else None
        out.append((f"COUNTDOWN {captions.seconds(left)} s{paused}", (hot, True)))
        if view.settings.must_use_flipped:
            out.append(("the SET must use the flipped card", PLAIN))
    if (value := captions.increment(view)) is not None and (
        state.phase is Phase.OPEN or state.claim
    ):
        out.append((f"a SET now scores {value}", PLAIN))
    if (hint := captions.shared_cards_hint(view)) is not None:
        out.append((hint, (ATTENTION, True)))
    if (call := captions.photo_finish_call(view)) is not None:
        # Judged already, it stays until the next step: said so, under "find a SET".
        which = "photo finish" if call is state.pending else "the last call's photo finish"
        out.append((f"{which}: {captions.margin(call, lambda p: captions.who(view, p))}", PLAIN))
        out += [
            (f"   {label(p, view.name(p))}  {text}", PLAIN) for p, text in captions.offsets(call)
        ]
    if (worked_out := captions.solo_end(view)) is not None:
        out.append((f"score: {worked_out}", PLAIN))
    if (join := captions.joining(view)) is not None:
        out.append((join, (None, True)))
    if state.phase is Phase.OVER and state.result is None:
        by_deal = captions.deal_points(state)
        for r in state.ranking:
            deals = by_deal.get(r.player, [])
            split = f"   (deals: {' · '.join(map(str, deals))})" if len(deals) > 1 else ""
            out.append(
                (f"{r.place}. {label(r.player, view.name(r.player))}  {r.points}{split}", PLAIN)
            )
    return out


class TerminalScreen:
    wake_ns = None  # shown again only when the picture changes (devices.Screen)

    def __init__(self, stream: TextIO, *, colour_on: bool = True) -> None:
        self._stream = stream
        self._colour = colour_on
        self._last = ""
        stream.write(ALT_SCREEN_ON)
        stream.flush()

    def show(self, view: View) -> bool:
        width, height = self._size()
        text = render(view, colour_on=self._colour, width=width, height=height)
        if text == self._last:
            return False
        self._stream.write(CLEAR + text.replace("\n", "\r\n"))
        self._stream.flush()
        self._last = text
        return True

    def _size(self) -> tuple[int, int | None]:
        """Columns and lines; a size the terminal does not say: 80 columns, lines unbounded."""
        try:
            size = os.get_terminal_size(self._stream.fileno())
        except (OSError, ValueError, AttributeError):  # not a terminal (a test's StringIO)
            return DEFAULT_WIDTH, None
        # 0: a terminal that does not say (a bare pty). The last line is left empty: a
        # line written there would scroll the picture's first one off.
        return size.columns or DEFAULT_WIDTH, (size.lines - 1 if size.lines > 1 else None)

    def close(self) -> None:
        self._stream.write(ALT_SCREEN_OFF)
        self._stream.flush()
