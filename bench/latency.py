"""How soon a press is decided and shown, and what `referee run` costs when nothing happens.

    .venv/bin/python bench/latency.py [--presses 1000] [--idle-s 30] [--only loop|daemons]

1. Edge to decision and edge to frame, through the App's own main loop (App.run, in the
   main thread) on the box's GPIO path without a Pi (bench/gpio_sim.py). A driver thread
   presses one free buzzer at a time, as lgpio's callback thread would: the edge is
   stamped at the press, and its callback runs after lgpio's hold (uniform 0.5 to 1 ms:
   lgpio hands an edge on once it is 0.5 ms old, polling every 0.5 ms) and whatever wait
   for the GIL the main loop causes. "Decision": the main loop's clock
   (time.monotonic_ns) right after the step whose engine state has the call, its ledger
   write (on the disk) included. "Frame": right after the first frame showing the caller
   is flipped (Window.show, SDL's dummy driver, 1280x720). The game is then put back to
   the open state (eight seats, no call) for the next press. Under three drawing loads:
     idle    the App as it is: it sleeps until the press, then until the settle window
             ends, decides, draws;
     render  the loop never sleeps and renders the whole View on every pass;
     flip    the same, every pass flipped too: CPython's GIL hand-over breaks down and
             other threads can wait seconds (bench/gpio_sim.py says why). The real loop
             never does this; the row is there to show what it would cost. It stops after
             --flip-s seconds whatever the count.
   Target: decision p99 within the settle window + 2 ms.
2. Idle CPU and peak memory of the real daemon, `python -m referee run` (what the
   `referee` script runs), in a subprocess per mode, all at once: in the lobby of a new
   store, and in an open game with no timer running (a store holding a played game that
   the daemon resumes; where the input can be driven from here, a few more calls are
   played live first). CPU: utime + stime from /proc/PID/stat over --idle-s seconds, as
   % of one core; wakeups: the context switches of all its threads (/proc/PID/task/*/
   status) a second; peak RSS: VmHWM from /proc/PID/status at the end. Target: under 1 %
   of a core idle, peak RSS at most 80 MB. The modes:
     terminal  --input keyboard --display terminal, on a pseudo-terminal
     serial    --input serial:PTY --display none, a pseudo-terminal speaking the board's
               protocol (tests/fake_board.py's way)
     window    --input keyboard --display window, SDL's dummy driver: pygame's
               event.wait polls in 1 ms naps (about 1 % of a core here)
     gpio      --input gpio --display window: the Pi daemon's shape, on gpiozero's
               MockFactory (GPIOZERO_PIN_FACTORY=mock), the loop sleeping on the inbox;
               nobody can press a mock pin from outside, so its open game is only resumed
"""

import argparse
import contextlib
import logging
import os
import random
import select
import signal
import subprocess
import sys
import threading
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path

from gpio_sim import LOADS, MS, Buttons, Rig, header, load, percentile, sleep_until, store_dir

from referee.config import default_config
from referee.rules import Call, Phase, Press, Super, Verdict
from referee.store import Store
from referee.view import View

BUZZERS = [f"P{n}" for n in range(1, 9)]
LGPIO_HOLD_NS = (500_000, 1_000_000)  # before the callback: 0.5 ms old, then the next poll


# --- 1. edge to decision, edge to frame --------------------------------------------------


@dataclass
class Probe:
    seat: int
    t_edge: int
    done: threading.Event = field(default_factory=threading.Event)
    abandon: bool = False
    decided: int = 0
    framed: int = 0


class Latency:
    def __init__(self, rig: Rig, presses: int, budget_s: float, rng: random.Random) -> None:
        self.rig = rig
        self.app = rig.app
        self.presses = presses
        self.budget_s = budget_s
        self.rng = rng
        self.open = rig.open_game()
        self.current: Probe | None = None
        self.probes: list[Probe] = []
        self.lost = 0
        rig.after_step = self.after_step
        rig.after_frame = self.after_frame

    @staticmethod
    def _called(call: Call | None, probe: Probe) -> bool:
        return call is not None and call.callers[0] == probe.seat

    def after_step(self, now_ns: int) -> None:
        probe = self.current
        if probe is None or probe.done.is_set():
            return
        if probe.abandon:
            self.app.session.state = self.open
            probe.done.set()
        elif not probe.decided and self._called(self.app.session.state.pending, probe):
            probe.decided = time.monotonic_ns()  # the engine's state has the call

    def after_frame(self, view: View) -> None:
        probe = self.current
        if probe is None or not probe.decided or probe.framed or probe.done.is_set():
            return
        if self._called(view.state.pending, probe):
            probe.framed = time.monotonic_ns()  # the frame showing the caller, flipped
            self.app.session.state = self.open  # the next press is a fresh call
            probe.done.set()

    def drive(self) -> None:
        buttons = Buttons(self.app, BUZZERS, self.rng)
        end = time.monotonic() + self.budget_s
        while len(self.probes) + self.lost < self.presses and time.monotonic() < end:
            [button] = buttons.pick(1)
            # The press happens a moment from now, at a random point of the loop's pass.
            t_edge = time.monotonic_ns() + round(self.rng.uniform(1 * MS, 3 * MS))
            probe = Probe(int(button[1:]), t_edge)
            self.current = probe
            sleep_until(t_edge + self.rng.randint(*LGPIO_HOLD_NS))
            buttons.down(button, t_edge)
            if probe.done.wait(10):
                self.probes.append(probe)
            else:
                probe.abandon = True
                probe.done.wait()
                self.lost += 1
            self.current = None


