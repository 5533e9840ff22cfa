"""How soon a press is decided, heard and shown; the countdown's timing; the daemon at rest.

    .venv/bin/python bench/latency.py [--presses 1000] [--rounds 3] [--idle-s 30]
                                      [--only loop|countdown|daemons] [--disks fast,slow]
                                      [--mic off,on] [--phones 0,10] [--camera off|on]

1. Through the whole box (bench/box.py): another process writes each press into the fake
   line request, stamped as the kernel stamps it; the real App decides; UNDO takes the
   call back for the next. One press at a time, at a random moment of a loop at rest:
     read      from the edge's stamp to the loop reading it from the request: the
               driver's write and the loop's wake-up from its sleep;
     woke      from the edge's stamp to the start of the loop's step that decides it (the
               floor is the kernel's bound, IRQ_BOUND_NS, plus the tie window; the loop
               waits for it awake, app.PRESS_AWAKE_NS);
     decision  from the edge's stamp to the moment the arbiter lets it go to the engine
               (the watermark has passed it and its tie window); printed below the
               table, the box's own part of it: from the later of the read and the
               floor to the decision;
     ledger    to the moment the input was on the disk: its transaction committed,
               fsync and all (what a power cut cannot take any more);
     beep      to the moment the beeper's pin starts the caller's note (gpiozero's
               MockFactory: the PWM frequency set, as on a Pi); one not started within a
               second was dropped, and counts as infinitely late;
     frame     to the moment the frame showing the caller was flipped (SDL's dummy
               driver, 1280x720);
     stolen    the share of the CPUs' time a virtual machine's host took while the
               load ran (/proc/stat's steal): a CPU taken then wakes nobody on time.
   Loads: `idle` (the App as it is: it sleeps until the press, then until its watermark
   passes the tie window, decides, draws), `render` (the loop draws a new frame as often as
   its pacing lets it, bench/box.py: the main thread as busy as frames make it). Disks:
   `fast`, the store on this machine's disk; `slow`, the same presses (the same seed) with
   the store on a slow SD card: tests/slow_fsync.c, an LD_PRELOAD shim, makes every sync of
   the store's files wait 5 to 50 ms after the real one, and 300 ms once in 50 (seeded),
   inside SQLite's commit, in whichever thread commits; the process runs again with it
   loaded. Targets, idle on the fast disk: decision p99 within the tie window + 2 ms; beep
   p99 within 20 ms. Every row, against the slow card's target (issue 16): beep and frame
   p99 within 20 ms and max within 100 ms (the `verdict` column); the slow rows must meet
   it. Microphones (`--mic`): each row runs with the box deaf (`off`) and listening (`on`:
   bench/box.py's fake card at 48 kHz, the real capture thread and ring, and every call's
   clip cut by the clips' cutter, a process beside the box's, and written beside the
   store), the same presses in both; the targets hold for both. Phones (`--phones`, 0 by
   default; `10` or `0,10`): each row runs once a number, the same presses in each.
   With `--camera on` the loop's rows run with a camera watching: a folder camera shown a
   new table every 0.5 s, each read by the camera's own process (bench/box.py's
   CameraFeed); a run with it off beside one with it on says what the camera costs.
   With N phones, the page's server runs as on the box, `referee
   web` in its own process on the row's store (bench/web.py's `serving`), and N phones
   follow the game on it: N event streams (GET /api/events), read by another process
   (bench/phones.py), not by a thread of the benchmark's, whose process holds the App: a
   reading thread would take the App's GIL, which phones on Wi-Fi do not. Each press's
   call and its undo are two new states for every phone (the server sends a stream the
   latest state: two read at once are one event); the `events` column is the fewest state
   events one phone received in the row (each phone's below the table): the phones were
   live. The targets hold with and without them. And the phones' own (issue 19):
     phone     from the edge's stamp to the press on a phone: for every press and every
               phone, when the first state event with the press in it arrived there (on
               CLOCK_MONOTONIC, as the stamps: when bench/phones.py's read that completed
               it returned); with the press in it: its latest input (the timers' `at_ms`)
               the press or a later one. Not merely the first event after the decision:
               the server sends a stream the latest state it read, and reads the store
               once the ledger has committed, so an older state (the last undo's, read
               before the press was on the disk) can still arrive after the decision; and
               a call and its undo read at once are one event, with the press in it (the
               bench's UNDO comes some 40 ms after the edge, a table's seconds after; how
               many did is printed below the table). A phone that never received one
               counts as infinitely late.
   Target, every row with phones (not idle-hp): edge->every phone p95 within 250 ms, over
   all the row's presses x phones. On a virtual machine whose idle CPUs halt at once
   (cpuidle-haltpoll with its polling off, as here) and where it may, the `idle` load runs
   again with them polling 200 us first (`idle-hp`), as a bare-metal CPU wakes: how much
   of the tail is the host's waking of a halted CPU. It is printed for comparison (on the
   first of the disks, mics and phones); the verdict is the `idle` row's.
2. The super round's countdown: SUPER, a join and SUPER again (the flip), pressed the same
   way, `--rounds` times. The pips should start at the flip's stamp + 7, 8 and 9 s and the
   time-up tone at + 10 s (on the beeper's pin), and the screen show 3, 2, 1 and 0 s left
   then (the frame flipped). Target: every one within 5 ms of its moment. Once per
   `--mic`: deaf, then listening (the capture, its ring and the clips), as the loop's rows.
3. Idle CPU and peak memory of the real daemon, `python -m referee run`, in a subprocess
   per mode, all at once (terminal; serial; window, a desktop's window on Xvfb, where the
   loop waits on the X server's connection; polled, the window under SDL's dummy driver,
   which like SDL's Wayland driver gives no descriptor, so the keys are looked for every
   10 ms): see `daemons`. The serial board sends its T line every 100 ms, as the Pico's
   firmware does. GPIO's idle CPU is measured on the kernel rig (bench/idle_gpio.py).
"""

