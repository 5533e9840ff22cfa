"""Who pressed first, under load and stalls: the box's event-time referee against a naive one.

    .venv/bin/python bench/fairness.py [--pairs 160] [--seed 1] [--only CONDITION]
                                       [--source gpio|serial] [--mic off|on|off,on]
                                       [--phones 0|10|0,10]

Pairs of buzzer presses go through the whole box (bench/box.py): another process plays the
kernel and writes the two edge events into the fake line request, stamped `gap` apart on
CLOCK_MONOTONIC, or plays the button board on a pseudo-terminal (D lines stamped `gap`
apart on its clock, T lines as docs/protocol.md says), and the real App (its GPIO or
serial reader, main loop, arbiter, engine and ledger on the disk) decides; the answer is
read from the engine's state, and an UNDO pressed the same way takes the call back for
the next pair. For every pair, on each source:

- gaps 0.05, 0.1, 0.2, 0.5, 1 and 5 ms, in random order, `--pairs` of each in every
  condition and both delivery orders;
- delivered in order (the earlier press queued first), or in reverse: the later press
  first, the earlier one u later (u uniform in 0 to 0.9 ms, within the kernel's bound
  the watermark trusts; for gaps above that the earlier GPIO edge is late past the
  bound, a broken promise the box must catch as late data; the board's lines may come
  in any order up to its next T, which waits for them);
- conditions: `draw` (the main loop draws a new 1280x720 frame as often as its pacing
  lets it, bench/box.py's `render`), `hog` (the same, with a busy process on every core),
  `gil` (the same, and a thread of the box holds the GIL for 10 ms to 2 s between the two
  deliveries) and `sigstop` (the same, and the box's process is stopped for 10 ms to 2 s
  between them);
  stalls are mostly short: 10, 30, 100 and 300 ms, and one pair in ten 1 or 2 s;
- with `--mic on` (or `off,on`: both, the same pairs), the box listening (bench/box.py:
  the real capture thread and ring on a fake 48 kHz card, and every call's clip written);
- with `--phones 10` (or `0,10`: none, then 10, the same pairs), phones following the
  page (issue 19): as bench/latency.py has them (bench/web.py's `following`), the page's
  server runs as on the box, `referee web` in its own process on the run's store, and
  that many event streams are read by another process, bench/phones.py; how many state
  events each received is printed after the run (the phones were live).

The naive referee, read from the same run, crowns the press the reader received first.
Answers: right, "too close to call" (co-callers: the honest answer within the tie window,
the larger of tie_ms and the input's 0.1 ms resolution) and wrong. `late`: presses that
came after later ones were decided (decided again in their place, or applied late).
`decide ms`: from the first press's stamp to the loop's step that decided it, p50 / p99,
pairs delivered in order without a stall, while drawing on every pass (bench/latency.py
measures it against its target, with the App as it is).

Verdict: every pair at 0.2 ms or more named right, every pair at 0.05 or 0.1 ms right or
too close to call, in every condition and both orders; never a wrong one. With phones and
without: the summary and the verdict are given for each number of phones.
"""

import argparse
import logging
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

from box import BUZZERS, MS, Box, start_game, tap, wait_until
from machine import Hogs, header, load, percentile, store_dir
from web import following, phone_counts

from referee.inputs.gpio import IRQ_BOUND_NS
from referee.rules import Phase

GAPS_MS = (0.05, 0.1, 0.2, 0.5, 1.0, 5.0)
CONDITIONS = ("draw", "hog", "gil", "sigstop")
SOURCES = ("gpio", "serial")
MICS = ("off", "on")
ORDERS = ("in order", "reversed")
STALLS_MS = (10, 30, 100, 300, 10, 30, 100, 300, 1000, 2000)
ANSWER_S = 10.0  # a pair the engine has not answered by then is lost
START_NS = 2 * MS  # the first edge's stamp, after the plan reaches the driver


@dataclass
class Pair:
    source: str
    condition: str
    order: str
    gap_ns: int
    early: str
    late: str
    stall_ms: int = 0
    mic: str = "off"
    phones: int = 0  # phones following the page
    done: threading.Event = field(default_factory=threading.Event)
    callers: tuple[int, ...] = ()
    late_inputs: int = 0
    first_read: str = ""  # the naive referee's caller
    decided_ns: int | None = None  # when the loop decided the first press
    t_early: int = 0

    @property
    def answer(self) -> str:
        early, late = int(self.early[1:]), int(self.late[1:])
        if self.callers == (early,):
            return "right"
        if sorted(self.callers) == sorted((early, late)):
            return "tie"
        if self.callers == (late,):
            return "wrong"
        return "lost"