def measure(load_name: str, args: argparse.Namespace) -> dict:
    presses, flip_s, seed = args.presses, args.flip_s, args.seed
    with store_dir(args.store_dir) as tmp:
        rig = Rig(Path(tmp), load=load_name)
        budget = flip_s if load_name == "flip" else 600.0
        bench = Latency(rig, presses, budget, random.Random(seed))
        late = rig.app.arbiter.late
        started = time.monotonic()
        rig.run(bench.drive)
        elapsed = time.monotonic() - started
        return {
            "load": load_name,
            "n": len(bench.probes),
            "lost": bench.lost,
            "decision": [(p.decided - p.t_edge) / MS for p in bench.probes],
            "frame": [(p.framed - p.t_edge) / MS for p in bench.probes],
            "late": rig.app.arbiter.late - late,
            "passes": rig.steps / elapsed,
            "frame_ms": percentile([f / MS for f in rig.frame_ns], 50),
            "write": [w / MS for w in rig.write_ns],
            "settle": rig.app.timing.settle_ns / MS,
        }


def spread(values: list[float], n: int = 3) -> str:
    """p50 / p99 / max, or the first n of them."""
    if not values:
        return "-"
    stats = (percentile(values, 50), percentile(values, 99), max(values))[:n]
    return " / ".join(f"{x:.2f}" for x in stats)


def loop_table(rows: list[dict]) -> None:
    print(
        f"{'load':>6} | {'presses':>7} | {'edge->decision p50 / p99 / max ms':>33} | "
        f"{'edge->frame p50 / p99 / max ms':>30} | {'late':>4} | {'lost':>4} | "
        f"{'passes/s':>8} | {'frame ms':>8} | {'ledger write p50 / p99 ms':>25}"
    )
    print("-" * 154)
    for r in rows:
        print(
            f"{r['load']:>6} | {r['n']:>7} | {spread(r['decision']):>33} | "
            f"{spread(r['frame']):>30} | {r['late']:>4} | {r['lost']:>4} | "
            f"{r['passes']:>8.0f} | {r['frame_ms']:>8.2f} | {spread(r['write'], 2):>25}"
        )


# --- 2. the daemon at rest -----------------------------------------------------------------

MODES = {
    "terminal": ["--input", "keyboard", "--display", "terminal"],
    "serial": ["--input", "serial:{board}", "--display", "none"],
    "window": ["--input", "keyboard", "--display", "window"],
    "gpio": ["--input", "gpio", "--display", "window"],
}
# A call and its verdict, three times over, then the game open again with no timer: as
# keys (terminal) and as the board's buttons (serial).
PLAY = ["1", "v", "2", "x", "3", "v"]
KEY_BUTTONS = {"1": "P1", "2": "P2", "3": "P3", "v": "VALID", "x": "INVALID"}
TICK = os.sysconf("SC_CLK_TCK")


def played_game(path: Path) -> None:
    """A store holding a four-player game with some play, open and with no timer running."""
    settings = default_config().rules
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

    def write(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> None:
        for fd in (self.slave, self.master):
            with contextlib.suppress(OSError):
                os.close(fd)


class Daemon:
    def __init__(self, mode: str, game: str, tmp: Path) -> None:
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
        if mode == "gpio":
            env.update(GPIOZERO_PIN_FACTORY="mock", GPIOZERO_MOCK_PIN_CLASS="mockpwmpin")
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
        if self.board is not None:
            self.board.write("HELLO referee-board 1\n")
        if self.game != "open" or self.mode not in ("terminal", "serial"):
            return
        t0 = time.monotonic_ns()
        for key in PLAY:
            if self.pty is not None:
                self.pty.write(key)
                time.sleep(0.3)
            elif self.board is not None:
                # The board's microsecond clock, sent as each edge happens.
                button = KEY_BUTTONS[key]
                self.board.write(f"D {button} {(time.monotonic_ns() - t0) // 1000}\n")
                time.sleep(0.15)
                self.board.write(f"U {button} {(time.monotonic_ns() - t0) // 1000}\n")
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
    with store_dir() as tmp:
        running = [Daemon(mode, game, Path(tmp)) for mode in MODES for game in ("lobby", "open")]
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
    parser.add_argument("--flip-s", type=float, default=20, help="time limit of the flip load")
    parser.add_argument("--idle-s", type=float, default=30, help="the daemons' idle window")
    parser.add_argument("--only", choices=("loop", "daemons"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--store-dir", help="where the loop's ledger is written (default /var/tmp: a disk)"
    )
    args = parser.parse_args()
    logging.getLogger("referee").setLevel(logging.ERROR)  # late decisions: counted instead
    header("bench/latency.py: edge to decision and to frame; the daemon at rest")
    if args.only != "daemons":
        print()
        rows = [measure(name, args) for name in LOADS]
        settle = rows[0]["settle"]
        print(f"settle window {settle:g} ms; at the end of the loop runs: {load()}")
        loop_table(rows)
        for r in rows:
            if r["decision"]:
                p99 = percentile(r["decision"], 99)
                met = "met" if p99 <= settle + 2 else "NOT met"
                print(
                    f"target edge->decision p99 <= {settle + 2:g} ms, {r['load']}: {met}"
                    f" ({p99:.2f} ms)"
                )
    if args.only != "loop":
        print()
        daemons(args.idle_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
