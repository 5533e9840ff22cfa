"""One serial board's lines in event time: ordered, mapped to the daemon's clock, checked.

docs/protocol.md says what the board promises; this is what the referee makes of it, one
timeline at a time (from the port's opening, or the board's HELLO, to the next):

- **Watermark mode.** Once the board has sent a `T` on this timeline, its `D` and `U`
  lines wait for a T to pass them and then go on sorted by stamp, so a press stamped
  earlier wins however late its line came. The last T, mapped with the edges it covers
  (board_clock.py), is the board's watermark.
- **Without T lines** (older firmware) the lines go on at the end of each read, sorted by
  stamp; the source falls back on the keyboard's rule for its watermark (serial_board.py).
- **The clock's lines.** The mapping learns only from the lines that speak for the
  board's clock: its T lines, its promise; its D and U lines only while no T has come on
  the timeline. Once one has, no number of D and U lines can move the mapping.
- **Late lines.** A D or U stamped before the board's watermark (its last T; without T
  lines, the latest stamp passed on) broke the board's promise: it is mapped with the
  offset of the edges stamped around it (board_clock.py) and passed on at once, never
  dropped. The session decides what late data does.
- **Impossible stamps** are never inputs: counted, logged (once a burst, burst_log.py) and
  kept from the mapping, so they never poison the lines after them. A D or U line stamped
  ahead of the board's clock by more than its leeway (a second while the clock is
  learned, then CLOCK_MARGIN_NS), judged when it comes and again when its T covers it;
  one more than PLAUSIBLE_NS before the board's watermark; a T further ahead than the
  floor may still fall (board_clock.py); a T that goes back by more than T_BACK_US.
- **A clock that really restarted.** JUMP_LINES of the clock's lines in a row that are
  impossible, agree with each other within CLOCK_MARGIN_NS and span JUMP_SPAN_NS are the
  board's clock that restarted unheard (a board on a UART, whose T lines start again from
  small numbers), or one that a bad start mapped wrong: the timeline starts afresh with
  them and with the edges that came meanwhile (`jumps` counts it). No one write of lines
  spans that long, and once T lines came, D and U lines never count towards it.
- **A clock learned late.** If those lines are T lines that went on from the last and lie
  ahead of the mapping, the board's clock did not restart (it cannot run ahead of real
  time): the mapping was learned from lines that all came late, held by a link or the
  board. The clock is learned again from them and the timeline goes on; the edges judged
  ahead meanwhile, kept while the run builds up, are taken by it.
- **Made-up releases.** When a timeline ends with buttons down (a HELLO, an unplug, a
  jump), their ups will never come: each is a `LostTrack`, which decides nothing.
"""

import logging
from dataclasses import dataclass

from referee.inputs import SourceItem
from referee.inputs.board_clock import CLOCK_MARGIN_NS, MARGIN_NS, PLAUSIBLE_NS, BoardClock
from referee.inputs.board_lines import BoardEdge, BoardLine, BoardTime, Hello
from referee.inputs.burst_log import BurstLog

from .edges import Edge, LostTrack

log = logging.getLogger(__name__)

PLAUSIBLE_US = PLAUSIBLE_NS // 1000
# A T that goes back by less than this says nothing new, and is passed over: it may follow
# one that was ahead by up to the clock's margin. Further back, it cannot be true.
T_BACK_US = 2 * CLOCK_MARGIN_NS // 1000
# This many impossible lines of the clock in a row, agreeing with each other over this
# long (two of the firmware's idle T lines apart), are a clock that restarted.
JUMP_LINES = 3
JUMP_SPAN_NS = 150_000_000
# Edges that may wait for a T (a board keeping its promise sends a T within 2 ms of any
# edge: a few dozen at most); and impossible lines kept while a run of the clock's lines
# may yet show them true, as many: a link that held seconds of lines brings them at once.
MAX_WAITING = 1024
MAX_DOUBTS = MAX_WAITING
JUMPED = "button board's clock jumped: its times are mapped afresh"


@dataclass(frozen=True, slots=True)
class _Doubt:
    """An impossible line, kept while the board's clock may have restarted."""

    raw: bytes
    line: BoardEdge | BoardTime
    received_ns: int
    clock: bool  # one of the clock's lines: it counts towards a restart
    # A D or U ahead of a clock its T lines set: a clock learned late may show it true.
    ahead: bool = False

    @property
    def offset_ns(self) -> int:
        return self.received_ns - 1000 * self.line.t_us


@dataclass(frozen=True, slots=True)
class _Waiting:
    """A D or U line waiting for a T to pass it."""

    raw: bytes
    edge: BoardEdge
    received_ns: int


def _stamp(waiting: _Waiting) -> int:
    return waiting.edge.t_us