import argparse
import bisect
import contextlib
import logging
import math
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tty
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from box import BUZZERS, LOADS, MS, ROOT, Box, CameraFeed, start_game, tap, wait_until
from machine import (
    cpu_ticks,
    halt_polling,
    header,
    load,
    percentile,
    stolen_percent,
    store_dir,
    wake_overshoot_ms,
)
from web import Arrival, following, phone_counts

from referee.config import default_config
from referee.daemon.arbiter import Decision
from referee.inputs.gpio import IRQ_BOUND_NS
from referee.outputs import captions
from referee.outputs.sound import PIP, PLAYER_HZ, TIME_UP
from referee.rules import NS_PER_S, Call, Phase, Press, Super, Verdict
from referee.store.store import Store, Stored
from referee.view import View
from tests import slow_fsync

ANSWER_S = 10.0
DISKS = ("fast", "slow")
# The slow card's target: press to beep and to frame.
FEEDBACK_P99_MS, FEEDBACK_MAX_MS = 20.0, 100.0
PHONE_P95_MS = 250.0  # a press on every phone following the page (issue 19)
SAME_MS = 0.001  # the page's game times are ms in a float: the same input within 1 us
HALT_POLL_NS = 200_000  # cpuidle-haltpoll's own default
HALF_S = NS_PER_S // 2
SHIM_ENV = ("LD_PRELOAD", "SLOW_FSYNC_DIR", "SLOW_FSYNC_SPREAD", "SLOW_FSYNC_LOG")
PACE_S = 0.1


# --- 1. edge to decision, to beep, to frame ----------------------------------------------


@dataclass
class Probe:
    seat: int
    t_edge: int = 0
    read: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    woke: int = 0
    decided: int = 0
    saved: int = 0
    framed: int = 0
    beeped: int | None = 0  # None: never heard
    pressed_ns: int = 0  # the press's game time, as the ledger and the page have it

    def calls(self, call: Call | None) -> bool:
        return call is not None and call.callers[0] == self.seat

    def shown(self) -> bool:
        return bool(self.decided and self.framed)


