"""One serial board's lines in event time: ordered, mapped to the daemon's clock, checked.

docs/protocol.md says what the board promises; this is what the referee makes of it, one
timeline at a time (from the port's opening, or the board's HELLO, to the next):

- **Watermark mode.** Once the board has sent a `T` on this timeline, its `D` and `U`
  lines wait for a T to pass them and then go on sorted by stamp, so a press stamped
  earlier wins however late its line came. The last T, mapped with the edges it covers
  (board_clock.py), is the board's watermark.
- **Without T lines** (older firmware) the lines go on at the end of each read, sorted by
  stamp; the source falls back on the keyboard's rule for its watermark (serial_board.py).
- **Late lines.** A D or U stamped before the board's watermark (its last T; without T
  lines, the latest stamp passed on) broke the board's promise: it is mapped with the
  current offset and passed on at once, never dropped. The session decides what late
  data does.
- **Impossible stamps.** A line stamped more than PLAUSIBLE_NS ahead of where the board's
  clock can be, a line more than that before the board's watermark, or a T that goes
  back, is garbage: counted, logged with its repr, and kept from the mapping, so it never
  poisons the lines after it. But JUMP_LINES such lines in a row that agree with each
  other are the board's clock that jumped (a board on a UART that restarted unheard, say):
  the timeline starts afresh with them (`jumps` counts it, for the source to say).
- **Made-up releases.** When a timeline ends with buttons down (a HELLO, an unplug, a
  jump), their ups will never come: each is a `LostTrack`, which decides nothing.
"""

import logging
from dataclasses import dataclass

from referee.edges import Edge, LostTrack
from referee.inputs import SourceItem
from referee.inputs.board_clock import MARGIN_NS, BoardClock
from referee.inputs.board_lines import BoardEdge, BoardLine, BoardTime, Hello

log = logging.getLogger(__name__)

# How far from where the board's clock should be a stamp may lie and still be believed.
PLAUSIBLE_NS = 1_000_000_000
PLAUSIBLE_US = PLAUSIBLE_NS // 1000
# This many impossible lines in a row, agreeing with each other, are a jump of the clock.
JUMP_LINES = 3
JUMPED = "button board's clock jumped: its times are mapped afresh"


@dataclass(frozen=True, slots=True)
class _Suspect:
    raw: bytes
    line: BoardEdge | BoardTime
    received_ns: int

    @property
    def offset_ns(self) -> int:
        return self.received_ns - 1000 * self.line.t_us


def _stamp(edge: BoardEdge) -> int:
    return edge.t_us


