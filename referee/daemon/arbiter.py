"""Raw edges in, decided button presses out, in event time.

docs/design.md, "Event time". Like the rules engine it reads no clock: the main loop passes
the sources' watermark in (the time up to which every edge has been read), so tests can
replay any interleaving of edges and reads exactly, and a stall can delay a decision
but never change one.

- A press's time is its first edge. Edges within `debounce` after a change of level
  are bounce; when the window ends (the watermark passes it) the level the button was
  left at is what counts, so a tap shorter than the window still ends in a release.
- Decisions go out in time order, each once the watermark has passed it: a press once
  it has passed the press plus the tie window, so that every press that ties with it
  is known, and whatever came first has been read whatever order it was read in.
- UNDO: released before `end_hold` it is an undo at its release; held that long it is
  END (the end of the game) at the moment the hold completes. Let go after
  `replay_hold` but before `end_hold`, it is REPLAY, no input of the rules.
- VALID pressed while UNDO is held down (pressed before it, not yet ended) is HINT, no
  input of the rules, at VALID's press (again while UNDO is held: HINT again); that hold
  of UNDO then decides nothing more. Pressed that way, VALID was a verdict that UNDO's
  own release took back at once: no one meant it. It is told from the edges as they are
  read: the box reads one source, whose edges come in time order but for a few
  milliseconds between its lines (inputs/gpio.py), and a judge holds UNDO far longer
  than that before VALID.
- A button down longer than `stuck` is stuck: it is ignored and reported until it is
  released; a button already down when the box starts is stuck from the start.
- A source that loses track of a button (a board unplugged or restarted) makes up its
  release: the button is up again, and that release decides nothing (no UNDO).
"""

import heapq
import logging
from dataclasses import dataclass, field
from typing import Protocol

from referee.buttons import END, HINT, PLAYER_BUTTONS, REPLAY, UNDO
from referee.inputs.edges import Edge
from referee.units import NS_PER_S

log = logging.getLogger(__name__)

HINT_WITH = "VALID"  # pressed while UNDO is held: HINT


class Timing(Protocol):
    """What the arbiter needs of the settings' [buttons] timing (config.ButtonTiming)."""

    @property
    def debounce_ns(self) -> int: ...

    @property
    def stuck_ns(self) -> int: ...

    @property
    def end_hold_ns(self) -> int: ...

    @property
    def replay_hold_ns(self) -> int: ...


@dataclass(frozen=True, order=True)
class Decision:
    """A decided press: P1..P8, VALID, INVALID, SUPER, UNDO (a short press), END, REPLAY or
    HINT."""

    t_ns: int
    button: str


@dataclass
class _Button:
    down: bool = False  # the debounced level
    raw_down: bool = False  # the level the latest edge left it at
    raw_ns: int = 0
    quiet_until: int = 0  # edges before this are bounce
    since_ns: int = 0  # when the debounced level last changed
    stuck: bool = False
    spent: bool = False  # this hold of UNDO decided already: END, or a hint
    hinted: bool = False  # a hint: VALID again while it is held asks again
    bounces: int = 0
    presses: int = 0