class Latency:
    def __init__(self, box: Box, presses: int, rng: random.Random) -> None:
        self.box = box
        self.app = box.app
        self.presses = presses
        self.rng = rng
        self.current: Probe | None = None
        self.probes: list[Probe] = []
        self.driver = ""
        show, play = box.window.show, self.app.session.play

        def playing(decision: Decision) -> list:
            probe = self.current
            if probe and not probe.decided and decision.button == f"P{probe.seat}":
                probe.decided = time.monotonic_ns()  # the arbiter let it go: decided
                probe.woke = self.box.step_now  # when the loop's deciding step began
            return play(decision)

        self.app.session.play = playing  # type: ignore[method-assign]

        def shown(view: View) -> bool:
            drawn = show(view)
            probe = self.current
            call = view.state.pending
            if (
                probe
                and probe.decided
                and not probe.framed
                and call
                and call.callers[0] == probe.seat
            ):
                probe.framed = time.monotonic_ns()
            return drawn

        box.window.show = shown  # type: ignore[method-assign]

    def drive(self) -> None:
        start_game(self.box)
        self.driver = self.box.driver_priority
        for _ in range(self.presses):
            button = self.rng.choice(BUZZERS)
            probe = Probe(int(button[1:]))
            notes = len(self.box.beeper_notes)
            reads = len(self.box.reads)
            self.current = probe
            # The press a moment from now, at a random point of the loop's pass, stamped
            # as it is written: as the kernel's interrupt does, before queueing it.
            at = round(self.rng.uniform(1 * MS, 3 * MS))
            self.box.plan([[at, "edge", button, None, True]])
            wait_until(probe.shown, "the call")
            call = self.app.session.state.calls[-1]
            probe.pressed_ns = call.first_ns
            probe.t_edge = self.app.session.mono_ns(call.first_ns)
            probe.read = next(t for t, b in self.box.reads[reads:] if b == button)
            probe.beeped = self.note(PLAYER_HZ[probe.seat - 1], notes)
            self.current = None
            self.probes.append(probe)
            self.box.plan(tap(button)[1:] + tap("UNDO", 2 * MS))
            wait_until(lambda: self.app.session.state.phase is Phase.OPEN, "the undo")
            # The next press at a random moment of a loop that has drawn the undo and
            # sleeps: under the `render` load it is drawing, or rests between frames.
            time.sleep(self.rng.uniform(0.03, 0.08))
        wait_until(self.all_saved, "the presses on the disk")
        for probe in self.probes:
            probe.saved = self.saved_at(probe)

    def pressed(self, probe: Probe) -> Stored:
        """The probe's press as the ledger keeps it."""
        return Stored(self.app.session.game_ns(probe.t_edge), f"press {probe.seat}")

    def saved_at(self, probe: Probe) -> int:
        pressed = self.pressed(probe)
        return next((t for t, stored in self.box.saved if stored == pressed), 0)

    def all_saved(self) -> bool:
        on_disk = {stored for _, stored in self.box.saved}
        return all(self.pressed(p) in on_disk for p in self.probes)

    def note(self, hz: int, since: int) -> int | None:
        """When the beeper started a note of hz, the first after the `since`-th note; None
        when none came in a second (the speaker drops a sound 250 ms late: lost)."""

        def played() -> int | None:
            return next((t for t, f in self.box.beeper_notes[since:] if f == hz), None)

        with contextlib.suppress(RuntimeError):
            wait_until(played, f"a {hz} Hz note", timeout_s=1.0)
        return played()


def measure(load_name: str, disk: str, mic: str, phones: int, args: argparse.Namespace) -> dict:
    slow_log = Path(os.environ.get("SLOW_FSYNC_LOG", "/nonexistent"))
    synced = len(slow_fsync.waits_ms(slow_log))
    parent = os.environ["SLOW_FSYNC_DIR"] if disk == "slow" else args.store_dir
    # The phones' processes without the slow disk's shim: the page's server writes only its
    # PIN, as it starts, and the syncs counted are the ledger's.
    env = {k: v for k, v in os.environ.items() if k not in SHIM_ENV}
    with store_dir(parent) as tmp:
        box = Box(Path(tmp), load=load_name, mic=mic == "on", camera=args.camera == "on")
        bench = Latency(box, args.presses, random.Random(args.seed))
        late = box.app.session.late
        tie_ns = box.app.session.settings.tie_ns
        # The page served once the App has made its store, before the loop runs.
        with following(box.app.store.path, phones, env) as received:
            started, ticks = time.monotonic(), cpu_ticks()
            box.run(bench.drive)
            elapsed, stolen = time.monotonic() - started, stolen_percent(ticks, cpu_ticks())
            arrivals = received()
        # Every probe's press on every phone, and whether it came with its undo.
        reach = [reached(p, phone) for p in bench.probes for phone in arrivals]
        return {
            "load": load_name,
            "disk": disk,
            "mic": mic,
            "phones": phones,
            "events": [len(a) for a in arrivals],  # the state events each phone received
            "phone": [ms for ms, _ in reach],
            "with_undo": sum(undone for _, undone in reach),
            "waits": slow_fsync.waits_ms(slow_log)[synced:],
            "n": len(bench.probes),
            "read": [(p.read - p.t_edge) / MS for p in bench.probes],
            "woke": [(p.woke - p.t_edge) / MS for p in bench.probes],
            "decision": [(p.decided - p.t_edge) / MS for p in bench.probes],
            # What the box adds once the edge is read and may be decided: from the later
            # of its read and the floor (the kernel's bound and the tie window).
            "own": [
                (p.decided - max(p.read, p.t_edge + IRQ_BOUND_NS + tie_ns)) / MS
                for p in bench.probes
            ],
            "ledger": [(p.saved - p.t_edge) / MS for p in bench.probes],
            # A beep never heard is as late as can be.
            "beep": [(p.beeped - p.t_edge) / MS if p.beeped else math.inf for p in bench.probes],
            "frame": [(p.framed - p.t_edge) / MS for p in bench.probes],
            "late": box.app.session.late - late,
            "passes": box.steps / elapsed,
            "stolen": stolen,
            "tie": tie_ns / MS,
            "driver": bench.driver,
            "priority": box.priority,
        }