class Fairness:
    def __init__(
        self, box: Box, source: str, mic: str, phones: int, args: argparse.Namespace
    ) -> None:
        self.box = box
        self.source = source
        self.mic = mic
        self.phones = phones
        self.app = box.app
        self.args = args
        self.rng = random.Random(args.seed)
        self.current: Pair | None = None
        self.pairs: list[Pair] = []
        box.after_step = self.after_step

    def after_step(self, now_ns: int) -> None:
        """In the main loop, after each step: has the engine decided the pair?"""
        pair = self.current
        if pair is None or pair.done.is_set():
            return
        call = self.app.session.state.pending
        if call is None:
            return
        if pair.decided_ns is None:
            pair.decided_ns = time.monotonic_ns()
        if len(call.presses) == 2:
            pair.callers = call.callers
            pair.done.set()

    def drive(self) -> None:
        """On the driver thread: the game's start, then every pair, one after the other."""
        start_game(self.box)
        conditions = [c for c in CONDITIONS if self.args.only in (None, c)]
        for condition in conditions:
            cells = [(o, g) for o in ORDERS for g in GAPS_MS for _ in range(self.args.pairs)]
            self.rng.shuffle(cells)
            with Hogs() if condition == "hog" else _Nothing():
                for n, (order, gap_ms) in enumerate(cells):
                    stall = STALLS_MS[n % len(STALLS_MS)] if condition in ("gil", "sigstop") else 0
                    early, late = self.rng.sample(BUZZERS, 2)
                    gap = round(gap_ms * MS)
                    pair = Pair(self.source, condition, order, gap, early, late, stall,
                                self.mic, self.phones)  # fmt: skip
                    self.play(pair)

    def play(self, pair: Pair) -> None:
        box = self.box
        late_before, reads_before = self.app.session.late, len(box.reads)
        t_early, t_late = START_NS, START_NS + pair.gap_ns
        early = ["edge", pair.early, t_early, True]
        late = ["edge", pair.late, t_late, True]
        if pair.order == "in order":
            first, second = [t_early, *early], [t_late + self._u(), *late]
        else:
            first, second = [t_late, *late], [t_late + self._u(), *early]
        actions = [first, second]
        if pair.stall_ms:
            stall = "stop" if pair.condition == "sigstop" else "gil"
            actions.append([first[0] + 1, stall, pair.stall_ms])
            second[0] = first[0] + 2  # the second edge comes during the stall
        self.current = pair
        t0 = box.plan(actions)
        pair.t_early = t0 + t_early
        if not pair.done.wait(ANSWER_S + pair.stall_ms / 1000):
            print(f"lost: {pair}", file=sys.stderr)
        self.current = None
        pair.late_inputs = self.app.session.late - late_before
        firsts = [b for _, b in box.reads[reads_before:] if b in (pair.early, pair.late)]
        pair.first_read = firsts[0] if firsts else ""
        self.pairs.append(pair)
        self.take_back(pair)

    def _u(self) -> int:
        return round(self.rng.uniform(0, 0.9 * IRQ_BOUND_NS))

    def take_back(self, pair: Pair) -> None:
        """Release both buzzers and UNDO until the game is open again: the engine itself
        takes the call back (a tie's co-caller is an undo step of its own)."""
        releases = [[0, "edge", b, 0, False] for b in (pair.early, pair.late)]
        self.box.plan(releases)
        while self.app.session.state.phase is not Phase.OPEN:
            self.undo()

    def undo(self) -> None:
        before = self.app.session.state
        self.box.plan(tap("UNDO"))
        wait_until(lambda: self.app.session.state is not before, "the undo")


def table(pairs: list[Pair], tie_ns: int, phones: list[int]) -> dict[int, bool]:
    """Print the table; for each number of phones, whether all its cells are as they must be."""
    print(
        f"{'source':>6} | {'mic':>3} | {'phones':>6} | {'condition':>9} | {'order':>8} | "
        f"{'gap ms':>6} | {'pairs':>5} | "
        f"{'right':>5} | {'too close':>9} | {'wrong':>5} | {'lost':>4} | {'naive right':>11} | "
        f"{'late':>4} | {'decide ms p50/p99':>17}"
    )
    print("-" * 136)
    met = dict.fromkeys(phones, True)
    for source, mic, n, condition, order, gap_ms in product(
        SOURCES, MICS, phones, CONDITIONS, ORDERS, GAPS_MS
    ):
        key = (source, mic, n, condition, order, round(gap_ms * MS))
        cell = [
            p for p in pairs if (p.source, p.mic, p.phones, p.condition, p.order, p.gap_ns) == key
        ]
        if cell:
            met[n] &= row(cell, key, tie_ns)
    return met