@dataclass
class Arbiter:
    timing: Timing
    _buttons: dict[str, _Button] = field(default_factory=dict)
    _pending: list[Decision] = field(default_factory=list)  # a heap, by time

    def held_at_start(self, button: str, now_ns: int) -> None:
        """The button was already down when the box started: stuck until released."""
        b = self._buttons.setdefault(button, _Button())
        b.down = b.raw_down = b.stuck = True
        b.since_ns = b.raw_ns = now_ns
        log.warning("%s is held down at start: ignored until it is released", button)

    def take(self, edge: Edge) -> None:
        b = self._buttons.setdefault(edge.button, _Button())
        if b.raw_down != b.down and edge.t_ns >= b.quiet_until:
            # That change happened before this edge, whether or not the watermark has
            # passed the window's end yet.
            self._settle(edge.button, b)
        b.raw_down, b.raw_ns = edge.down, edge.t_ns
        if edge.t_ns < b.quiet_until:
            b.bounces += 1
        elif edge.down != b.down:
            self._change(edge.button, b, edge.t_ns)

    def lose_track(self, button: str, t_ns: int) -> None:
        """The source made up the button's release: it is up, and nothing is decided."""
        b = self._buttons.get(button)
        if b is None or not (b.down or b.raw_down):
            return
        if b.stuck:
            log.info("%s is no longer stuck: its source lost track of it", button)
        b.down = b.raw_down = b.stuck = b.spent = b.hinted = False
        b.since_ns = b.raw_ns = t_ns
        b.quiet_until = t_ns

    def advance(self, watermark_ns: int, tie_ns: int) -> list[Decision]:
        """Every decision the watermark has passed, in time order."""
        for name, b in self._buttons.items():
            if b.raw_down != b.down and watermark_ns >= b.quiet_until:
                self._settle(name, b)
            if b.down and not b.stuck:
                end_ns = b.since_ns + self.timing.end_hold_ns
                if name == UNDO and not b.spent and watermark_ns >= end_ns:
                    b.spent = True
                    heapq.heappush(self._pending, Decision(end_ns, END))
                if watermark_ns >= b.since_ns + self.timing.stuck_ns:
                    b.stuck = True
                    held_s = self.timing.stuck_ns / NS_PER_S
                    log.warning("%s held down for over %.0f s: stuck, ignored", name, held_s)
        out: list[Decision] = []
        while self._pending and _due(self._pending[0], tie_ns) <= watermark_ns:
            out.append(heapq.heappop(self._pending))
        return out

    def horizon(self, watermark_ns: int) -> int:
        """The time up to which the game may be decided: the watermark, or just before the
        first decision still waiting, so that no timer fires ahead of an earlier input."""
        if self._pending:
            return min(watermark_ns, self._pending[0].t_ns)
        return watermark_ns

    def press_due_ns(self, tie_ns: int) -> int | None:
        """The event time the watermark must pass for the first press waiting to go."""
        return _due(self._pending[0], tie_ns) if self._pending else None

    def next_due_ns(self, tie_ns: int) -> int | None:
        """The event time the watermark must pass for `advance` to have something to do."""
        times = [t for t in (self.press_due_ns(tie_ns),) if t is not None]
        for name, b in self._buttons.items():
            if b.raw_down != b.down:
                times.append(b.quiet_until)
            if b.down and not b.stuck:
                times.append(b.since_ns + self.timing.stuck_ns)
                if name == UNDO and not b.spent:
                    times.append(b.since_ns + self.timing.end_hold_ns)
        return min(times, default=None)

    @property
    def stuck(self) -> tuple[str, ...]:
        return tuple(name for name, b in self._buttons.items() if b.stuck)

    def level(self, button: str) -> tuple[bool, int]:
        """The button's debounced level (down?) and since when."""
        b = self._buttons.get(button, _Button())
        return b.down, b.since_ns

    def counts(self, button: str) -> tuple[int, int]:
        """(presses, bounces) seen on a button: what check-buttons shows."""
        b = self._buttons.get(button, _Button())
        return b.presses, b.bounces

    def _undo_held(self, t_ns: int) -> bool:
        """UNDO is held at t_ns, pressed before it, and this hold has decided nothing yet
        but hints (not stuck, not at its END, which the watermark may not have passed)."""
        u = self._buttons.get(UNDO)
        return (
            u is not None
            and u.down
            and not u.stuck
            and (u.hinted or not u.spent)
            and u.since_ns < t_ns < u.since_ns + self.timing.end_hold_ns
        )

    def _settle(self, name: str, b: _Button) -> None:
        """A debounce window ended with the button left at the other level: it changed with
        the window's last edge, which was no bounce then. That is only known at the
        window's end, so a decision it makes is taken then, to keep decisions in order."""
        b.bounces -= 1
        self._change(name, b, b.raw_ns, decided_ns=b.quiet_until)

    def _change(self, name: str, b: _Button, t_ns: int, decided_ns: int | None = None) -> None:
        held_since = b.since_ns
        b.down = not b.down
        b.since_ns = t_ns
        b.quiet_until = t_ns + self.timing.debounce_ns
        decision = Decision(t_ns if decided_ns is None else decided_ns, name)
        if b.down:
            b.presses += 1
            if name == HINT_WITH and self._undo_held(t_ns):
                undo = self._buttons[UNDO]
                undo.spent = undo.hinted = True
                decision = Decision(decision.t_ns, HINT)
            if name != UNDO:
                heapq.heappush(self._pending, decision)
            return
        if b.stuck:
            b.stuck = False
            log.info("%s released: no longer stuck", name)
        elif name == UNDO and not b.spent:
            held_ns = t_ns - held_since
            replay = self.timing.replay_hold_ns
            if held_ns >= self.timing.end_hold_ns:
                # Held to the end, though the watermark only passed it with the release (a
                # stall): END when the hold completed, as if it had been seen then.
                decision = Decision(held_since + self.timing.end_hold_ns, END)
            elif replay and held_ns >= replay:
                decision = Decision(decision.t_ns, REPLAY)
            heapq.heappush(self._pending, decision)
        b.spent = b.hinted = False


def _due(decision: Decision, tie_ns: int) -> int:
    """When the watermark has passed far enough to release the decision: a buzzer's press
    waits out the tie window, so that it is released with every press that ties with it."""
    return decision.t_ns + (tie_ns if decision.button in PLAYER_BUTTONS else 0)