class BoardStream:
    """The lines of one board, as the source's items; `source` names it in statuses."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.impossible = 0  # lines with impossible stamps, since the start
        self.jumps = 0  # times its clock jumped, and the mapping started afresh
        self._clock = BoardClock()
        self._held: set[str] = set()  # down, as far as the edges passed on say
        self.restart()

    def restart(self) -> None:
        """A fresh timeline: the port opened, the board said hello, its clock jumped."""
        self._clock.reset()
        self._pending: list[BoardEdge] = []
        self._last_t_us: int | None = None
        self._sent_us: int | None = None  # the latest stamp passed on
        self._suspects: list[_Suspect] = []
        self.watermark_ns: int | None = None  # the last T, mapped (watermark mode)
        self.last_t_received_ns = 0  # when the last T line came

    @property
    def timed(self) -> bool:
        """In watermark mode: a T line came on this timeline."""
        return self._last_t_us is not None

    @property
    def _board_watermark_us(self) -> int | None:
        return self._last_t_us if self.timed else self._sent_us

    def take(self, raw: bytes, line: BoardLine, received_ns: int) -> list[SourceItem]:
        """What a line received at received_ns gives now."""
        if isinstance(line, Hello):
            log.info("%s: the board said hello; its clock is mapped afresh", self.source)
            return self.end(received_ns)
        why = self._impossible(line, received_ns)
        if why is not None:
            return self._suspect(_Suspect(raw, line, received_ns), why)
        self._suspects.clear()
        self._clock.observe(line.t_us, received_ns)
        if isinstance(line, BoardTime):
            return self._time(line.t_us, received_ns)
        watermark_us = self._board_watermark_us
        if watermark_us is not None and line.t_us < watermark_us:
            log.warning(
                "%s: line %r is stamped before the board's watermark (%d): passed on late",
                self.source,
                raw,
                watermark_us,
            )
            return self._send([line], received_ns)
        self._pending.append(line)
        return []

    def release(self, received_ns: int) -> list[SourceItem]:
        """Every edge waiting goes on now, sorted by stamp: the end of a read without T
        lines (or with the board stalled)."""
        ready, self._pending = self._pending, []
        return self._send(sorted(ready, key=_stamp), received_ns)

    def end(self, received_ns: int) -> list[SourceItem]:
        """The timeline ends at received_ns: what waits goes on, and the buttons still
        down are lost track of, before the mapping of any later line (its margin)."""
        items = self.release(received_ns)
        items += [LostTrack(button, received_ns - MARGIN_NS) for button in sorted(self._held)]
        self._held.clear()
        self.restart()
        return items

    def _time(self, t_us: int, received_ns: int) -> list[SourceItem]:
        ready = sorted((e for e in self._pending if e.t_us < t_us), key=_stamp)
        self._pending = [e for e in self._pending if e.t_us >= t_us]
        *times, t_ns = self._clock.map([*(e.t_us for e in ready), t_us], received_ns)
        self._last_t_us = t_us
        self.last_t_received_ns = received_ns
        self.watermark_ns = t_ns if self.watermark_ns is None else max(self.watermark_ns, t_ns)
        return self._edges(ready, times)

    def _send(self, edges: list[BoardEdge], received_ns: int) -> list[SourceItem]:
        items = self._edges(edges, self._clock.map([e.t_us for e in edges], received_ns))
        if edges:
            self._sent_us = max(self._sent_us or 0, *(e.t_us for e in edges))
        return items

    def _edges(self, edges: list[BoardEdge], times: list[int]) -> list[SourceItem]:
        items: list[SourceItem] = []
        for edge, t_ns in zip(edges, times, strict=True):
            if edge.down:
                self._held.add(edge.button)
            else:
                self._held.discard(edge.button)
            items.append(Edge(edge.button, t_ns, edge.down))
        return items

    def _impossible(self, line: BoardEdge | BoardTime, received_ns: int) -> str | None:
        """Why the line's stamp cannot be true, or None."""
        ahead_ns = self._clock.ahead_ns(line.t_us, received_ns)
        if ahead_ns > PLAUSIBLE_NS:
            return f"{ahead_ns / 1e9:.3g} s ahead of the board's clock"
        if isinstance(line, BoardTime) and self.timed:
            last = self._last_t_us
            return None if last is None or line.t_us >= last else f"T went back from {last}"
        # A first T may come after a line it does not cover, but not long after.
        watermark_us = self._board_watermark_us
        if watermark_us is not None and line.t_us < watermark_us - PLAUSIBLE_US:
            behind_s = (watermark_us - line.t_us) / 1e6
            return f"{behind_s:.3g} s before the board's watermark ({watermark_us})"
        return None

    def _suspect(self, suspect: _Suspect, why: str) -> list[SourceItem]:
        self.impossible += 1
        log.warning("%s: ignored line %r: impossible time: %s", self.source, suspect.raw, why)
        run = self._suspects
        if run and abs(run[-1].offset_ns - suspect.offset_ns) > PLAUSIBLE_NS:
            run.clear()
        run.append(suspect)
        if len(run) < JUMP_LINES:
            return []
        log.warning("%s: %d lines agree on another time: %s", self.source, len(run), JUMPED)
        self.jumps += 1
        items = self.end(suspect.received_ns)
        for line in run:
            items += self.take(line.raw, line.line, line.received_ns)
        return items