def reached(probe: Probe, phone: list[Arrival]) -> tuple[float, bool]:
    """ms from the probe's edge to the first state event on the phone (its arrivals, in
    order) that has the press in it: its latest input the press or one after it (older
    states may still arrive after the decision). And whether that event already had the
    press's undo in it, not the call alone. Infinitely late when none came."""
    first = bisect.bisect_left(phone, (probe.decided,))  # none has it before its decision
    pressed_ms = probe.pressed_ns / MS
    for arrived, at_ms in phone[first:]:
        if at_ms is not None and at_ms >= pressed_ms - SAME_MS:
            return (arrived - probe.t_edge) / MS, at_ms > pressed_ms + SAME_MS
    return math.inf, False


def spread(values: list[float], n: int = 3) -> str:
    """p50 / p99 / max, or the first n of them."""
    if not values:
        return "-"
    stats = (percentile(values, 50), percentile(values, 99), max(values))[:n]
    return " / ".join(f"{x:.2f}" for x in stats)


def feedback_met(row: dict) -> bool:
    """The slow card's target: press to beep and to frame, p99 and max."""
    return all(
        percentile(row[what], 99) <= FEEDBACK_P99_MS and max(row[what]) <= FEEDBACK_MAX_MS
        for what in ("beep", "frame")
    )


def named(row: dict) -> str:
    """The row, as the lines below the table name it."""
    return f"{row['load']}, {row['disk']} disk, mic {row['mic']}, phones {row['phones']}"


def fewest(row: dict) -> str:
    """The fewest state events a phone received, or '-' with no phones."""
    return str(min(row["events"])) if row["events"] else "-"


def loop_table(rows: list[dict]) -> None:
    head = (
        f"{'load':>7} | {'disk':>4} | {'mic':>3} | {'phones':>6} | {'presses':>7} | "
        f"{'ms from the edge to: read':>25} | "
        f"{'loop woke':>20} | {'decision':>20} | {'ledger':>21} | {'beep':>20} | "
        f"{'frame':>20} | {'late':>4} | {'passes/s':>8} | {'stolen':>6} | {'events':>6} | "
        f"{'phone':>23} | {'verdict':>7}"
    )
    print(head)
    print(
        f"{'':>7} | {'':>4} | {'':>3} | {'':>6} | {'':>7} | {'p50 / p99 / max':>25} | "
        + " | ".join([f"{'':>20}"] * 2 + [f"{'':>21}"] + [f"{'':>20}"] * 2)
        + f" | {'':>4} | {'':>8} | {'':>6} | {'fewest':>6} | {'':>23} | {'':>7}"
    )
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['load']:>7} | {r['disk']:>4} | {r['mic']:>3} | {r['phones']:>6} | {r['n']:>7} | "
            f"{spread(r['read']):>25} | "
            f"{spread(r['woke']):>20} | {spread(r['decision']):>20} | {spread(r['ledger']):>21} | "
            f"{spread(r['beep']):>20} | {spread(r['frame']):>20} | {r['late']:>4} | "
            f"{r['passes']:>8.0f} | {r['stolen']:>5.2f}% | {fewest(r):>6} | "
            f"{spread(r['phone']):>23} | {'met' if feedback_met(r) else 'NOT met':>7}"
        )


# --- 2. the countdown ---------------------------------------------------------------------


class Countdown:
    """Super rounds: when the pips and the end were heard and shown, against the flip."""

    def __init__(self, box: Box, rounds: int) -> None:
        self.box = box
        self.app = box.app
        self.rounds = rounds
        self.flips: list[int] = []
        self.frames: list[tuple[int, int]] = []  # (flipped at, whole seconds shown left)
        self.counted = False  # the last frame drawn showed a countdown
        show = box.window.show

        def shown(view: View) -> bool:
            drawn = show(view)
            left = captions.countdown_left_ns(view)
            counting = left is not None and view.state.phase is Phase.SUPER_COUNTDOWN
            if drawn and counting:
                shown_s = captions.shown_ns(left) / NS_PER_S
                if shown_s == int(shown_s):
                    self.frames.append((time.monotonic_ns(), int(shown_s)))
            elif drawn and self.frames and self.frames[-1][1] != 0 and self.counted:
                # The time-up decided before a frame showed 0: its own frame is the end.
                self.frames.append((time.monotonic_ns(), 0))
            self.counted = counting
            return drawn

        box.window.show = shown  # type: ignore[method-assign]

    def drive(self) -> None:
        start_game(self.box)
        self.driver = self.box.driver_priority
        for _ in range(self.rounds):
            # A hand's pace: a button pressed again within its debounce window is bounce.
            time.sleep(PACE_S)
            self.box.plan(tap("SUPER"))
            wait_until(lambda: self.app.session.state.phase is Phase.SUPER_JOIN, "the super round")
            self.box.plan(tap("P1"))
            wait_until(self.p1_joined, "P1's join")
            time.sleep(PACE_S)
            at = 2 * MS
            flip = self.box.plan(tap("SUPER", at)) + at
            self.flips.append(flip)
            wait_until(lambda: self.app.session.state.phase is Phase.SUPER_COUNTDOWN, "the flip")
            wait_until(
                lambda: self.app.session.state.phase is Phase.OPEN, "the time-up", timeout_s=15
            )

    def p1_joined(self) -> bool:
        sr = self.app.session.state.super_round
        return sr is not None and 1 in sr.participants

    def offsets(self) -> tuple[list[float], list[float]]:
        """ms from each moment (flip + 7, 8, 9, 10 s) to the sound and to the frame."""
        heard, seen = [], []
        for flip in self.flips:
            for k, hz in ((7, PIP), (8, PIP), (9, PIP), (10, TIME_UP)):
                moment = flip + k * NS_PER_S
                notes = [
                    t
                    for t, f in self.box.beeper_notes
                    if f == hz.notes[0][0] and abs(t - moment) < NS_PER_S // 2
                ]
                heard += [(notes[0] - moment) / MS] if notes else [float("inf")]
                frames = [
                    t
                    for t, left in self.frames
                    if left == 10 - k and abs(t - moment) < NS_PER_S // 2
                ]
                seen += [(frames[0] - moment) / MS] if frames else [float("inf")]
        return heard, seen