def row(cell: list[Pair], key: tuple[str, str, int, str, str, int], tie_ns: int) -> bool:
    """Print one cell of the table; True when it is as it must be."""
    source, mic, phones, condition, order, gap_ns = key
    answers = [p.answer for p in cell]
    right, tie = answers.count("right"), answers.count("tie")
    wrong, lost = answers.count("wrong"), answers.count("lost")
    naive = sum(p.first_read == p.early for p in cell)
    decide = [
        (p.decided_ns - p.t_early) / MS
        for p in cell
        if p.decided_ns and order == "in order" and not p.stall_ms
    ]
    spread = f"{percentile(decide, 50):.2f} / {percentile(decide, 99):.2f}" if decide else "-"
    print(
        f"{source:>6} | {mic:>3} | {phones:>6} | {condition:>9} | {order:>8} | "
        f"{gap_ns / MS:>6g} | {len(cell):>5} | "
        f"{right:>5} | {tie:>9} | {wrong:>5} | {lost:>4} | {naive:>11} | "
        f"{sum(p.late_inputs for p in cell):>4} | {spread:>17}"
    )
    return right == len(cell) if gap_ns > tie_ns else wrong + lost == 0


def summary(pairs: list[Pair], tie_ns: int, phones: int, met: bool) -> None:
    """The verdict on the pairs played with `phones` phones following the page."""
    beyond = [p for p in pairs if p.gap_ns > tie_ns]
    within = [p for p in pairs if p.gap_ns <= tie_ns]
    right = sum(p.answer == "right" for p in beyond)
    wrong = sum(p.answer == "wrong" for p in pairs)
    honest = sum(p.answer in ("right", "tie") for p in within)
    late = sum(p.late_inputs for p in pairs)
    naive = sum(p.first_read == p.early for p in pairs)
    print(
        f"fairness, {phones} phones: {right} of {len(beyond)} pairs beyond the"
        f" {tie_ns / MS:g} ms tie window right; {wrong} wrong in all; within it {honest} of"
        f" {len(within)} right or too close to call; {late} presses came late and were"
        f" caught; the naive referee was right {naive} times of {len(pairs)}:"
        f" {'met' if met else 'NOT met'}"
    )


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=160, help="pairs a gap, order, condition")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=CONDITIONS, help="one condition")
    parser.add_argument("--source", choices=SOURCES, help="one input source")
    parser.add_argument("--mic", default="off", help="the box deaf or listening: off, on or off,on")
    parser.add_argument(
        "--phones",
        type=phone_counts,
        default="0",
        help="phones following the page, streaming: 0, 10 or 0,10",
    )
    args = parser.parse_args()
    mics = args.mic.split(",")
    if not mics or not set(mics) <= set(MICS):
        parser.error(f"--mic: {args.mic}: off, on or off,on")
    # The session logs every late input; the table counts them instead.
    logging.getLogger("referee").setLevel(logging.ERROR)
    header("bench/fairness.py: pairs of presses through the whole box, in order and reversed")
    pairs: list[Pair] = []
    tie_ns = 0
    sources = [s for s in SOURCES if args.source in (None, s)]
    for source, mic, phones in product(sources, mics, args.phones):
        with store_dir() as tmp:
            box = Box(Path(tmp), load="render", source=source, mic=mic == "on")
            bench = Fairness(box, source, mic, phones, args)
            app = box.app
            tie_ns = app.session.settings.tie_ns
            promise = (
                f"the kernel's bound the watermark trusts {IRQ_BOUND_NS / MS:g} ms"
                if source == "gpio"
                else "its watermark: its T lines"
            )
            print(
                f"input {app.inputs.name}, microphone {mic}, {phones} phones: resolution "
                f"{app.inputs.resolution_ns / 1e3:g} us; "
                f"tie window {tie_ns / MS:g} ms (the larger of tie_ms and the resolution, "
                f"inclusive); {promise}"
            )
            # The page served once the App has made its store, before the loop runs.
            with following(app.store.path, phones) as received:
                started = time.monotonic()
                box.run(bench.drive)
                elapsed = time.monotonic() - started
                arrivals = received()
            print(
                f"  main loop: {box.steps / elapsed:.0f} passes a second, each rendering "
                f"1280x720; {len(bench.pairs)} pairs in {elapsed:.0f} s"
            )
            if arrivals:
                received_each = ", ".join(str(len(a)) for a in arrivals)
                print(f"  state events each phone received: {received_each}")
            pairs += bench.pairs
    print()
    met = table(pairs, tie_ns, args.phones)
    print()
    print(f"at the end: {load()}")
    for phones, ok in met.items():
        summary([p for p in pairs if p.phones == phones], tie_ns, phones, ok)
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