class BoardStream:
    """The lines of one board, as the source's items; `source` names it in statuses."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.impossible = 0  # lines with impossible stamps, since the start
        self.jumps = 0  # times its clock jumped, and the mapping started afresh
        self._clock = BoardClock()
        self._held: set[str] = set()  # down, as far as the edges passed on say
        self._log = BurstLog(log, source, "lines with impossible times")
        self._replaying = False  # a restart's lines, counted and logged when they came
        self._relearning = False  # the lines in doubt, taken by a clock learned again
        self.restart()

    def restart(self) -> None:
        """A fresh timeline: the port opened, the board said hello, its clock jumped."""
        self._clock.reset()
        self._pending: list[_Waiting] = []
        self._last_t_us: int | None = None
        self._sent_us: int | None = None  # the latest stamp passed on
        self._doubts: list[_Doubt] = []
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
        self.tick(received_ns)
        if isinstance(line, Hello):
            log.info("%s: the board said hello; its clock is mapped afresh", self.source)
            return self.end(received_ns)
        if isinstance(line, BoardTime):
            return self._take_time(raw, line, received_ns)
        return self._take_edge(raw, line, received_ns)

    def tick(self, now_ns: int) -> None:
        """Time passes: a burst of impossible lines that is over is summed up in the log."""
        self._log.tick(now_ns)

    def release(self, received_ns: int) -> list[SourceItem]:
        """Every edge waiting goes on now, sorted by stamp: the end of a read without T
        lines (or with the board stalled)."""
        ready, self._pending = self._pending, []
        return self._send(self._believed(sorted(ready, key=_stamp), received_ns))

    def end(self, received_ns: int) -> list[SourceItem]:
        """The timeline ends at received_ns: what waits goes on, and the buttons still
        down are lost track of, before the mapping of any later line (its margin)."""
        items = self.release(received_ns)
        items += [LostTrack(button, received_ns - MARGIN_NS) for button in sorted(self._held)]
        self._held.clear()
        self.restart()
        return items

    def _take_time(self, raw: bytes, line: BoardTime, received_ns: int) -> list[SourceItem]:
        why = self._impossible_time(line.t_us, received_ns)
        if why is not None:
            return self._doubt(_Doubt(raw, line, received_ns, clock=True), why)
        if self._last_t_us is not None and line.t_us < self._last_t_us:
            return []  # back by less than the margin: it promises nothing new
        # The run of the clock's lines is broken, but the edges ahead stay: a link that
        # holds lines in bursts brings fresh ones (ahead of a clock learned late) between
        # held ones that still look right, until the prompt lines show the clock.
        self._doubts = [d for d in self._doubts if d.ahead]
        if not self.timed:
            self._clock.learn(received_ns)  # the board's promise starts
        self._clock.observe(line.t_us, received_ns)
        return self._time(line.t_us, received_ns)

    def _take_edge(self, raw: bytes, edge: BoardEdge, received_ns: int) -> list[SourceItem]:
        why = ahead = self._ahead(edge.t_us, received_ns, self._edge_leeway_ns(received_ns))
        if why is None:
            why = self._behind(edge.t_us)
        if why is None and len(self._pending) >= MAX_WAITING:
            why = f"{MAX_WAITING} lines already wait for a T line"
        if why is not None:
            timed = self.timed
            doubt = _Doubt(raw, edge, received_ns, clock=not timed, ahead=timed and bool(ahead))
            return self._doubt(doubt, why)
        if not self.timed:  # without T lines, the edges are all the clock there is
            self._doubts.clear()
            self._clock.observe(edge.t_us, received_ns)
        watermark_us = self._board_watermark_us
        if watermark_us is not None and edge.t_us < watermark_us:
            log.warning(
                "%s: line %r is stamped before the board's watermark (%d): passed on late",
                self.source,
                raw,
                watermark_us,
            )
            return self._send([edge])
        self._pending.append(_Waiting(raw, edge, received_ns))
        return []

    def _time(self, t_us: int, received_ns: int) -> list[SourceItem]:
        covered = sorted((w for w in self._pending if w.edge.t_us < t_us), key=_stamp)
        self._pending = [w for w in self._pending if w.edge.t_us >= t_us]
        ready = self._believed(covered, received_ns)
        *times, t_ns = self._clock.map([*(e.t_us for e in ready), t_us])
        self._last_t_us = t_us
        self.last_t_received_ns = received_ns
        self.watermark_ns = t_ns if self.watermark_ns is None else max(self.watermark_ns, t_ns)
        return self._edges(ready, times)

    def _believed(self, waiting: list[_Waiting], now_ns: int) -> list[BoardEdge]:
        """The edges of waiting still believable now: one that came while the clock was
        learned, up to a second ahead, is judged again by the clock learned since."""
        edges = []
        for each in waiting:
            why = self._ahead(each.edge.t_us, each.received_ns, self._edge_leeway_ns(now_ns))
            if why is None:
                edges.append(each.edge)
            else:
                self._count(each.raw, why, now_ns)
        return edges

    def _send(self, edges: list[BoardEdge]) -> list[SourceItem]:
        items = self._edges(edges, self._clock.map([e.t_us for e in edges]))
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

    # Judging stamps.

    def _edge_leeway_ns(self, now_ns: int) -> int:
        # The edges in doubt for a clock learned again are judged by the prompt T lines
        # that showed it, with the margin: an honest one was late, no faster than they.
        # With the learning's second, wild edges kept since long ago would pass.
        if self._clock.learning(now_ns) and not self._relearning:
            return PLAUSIBLE_NS
        return CLOCK_MARGIN_NS

    def _ahead(self, t_us: int, received_ns: int, leeway_ns: int) -> str | None:
        ahead_ns = self._clock.ahead_ns(t_us, received_ns)
        if ahead_ns > leeway_ns:
            return f"{ahead_ns / 1e9:.3g} s ahead of the board's clock"
        return None

    def _impossible_time(self, t_us: int, received_ns: int) -> str | None:
        """Why a T line's stamp cannot be true, or None."""
        why = self._ahead(t_us, received_ns, self._clock.leeway_ns(received_ns))
        if why is not None:
            return why
        last = self._last_t_us
        if last is None:
            # A first T may come after a line it does not cover, but not long after.
            return self._behind(t_us)
        if t_us < last - T_BACK_US:
            return f"T went back from {last}"
        return None

    def _behind(self, t_us: int) -> str | None:
        watermark_us = self._board_watermark_us
        # A line ahead when it came, in doubt until the clock was learned again, was not
        # behind then: only the watermark moved on while it waited (a link that held
        # lines again meanwhile).
        if self._relearning:
            return None
        if watermark_us is not None and t_us < watermark_us - PLAUSIBLE_US:
            behind_s = (watermark_us - t_us) / 1e6
            return f"{behind_s:.3g} s before the board's watermark ({watermark_us})"
        return None

    # Impossible lines, and the clock that restarted.

    def _count(self, raw: bytes, why: str, now_ns: int) -> None:
        if not self._replaying:
            self.impossible += 1
            self._log.warn(now_ns, f"ignored line {raw!r}: impossible time: {why}")

    def _doubt(self, doubt: _Doubt, why: str) -> list[SourceItem]:
        self._count(doubt.raw, why, doubt.received_ns)
        doubts = self._doubts
        if doubt.clock:
            run = [d for d in doubts if d.clock]
            if run and abs(run[0].offset_ns - doubt.offset_ns) > CLOCK_MARGIN_NS:
                # Another time: the run starts again, but the edges ahead stay. The lines a
                # link held come at once, each fresher than the last, so their offsets
                # disagree until the prompt lines after them: the edges among them are
                # kept for the clock those agree on.
                self._doubts = doubts = [d for d in doubts if d.ahead]
                run = []
            doubts.append(doubt)
            run.append(doubt)
            span_ns = run[-1].received_ns - run[0].received_ns
            if len(run) >= JUMP_LINES and span_ns >= JUMP_SPAN_NS:
                return self._jump()
        elif doubt.ahead or doubts:  # or an edge while the clock is in doubt: the
            doubts.append(doubt)  # restarted board's, maybe
        if len(doubts) > MAX_DOUBTS:
            # The oldest edge goes first (the clock's lines are the evidence): found from
            # the front, where a flood's edges are, not by a pass over all MAX_DOUBTS.
            del doubts[next((i for i, d in enumerate(doubts) if not d.clock), 0)]
        return []

    def _jump(self) -> list[SourceItem]:
        doubts = self._doubts
        run = [d for d in doubts if d.clock]
        if self._last_t_us is not None and run[0].line.t_us > self._last_t_us:
            # T lines that went on from the last and agree ahead of the mapping: the
            # board's clock is no faster than real time, so the mapping was learned from
            # lines that all came late. The timeline goes on, learned again from them.
            log.warning(
                "%s: %d lines agree on an earlier clock: it was learned from late lines,"
                " and is learned again",
                self.source,
                len(doubts),
            )
            self._clock.relearn(run[-1].line.t_us, run[-1].received_ns)
            self._relearning = True
            try:
                return self._replay([d for d in doubts if d.clock or d.ahead], [])
            finally:
                self._relearning = False
        log.warning("%s: %d lines agree on another time: %s", self.source, len(doubts), JUMPED)
        self.jumps += 1
        # The new clock takes the lines that came with its run, not the old clock's.
        since = [d for d in doubts if d.received_ns >= run[0].received_ns]
        return self._replay(since, self.end(doubts[-1].received_ns))

    def _replay(self, doubts: list[_Doubt], items: list[SourceItem]) -> list[SourceItem]:
        """The lines in doubt, taken again by the clock as it is now, after items. The
        edges among them in the order of their stamps, in the places edges held: those
        passed on late may tie at the next burst's first edge (board_clock.py), and come
        in the board's order then (a link brings them in any)."""
        slots = [i for i, d in enumerate(doubts) if not d.clock]
        edges = sorted((doubts[i] for i in slots), key=lambda d: d.line.t_us)
        doubts = doubts[:]
        for i, doubt in zip(slots, edges, strict=True):
            doubts[i] = doubt
        self._doubts = []
        self._replaying = True
        try:
            for doubt in doubts:
                items += self.take(doubt.raw, doubt.line, doubt.received_ns)
        finally:
            self._replaying = False
        return items