def countdown(args: argparse.Namespace, mic: str) -> bool:
    with store_dir(args.store_dir) as tmp:
        box = Box(Path(tmp), load="idle", mic=mic == "on")
        bench = Countdown(box, args.rounds)
        box.run(bench.drive)
    heard, seen = bench.offsets()
    worst = max(abs(x) for x in heard + seen)
    print(f"{len(bench.flips)} countdowns, mic {mic}; the flip's stamp + 7, 8, 9, 10 s, each round"
          " in turn:")  # fmt: skip
    print(f"  heard (beeper's pin), ms after the moment: {', '.join(f'{x:.2f}' for x in heard)}")
    print(f"  shown (frame flipped), ms after the moment: {', '.join(f'{x:.2f}' for x in seen)}")
    met = worst <= 5
    print(f"target every pip and end within 5 ms of its moment, mic {mic}: "
          f"{'met' if met else 'NOT met'} (worst {worst:.2f} ms)")  # fmt: skip
    return met


# --- 2. the daemon at rest -----------------------------------------------------------------

MODES = {
    "terminal": ["--input", "keyboard", "--display", "terminal"],
    "serial": ["--input", "serial:{board}", "--display", "none"],
    # A desktop's window (X11, on Xvfb): the loop waits on the X server's connection.
    "window": ["--input", "keyboard", "--display", "window"],
    # SDL's dummy driver, as Wayland's: no descriptor, so the loop looks for keys every 10 ms.
    "polled": ["--input", "keyboard", "--display", "window"],
}
# A call and its verdict, three times over, then the game open again with no timer: as
# keys (terminal) and as the board's buttons (serial).
PLAY = ["1", "v", "2", "x", "3", "v"]
KEY_BUTTONS = {"1": "P1", "2": "P2", "3": "P3", "v": "VALID", "x": "INVALID"}
TICK = os.sysconf("SC_CLK_TCK")


def played_game(path: Path) -> None:
    """A store holding a four-player game with some play, open and with no timer running."""
    settings = default_config().game
    s = 1_000_000_000
    inputs = [Press(p, p * s) for p in (1, 2, 3, 4)] + [Super(5 * s)]
    t = 10 * s
    for round_ in range(12):
        inputs += [Press(round_ % 4 + 1, t), Verdict(round_ % 3 != 2, t + 2 * s)]
        t += 5 * s
    with Store.open(path) as store:
        game = store.new_game(settings, lobby=True)
        for inp in inputs:
            store.append(game, inp)
        stored = store.latest_game()
        assert stored is not None
        state = stored.state()
        assert state.phase is Phase.OPEN and state.deadline is None, state


