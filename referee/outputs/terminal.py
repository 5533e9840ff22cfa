"""The game in a terminal: the scoreboard, the call and its photo finish, timers, notices.

For a machine without a screen (or over ssh). It redraws the whole picture only when
its text changes; the main loop asks `next_change_ns` when a timer needs a new frame.
"""

from collections.abc import Callable
from typing import TextIO

from referee.rules import Phase, RuleSet
from referee.view import Severity, View

from . import captions
from .seats import colour, label

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
CLEAR = "\x1b[H\x1b[2J"
ALT_SCREEN_ON, ALT_SCREEN_OFF = "\x1b[?1049h\x1b[?25l", "\x1b[?25h\x1b[?1049l"
KEYS = "keys: 1-8 buzzers  v valid  x invalid  s super  u undo  e end  q quit"
MESSAGES_SHOWN = 4


def _paint(text: str, rgb: tuple[int, int, int] | None = None, *, bold: bool = False) -> str:
    start = (BOLD if bold else "") + (f"\x1b[38;2;{rgb[0]};{rgb[1]};{rgb[2]}m" if rgb else "")
    return f"{start}{text}{RESET}" if start else text


def render(view: View, *, colour_on: bool = True) -> str:
    """The whole picture as text (with ANSI colour when colour_on)."""

    def paint(text: str, rgb: tuple[int, int, int] | None = None, *, bold: bool = False) -> str:
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
        text = f"{label(p.id)} {p.points:>3}" + (f" [{', '.join(tags)}]" if tags else "")
        row.append(paint(text, colour(p.id), bold=p.id == caller))
    if settings.rules is RuleSet.SUPER and state.phase is not Phase.LOBBY:
        row.append(f"bank {state.bank}")
    # Four players a line fit 80 columns.
    rows = ["   ".join(row[i : i + 4]) for i in range(0, len(row), 4)]
    lines += rows or ["nobody has joined yet"]
    lines.append("")

    lines.append(paint(captions.headline(view).upper(), bold=True))
    lines += _details(view, paint)
    lines.append("")

    for notice in view.notices:
        mark = "!!" if notice.severity is Severity.ERROR else "!"
        lines.append(paint(f"{mark} {notice.text}", (230, 80, 60), bold=True))
    lines += [f"> {m}" for m in view.messages[-MESSAGES_SHOWN:]]
    if "keyboard" in view.source:
        lines += ["", paint(KEYS, (150, 150, 150))]
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
        hot = (240, 80, 60) if left <= 3_000_000_000 and not paused else None
        out.append(paint(f"COUNTDOWN {captions.seconds(left)} s{paused}", hot, bold=True))
        if view.settings.must_use_flipped:
            out.append("the SET must use the flipped card")
    if (value := captions.increment(view)) is not None and state.phase is Phase.OPEN:
        out.append(f"a SET now scores {value}")
    call = state.pending or (state.calls[-1] if state.calls else None)
    if call is not None and state.phase is not Phase.LOBBY:
        out.append("photo finish: " + captions.margin(call))
        out += [f"   {label(p)}  {text}" for p, text in captions.offsets(call)]
    if state.phase is Phase.OVER:
        out += [f"{r.place}. {label(r.player)}  {r.points}" for r in state.ranking]
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

    def next_frame_ns(self, view: View) -> int | None:
        return captions.next_change_ns(view)

    def close(self) -> None:
        self._stream.write(ALT_SCREEN_OFF)
        self._stream.flush()
