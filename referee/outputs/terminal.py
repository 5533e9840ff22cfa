"""The game in a terminal: the scoreboard, the call and its photo finish, timers, notices.

For a machine without a screen (or over ssh). It redraws the whole picture only when
its text changes; the main loop asks captions.next_change_ns when a timer needs a frame.
"""

from collections.abc import Callable
from typing import TextIO

from referee.inputs.keyboard import KEYMAP, QUIT_KEY
from referee.rules import Phase, sitting_out
from referee.view import Severity, View

from . import captions
from .seats import Colour, colour, label
from .style import ATTENTION, DIM, ERROR, URGENT

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
CLEAR = "\x1b[H\x1b[2J"
ALT_SCREEN_ON, ALT_SCREEN_OFF = "\x1b[?1049h\x1b[?25l", "\x1b[?25h\x1b[?1049l"
_NAMES = {"VALID": "valid", "INVALID": "invalid", "SUPER": "super", "UNDO": "undo", "END": "end"}
KEYS = "keys: 1-8 buzzers  " + "  ".join(
    [f"{key} {_NAMES[button]}" for key, button in KEYMAP.items() if button in _NAMES]
    + [f"{QUIT_KEY} quit"]
)
MESSAGES_SHOWN = 4


def _paint(text: str, rgb: Colour | None = None, *, bold: bool = False) -> str:
    start = (BOLD if bold else "") + (f"\x1b[38;2;{rgb[0]};{rgb[1]};{rgb[2]}m" if rgb else "")
    return f"{start}{text}{RESET}" if start else text


def render(view: View, *, colour_on: bool = True) -> str:
    """The whole picture as text (with ANSI colour when colour_on)."""

    def paint(text: str, rgb: Colour | None = None, *, bold: bool = False) -> str:
        return _paint(text, rgb, bold=bold) if colour_on else text

    state, settings = view.state, view.settings
    lines = [paint(f"SET referee · {settings.rules} rules · {view.source}", bold=True), ""]

    caller = state.pending.turn if state.pending else None
    sr = state.super_round
    row = []
    for p in state.players:
        tags = []
        if p.locked:
            tags.append("LOCKED")
        if p.id == caller:
            tags.append("CALLING")
        if sr is not None and p.id in sr.participants:
            tags.append("in super round")
        if p.id == state.dealer and state.phase is not Phase.OVER:
            tags.append("DEALS" + (", sits out" if sitting_out(settings, state) else ""))
        text = f"{label(p.id)} {p.points:>3}" + (f" [{', '.join(tags)}]" if tags else "")
        row.append(paint(text, colour(p.id), bold=p.id == caller))
    if settings.book.bank and state.phase is not Phase.LOBBY:
        row.append(f"bank {state.bank}")
    # Four players a line: eight on one would not fit a terminal's width.
    rows = ["   ".join(row[i : i + 4]) for i in range(0, len(row), 4)]
    lines += rows or ["nobody has joined yet"]
    lines += [line for line in (captions.deal(view), captions.cards(view)) if line]
    lines.append("")

    lines.append(paint(captions.headline(view).upper(), bold=True))
    lines += _details(view, paint)
    lines.append("")

    for notice in view.notices:
        error = notice.severity is Severity.ERROR
        mark = "!!" if error else "!"
        lines.append(paint(f"{mark} {notice.text}", ERROR if error else ATTENTION, bold=True))
    lines += [f"> {m}" for m in view.messages[-MESSAGES_SHOWN:]]
    if "keyboard" in view.source:
        lines += ["", paint(KEYS, DIM)]
    return "\n".join(lines) + "\n"


def _details(view: View, paint: Callable[..., str]) -> list[str]:
    state = view.state
    out: list[str] = []
    if (left := captions.pointout_left_ns(view)) is not None:
        out.append(f"time to show it: {captions.seconds(left)} s")
    if (left := captions.countdown_left_ns(view)) is not None and state.phase in (
        Phase.SUPER_COUNTDOWN,
        Phase.SUPER_CALL,
    ):
        paused = " (paused)" if captions.countdown_paused(view) else ""
        hot = URGENT if captions.urgent(left) and not paused else None
        out.append(paint(f"COUNTDOWN {captions.seconds(left)} s{paused}", hot, bold=True))
        if view.settings.must_use_flipped:
            out.append("the SET must use the flipped card")
    if (value := captions.increment(view)) is not None and (
        state.phase is Phase.OPEN or state.claim
    ):
        out.append(f"a SET now scores {value}")
    # A call's photo finish while it is judged, and in open play until the next one.
    call = state.pending or (state.calls[-1] if state.calls and state.phase is Phase.OPEN else None)
    if call is not None:
        out.append("photo finish: " + captions.margin(call))
        out += [f"   {label(p)}  {text}" for p, text in captions.offsets(call)]
    if state.phase is Phase.OVER and state.result is not None:
        out.append(paint(f"*** {state.result.upper()} ***", bold=True))
    elif state.phase is Phase.OVER:
        by_deal = captions.deal_points(state)
        for r in state.ranking:
            deals = by_deal.get(r.player, [])
            split = f"   (deals: {' · '.join(map(str, deals))})" if len(deals) > 1 else ""
            out.append(f"{r.place}. {label(r.player)}  {r.points}{split}")
    return out


class TerminalScreen:
    def __init__(self, stream: TextIO, *, colour_on: bool = True) -> None:
        self._stream = stream
        self._colour = colour_on
        self._last = ""
        stream.write(ALT_SCREEN_ON)
        stream.flush()

    def show(self, view: View) -> None:
        text = render(view, colour_on=self._colour)
        if text != self._last:
            self._stream.write(CLEAR + text.replace("\n", "\r\n"))
            self._stream.flush()
            self._last = text

    def close(self) -> None:
        self._stream.write(ALT_SCREEN_OFF)
        self._stream.flush()