class Pty:
    """A pseudo-terminal whose output is read all the time (a full one would block the
    daemon) and kept for looking at."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.out = b""
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.out = (self.out + data)[-200_000:]

    def seen(self, text: str) -> bool:
        with self._lock:
            return text.encode() in self.out

    def write(self, text: str) -> bool:
        """False once the pseudo-terminal is closed."""
        try:
            os.write(self.master, text.encode())
        except OSError:
            return False
        return True

    def write_stamped(self, words: str, t0: int) -> bool:
        """A board's line with its microsecond clock (0 at t0) read as it is sent: lines
        stamped and sent under one lock, so that no T passes an edge not sent yet."""
        with self._lock:
            return self.write(f"{words} {(time.monotonic_ns() - t0) // 1000}\n")

    def close(self) -> None:
        for fd in (self.slave, self.master):
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def x_server() -> Iterator[str | None]:
    """A private X server (Xvfb) for the window mode, or None where there is none."""
    if shutil.which("Xvfb") is None:
        yield None
        return
    ready_r, ready_w = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(ready_w), "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
        pass_fds=(ready_w,), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(ready_w)
    try:
        with os.fdopen(ready_r) as ready:
            number = ready.readline().strip()  # written once it accepts clients
        if not number:
            raise RuntimeError("Xvfb did not start")
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


class Daemon:
    def __init__(self, mode: str, game: str, tmp: Path, display: str | None) -> None:
        self.mode, self.game = mode, game
        here = tmp / f"{mode}-{game}"
        here.mkdir()
        self.store = here / "referee.db"
        if game == "open":
            played_game(self.store)
        config = here / "referee.toml"
        config.write_text("")  # the defaults, whatever this machine's own settings say
        self.log = here / "stderr.log"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "NOTIFY_SOCKET", "REFEREE_CONFIG")
        }
        env.update(HOME=str(here), XDG_DATA_HOME=str(here), XDG_CONFIG_HOME=str(here))
        env.update(SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
        if mode == "window":
            assert display is not None
            env.update(DISPLAY=display)
            del env["SDL_VIDEODRIVER"]
        self.pty: Pty | None = None
        self.board: Pty | None = None
        args = list(MODES[mode])
        if mode == "serial":
            self.board = Pty()
            args[1] = args[1].format(board=os.ttyname(self.board.slave))
        command = [sys.executable, "-m", "referee", "run", *args]
        command += ["--config", str(config), "--store", str(self.store)]
        with self.log.open("wb") as log:
            if mode == "terminal":
                self.pty = Pty()
                self.proc = subprocess.Popen(
                    command, stdin=self.pty.slave, stdout=self.pty.slave, stderr=log, env=env,
                    start_new_session=True,
                )  # fmt: skip
            else:
                self.proc = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                    env=env, start_new_session=True,
                )  # fmt: skip
        self.cpu: tuple[float, float, int] | None = None

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.mode} daemon stopped:\n{self.log.read_text()}")
        if self.pty is not None:
            return self.pty.seen("PRESS YOUR BUZZER" if self.game == "lobby" else "FIND A SET")
        started = "display " in self.log.read_text()
        if self.board is not None:
            return started and self.board.seen("L UNDO")
        return started

    def play(self) -> None:
        """A few calls and verdicts, where the input can be driven from here."""
        t0 = time.monotonic_ns()
        if self.board is not None:
            self.board.write("HELLO referee-board 1\n")
            board = self.board

            def ticking() -> None:  # the board's watermark, every 100 ms, as the Pico's
                while board.write_stamped("T", t0):
                    time.sleep(0.1)

            threading.Thread(target=ticking, daemon=True).start()
        if self.game != "open" or self.mode not in ("terminal", "serial"):
            return
        for key in PLAY:
            if self.pty is not None:
                self.pty.write(key)
                time.sleep(0.3)
            elif self.board is not None:
                # The board's microsecond clock, sent as each edge happens.
                button = KEY_BUTTONS[key]
                self.board.write_stamped(f"D {button}", t0)
                time.sleep(0.15)
                self.board.write_stamped(f"U {button}", t0)
                time.sleep(0.15)

    def sample(self) -> tuple[float, float, int]:
        """(wall s, CPU s, context switches so far)."""
        stat = Path(f"/proc/{self.proc.pid}/stat").read_text()
        fields = stat.rpartition(")")[2].split()
        cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime: fields 14 and 15
        switches = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                for line in (task / "status").read_text().splitlines():
                    if line.startswith(("voluntary_ctxt", "nonvoluntary_ctxt")):
                        switches += int(line.split()[1])
            except OSError:
                pass  # a thread that ended meanwhile
        return time.monotonic(), cpu, switches

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def game_now(self) -> str:
        """The phase of its game and how many inputs the ledger holds, read from the store."""
        with Store.open_readonly(self.store) as store:
            game = store.latest_game()
        return "-" if game is None else f"{game.state().phase}, {len(game.inputs)} inputs"

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        for pty in (self.pty, self.board):
            if pty is not None:
                pty.close()
        return code


def daemons(idle_s: float) -> None:
    with store_dir() as tmp, x_server() as display:
        modes = [m for m in MODES if m != "window" or display is not None]
        if display is None:
            print("no Xvfb here: the window mode on X11 is not measured")
        games = ("lobby", "open")
        running = [Daemon(mode, game, Path(tmp), display) for mode in modes for game in games]
        try:
            deadline = time.monotonic() + 60
            waiting = list(running)
            while waiting:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"not ready in 60 s: {[d.mode for d in waiting]}")
                waiting = [d for d in waiting if not d.ready()]
                time.sleep(0.1)
            players = [threading.Thread(target=d.play) for d in running]
            for thread in players:
                thread.start()
            for thread in players:
                thread.join()
            time.sleep(3)  # the last frames and sounds of the play, then nothing
            print(f"idle window of {idle_s:g} s starts: {load()}")
            before = {id(d): d.sample() for d in running}
            _sleep_quietly(idle_s)
            after = {id(d): d.sample() for d in running}
            print(f"idle window ends: {load()}")
            print()
            print(
                f"{'mode':>8} | {'game':>5} | {'CPU % of a core':>15} | {'wakeups/s':>9} | "
                f"{'peak RSS MB':>11} | {'game at the end':>17}"
            )
            print("-" * 81)
            worst_cpu, worst_rss = {}, 0.0
            for d in running:
                (w0, c0, s0), (w1, c1, s1) = before[id(d)], after[id(d)]
                cpu = 100 * (c1 - c0) / (w1 - w0)
                rss = d.peak_rss_mb()
                worst_cpu[d.mode] = max(worst_cpu.get(d.mode, 0.0), cpu)
                worst_rss = max(worst_rss, rss)
                print(
                    f"{d.mode:>8} | {d.game:>5} | {cpu:>15.2f} | {(s1 - s0) / (w1 - w0):>9.1f} | "
                    f"{rss:>11.1f} | {d.game_now():>17}"
                )
        finally:
            codes = {f"{d.mode}-{d.game}": d.stop() for d in running}
        print(f"exit codes after SIGTERM: {codes}")
        print(f"CPU counted in ticks of 1/{TICK} s: {100 / TICK / idle_s:.3f} % per tick")
        print()
        for mode, cpu in worst_cpu.items():
            print(f"target idle CPU < 1 % of a core, {mode}: {'met' if cpu < 1 else 'NOT met'}")
        print(f"target peak RSS <= 80 MB: {'met' if worst_rss <= 80 else 'NOT met'}")


def _sleep_quietly(seconds: float) -> None:
    # One sleep: this process must not add wakeups of its own to the machine's.
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        select.select([], [], [], left)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=1000, help="presses under each load")
    parser.add_argument("--rounds", type=int, default=3, help="super rounds counted down")
    parser.add_argument("--idle-s", type=float, default=30, help="the daemons' idle window")
    parser.add_argument("--only", choices=("loop", "countdown", "daemons"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--store-dir", help="where the loop's ledger is written (default /var/tmp: a disk)"
    )
    parser.add_argument(
        "--disks", default=",".join(DISKS), help="the loop's disks: fast, slow or fast,slow"
    )
    parser.add_argument(
        "--mic", default="off,on", help="the loop listening or not: off, on or off,on"
    )
    parser.add_argument(
        "--camera",
        choices=("off", "on"),
        default="off",
        help="the loop's rows with a camera watching (bench/box.py's CameraFeed), or not",
    )
    parser.add_argument(
        "--phones",
        type=phone_counts,
        default="0",
        help="phones following the page, streaming: 0, 10 or 0,10",
    )
    args = parser.parse_args()
    disks = args.disks.split(",")
    if not set(disks) <= set(DISKS):
        parser.error(f"--disks: {args.disks}: fast, slow or both")
    mics = args.mic.split(",")
    if not mics or not set(mics) <= {"off", "on"}:
        parser.error(f"--mic: {args.mic}: off, on or off,on")
    phones = args.phones
    if "slow" in disks and args.only in (None, "loop") and "SLOW_FSYNC_DIR" not in os.environ:
        return again_on_a_slow_disk(args)
    logging.getLogger("referee").setLevel(logging.ERROR)  # late inputs: counted instead
    header("bench/latency.py: press to decision, beep and frame; the countdown; the daemon at rest")
    met = True
    if args.only in (None, "loop"):
        print()
        if args.camera == "on":
            every = f"{CameraFeed.FRAME_S:g} s"
            print(f"camera: a folder camera shown a new table of 12 cards every {every},")
            print("each read by the camera's process (2 a second at most)")
        if "slow" in disks:
            print(f"slow disk: every sync of the store's files waits {slow_fsync.MIN_MS} to "
                  f"{slow_fsync.MAX_MS} ms after the real one, {slow_fsync.STALL_MS} ms once in "
                  f"{slow_fsync.STALL_EVERY} (tests/slow_fsync.c, seeded)")  # fmt: skip
        rows = [
            measure(name, disk, mic, n, args)
            for name in LOADS
            for disk in disks
            for mic in mics
            for n in phones
        ]
        woke = {"": wake_overshoot_ms()}
        with halt_polling(HALT_POLL_NS) as replaced:
            if replaced is not None:  # a virtual machine: the same, its CPUs woken as bare metal
                idle_hp = measure("idle", disks[0], mics[0], phones[0], args)
                rows.append(idle_hp | {"load": "idle-hp"})
                woke[f" (idle CPUs polling {HALT_POLL_NS // 1000} us)"] = wake_overshoot_ms()
        tie = rows[0]["tie"]
        print(f"tie window {tie:g} ms; at the end of the loop runs: {load()}")
        print(f"the driver (the kernel's part) ran at {rows[0]['driver']}; {rows[0]['priority']}")
        for how, late in woke.items():
            print(f"the machine's own wake-up{how}: {len(late)} select() sleeps of 1.1 ms "
                  f"woke late by p50 / p99 / max {spread(late)} ms")  # fmt: skip
        if replaced is not None:
            print(f"idle-hp: idle again, with this virtual machine's idle CPUs polling "
                  f"{HALT_POLL_NS // 1000} us before they halt (cpuidle-haltpoll's "
                  f"guest_halt_poll_ns, {replaced} otherwise), as a Pi's CPU wakes at once; "
                  f"for comparison, not a verdict")  # fmt: skip
        loop_table(rows)
        for r in rows:
            own = spread(r["own"])
            print(f"{named(r)}: the box's own part, from the later of the read and the floor "
                  f"to the decision: p50 / p99 / max {own} ms")  # fmt: skip
        for r in rows:
            if r["waits"]:
                print(f"{named(r)}: {len(r['waits'])} syncs slowed, by p50 / p99 / max "
                      f"{spread(r['waits'])} ms")  # fmt: skip
        for r in rows:
            if r["events"]:
                print(f"{named(r)}: state events each phone received (the game's start, "
                      f"then a call and an undo a press, {2 * r['n']}, where none came as one): "
                      f"{', '.join(map(str, r['events']))}")  # fmt: skip
        for r in rows:
            if r["phone"]:
                print(f"{named(r)}: the presses on the phones ({r['n']} x {r['phones']}): "
                      f"{r['with_undo']} came in one event with their undo (the store read "
                      f"after both), {r['phone'].count(math.inf)} never came")  # fmt: skip
        for idle in (r for r in rows if r["disk"] == "fast" and r["load"] == "idle"):
            for what, target in (("decision", tie + 2), ("beep", 20.0)):
                p99 = percentile(idle[what], 99)
                met &= p99 <= target
                print(f"target edge->{what} p99 <= {target:g} ms, {named(idle)}: "
                      f"{'met' if p99 <= target else 'NOT met'} ({p99:.2f} ms)")  # fmt: skip
        for r in rows:
            if r["disk"] == "slow" and r["load"] in LOADS:
                ok = feedback_met(r)
                met &= ok
                beep, frame = (f"{percentile(r[w], 99):.2f} / {max(r[w]):.2f}"
                               for w in ("beep", "frame"))  # fmt: skip
                print(f"target edge->beep and edge->frame p99 <= {FEEDBACK_P99_MS:g} ms, max <= "
                      f"{FEEDBACK_MAX_MS:g} ms, {named(r)}: {'met' if ok else 'NOT met'} "
                      f"(p99 / max: beep {beep}, frame {frame} ms)")  # fmt: skip
        for r in rows:
            if r["phone"] and r["load"] in LOADS:
                p95 = percentile(r["phone"], 95)
                met &= p95 <= PHONE_P95_MS
                print(f"target edge->every phone p95 <= {PHONE_P95_MS:g} ms, {named(r)}: "
                      f"{'met' if p95 <= PHONE_P95_MS else 'NOT met'} ({p95:.2f} ms)")  # fmt: skip
    if args.only in (None, "countdown"):
        for mic in mics:
            print()
            met &= countdown(args, mic)
    if args.only in (None, "daemons"):
        print()
        daemons(args.idle_s)
    return 0 if met else 1


def again_on_a_slow_disk(args: argparse.Namespace) -> int:
    """Run this benchmark again in a process with the slow disk's shim loaded, its slow
    stores in a directory of their own (the fast disk's rows are measured there too)."""
    shim = slow_fsync.build()
    if shim is None:
        print("bench/latency.py: the slow disk needs a C compiler (cc) for tests/slow_fsync.c")
        return 2
    slow = Path(tempfile.mkdtemp(prefix="referee-slow-disk-", dir=args.store_dir or "/var/tmp"))
    env = dict(os.environ, **slow_fsync.spread(shim, slow, seed=args.seed, log=slow / "syncs"))
    try:
        return subprocess.run([sys.executable, str(ROOT / "bench" / "latency.py"), *sys.argv[1:]],
                              env=env, check=False).returncode  # fmt: skip
    finally:
        shutil.rmtree(slow)


if __name__ == "__main__":
    sys.exit(main())
