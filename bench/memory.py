"""Peak memory of long games, and how long a resume takes, under every rule set; and the
daemon's memory with the microphone on against off.

    .venv/bin/python bench/memory.py [--inputs 10000,30000,100000] [--rules super,...]
                                     [--baseline REV] [--baseline-max 30000]
                                     [--only games|microphone] [--listen-s 40]

For each rule set and length, one game is generated (seeded, so every run plays the
same games): a table playing for hours, the inputs a referee box accepts, almost every
one a step of the game (a call, a verdict, a super round, a join, a timeout, now and
then an UNDO), so that nothing is left for the engine to skip. Each game then goes,
each time in a child process of its own, through:

  replay   `python -m referee replay SCRIPT`: peak RSS (the child's ru_maxrss).
  run      the daemon's own path without its screen: `referee.daemon.app` imported (pygame and
           all), a real store on tmpfs (/dev/shm: the disk's fsync is not what is
           measured here), a Session fed every input as the arbiter's decisions, each
           written to the ledger before the next: peak RSS.
  resume   a new Session on that store, as `referee run` starts: the time from opening
           the store to the resumed state (the ledger read and the replay), and peak RSS.

The baseline: the same games through the code of revision REV (default: the merge base
with main), taken out with `git archive` into a temporary directory and run the same way
in the same run, up to --baseline-max inputs (its memory grows with the square of a
game's length). Rule sets that the baseline does not know are left out of it.

The microphone (issue 17, "Cost"): the daemon's own loop, `referee.daemon.app.App` on GPIO (the
tests' fake line request; gpiozero's mock pins for the LEDs and beeper) with no screen, a
store on tmpfs, in a child process of its own, twice on the same inputs: the microphone
off (the baseline), and on: the real capture thread and its 30 s ring at 48 kHz, reading a
fake card at a card's pace (tests/fake_capture.py's RealTimeCard), the real clips' writer
handing every call's window to the clips' cutter, a process of its own that finds the
voice onsets and writes the WAV and JSON to the disk, forked before the daemon's first
thread as `referee run` forks it (referee/linux/children.py). Four players join, and for
--listen-s seconds (more than the ring, so it is full) a call every 2 s, judged; then
REPLAY plays the last call, slowed, to ALSA's null device (libasound, as a speaker); and
once more on with `replay_pitch = "kept"` (the stretch). Counted for the daemon and every
process it started (the cutter): peak RSS, each one's VmHWM at the end (an upper bound
of their sum: pages they share, libpython's and numpy's, count twice); and their PSS and
USS summed (/proc/PID/smaps_rollup, sampled every SAMPLE_S from this process: PSS
counts a page shared by n processes 1/n in each, so the sum counts the pages the daemon
and its cutter share once; USS is the pages of one process alone), at their highest;
and the anonymous part of the PSS (Pss_Anon: the libraries' pages, libpython's among
them, are shared with every process on the machine that maps them, whose share of them
moves with what else runs; the anonymous ones only between the daemon and its forked
cutter). The microphone's cost is the PSS sum's, on less off.

Targets (issue 7, "Memory"): peak RSS <= 80 MB for replay and run, resume < 2 s, at
every length up to 100,000 inputs; (issue 17) the microphone on at most 20 MB over off.
The exit status is 1 when one is missed.
"""

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from machine import header, load

from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    Input,
    Phase,
    Press,
    RuleSet,
    Settings,
    Super,
    Tick,
    Undo,
    Verdict,
    new_game,
    step,
    words,
)
from referee.rules.rulesets import RULE_BOOKS

ROOT = Path(__file__).resolve().parent.parent
MAX_RSS_MB = 80
MAX_MICROPHONE_MB = 20
MAX_RESUME_S = 2.0
SEATS = 4
CHILD_TIMEOUT_S = 900
SAMPLE_S = 0.02

# What a table does in each phase, and how often: (what, weight).
_MOVES: dict[Phase, list[tuple[str, int]]] = {
    Phase.OPEN: [("press", 80), ("super", 12), ("undo", 3), ("tick", 5)],
    Phase.CALL: [("valid", 40), ("invalid", 35), ("press", 12), ("super", 3), ("undo", 4),
                 ("tick", 6)],
    Phase.SUPER_JOIN: [("press", 70), ("super", 25), ("undo", 5)],
    Phase.SUPER_COUNTDOWN: [("press", 75), ("tick", 20), ("undo", 5)],
    Phase.SUPER_CALL: [("valid", 40), ("invalid", 40), ("press", 10), ("undo", 4), ("tick", 6)],
}  # fmt: skip
# Seconds between inputs: mostly a few, sometimes a photo finish, sometimes a timeout.
_GAPS = [(0.001, 8), (0.3, 15), (1.0, 30), (2.5, 30), (6.0, 12), (12.0, 5)]


def game(rules: RuleSet, inputs: int) -> list[str]:
    """A replay script's lines: its config line, then `inputs` inputs that the box
    accepts (ticks aside), the game never ending. Seeded: every run plays the same."""
    seats = 1 if RULE_BOOKS[rules].single_player else SEATS
    settings = Settings(rules=rules, players=seats, tie_ns=2 * NS_PER_MS)
    rng = random.Random(f"{rules}-{inputs}")
    state = new_game(settings, lobby=False)
    lines = [f"config rules={rules} players={settings.players} tie_ms=2"]
    t_ns = 0
    while len(lines) <= inputs:
        gap_s = rng.choices([g for g, _ in _GAPS], [w for _, w in _GAPS])[0]
        moves = _MOVES[state.phase]
        what = rng.choices([m for m, _ in moves], [w for _, w in moves])[0]
        t = t_ns + round(gap_s * NS_PER_S)
        inp = _input(what, t, rng.randint(1, settings.players))
        after, _ = step(settings, state, inp)
        if after.phase is Phase.OVER or (after is state and not isinstance(inp, Tick)):
            continue  # an ending or an ignored input: the table does something else
        lines.append(f"{t // NS_PER_S}.{t % NS_PER_S:09d} {words(inp)}")
        state, t_ns = after, t
    return lines


def _input(what: str, t_ns: int, seat: int) -> Input:
    match what:
        case "press":
            return Press(seat, t_ns)
        case "valid" | "invalid":
            return Verdict(what == "valid", t_ns)
        case "super":
            return Super(t_ns)
        case "undo":
            return Undo(t_ns)
    return Tick(t_ns)


# The children, run with the code under test first on sys.path. Each prints one JSON line
# on stderr, its peak RSS (VmHWM: counted from its exec, unlike the parent's ru_maxrss of
# a child, which counts the forked copy of this process too).
_PROLOGUE = """
import json, sys, time
root = sys.argv[1]
import referee
assert referee.__file__.startswith(root), f"{referee.__file__} is not under {root}"
def peak_mb(pid="self"):
    with open(f"/proc/{pid}/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024
"""
# `referee replay SCRIPT`, the state printed to stdout.
_REPLAY = """
from referee.cli import main
code = main(["replay", sys.argv[2]])
print(json.dumps({"peak_mb": peak_mb(), "code": code}), file=sys.stderr)
"""
# As `referee run` does, without a screen: its imports, a Session, a store, decisions.
_RUN = """
import referee.daemon.app  # pygame and all that the daemon loads
from referee.daemon.arbiter import Decision
from referee.rules import Tick, parse_input, parse_script, parse_time, words
from referee.daemon.session import Session
from referee.store.store import Store
script_path, db = sys.argv[2:4]
with open(script_path) as script:
    settings = parse_script(script.readline()).settings
    store = Store.open(__import__("pathlib").Path(db))
    session = Session(store, settings, tie_floor_ns=0, now_ns=0)
    for seat in range(1, settings.players + 1):  # the lobby, as at the table
        session.play(Decision(t_ns=0, button=f"P{seat}"))
    session.play(Decision(t_ns=0, button="SUPER"))
    start_mb = peak_mb()
    began = time.perf_counter()
    count = 0
    for line in script:
        time_text, *said = line.split()
        inp = parse_input(said, parse_time(time_text))
        if isinstance(inp, Tick):
            session.tick(inp.t_ns)
        else:
            button = words(inp).upper().replace("PRESS ", "P")
            session.play(Decision(t_ns=inp.t_ns, button=button))
        count += 1
    each_us = (time.perf_counter() - began) / max(1, count) * 1e6
print(json.dumps({"start_mb": start_mb, "peak_mb": peak_mb(), "each_us": each_us,
                  "phase": str(session.state.phase)}), file=sys.stderr)
"""
# As `referee run` starts on a store that holds a game: the time to the resumed state.
_RESUME = """
import referee.daemon.app
from pathlib import Path
from referee.rules import parse_script
from referee.daemon.session import Session
from referee.store.store import Store
script_path, db = sys.argv[2:4]
with open(script_path) as script:
    settings = parse_script(script.readline()).settings
began = time.perf_counter()
store = Store.open(Path(db))
session = Session(store, settings, tie_floor_ns=0, now_ns=10**18)
seconds = time.perf_counter() - began
print(json.dumps({"seconds": seconds, "peak_mb": peak_mb(), "phase": str(session.state.phase)}),
      file=sys.stderr)
"""


# `referee run`'s loop on fake GPIO, the microphone on or off (sys.argv[2]), for listen_s.
_MICROPHONE = """
import os
os.environ["SDL_VIDEODRIVER"] = "dummy"
from pathlib import Path
mode, db, listen_s = sys.argv[2], sys.argv[3], float(sys.argv[4])
# As `referee run` does: its module loaded (the settings' code, the store's, the rules'),
# the settings read, then the cutter forked (early.fork_cutter), before anything else.
from referee.cli import main as _
from referee.config import default_config
config = default_config()
cutter = None
if mode != "off":
    from referee.audio.cutter_process import CutterProcess
    cutter = CutterProcess.forked()
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
import referee.daemon.app
from referee.daemon.app import App, RunOptions
from referee.inputs import gpio
sys.path.insert(0, root)
from tests.fake_gpio import FakeRequest
Device.pin_factory = MockFactory(pin_class=MockPWMPin)
made = []
gpio.find_chip = lambda: gpio.DEV / "gpiochip0"
gpio.request_buttons = lambda chip, offsets: made.append(FakeRequest(offsets)) or made[-1]
if mode != "off":
    from referee.audio import pcm
    from referee.audio.capture import Capture
    from tests.fake_capture import RealTimeCard
    def microphone(audio):
        capture = Capture(RealTimeCard())
        capture.start()
        return capture, None
    referee.daemon.app.open_microphone = microphone
    class Speaker(pcm.AlsaPlayback):  # the replay heard on ALSA's null device
        def __init__(self, name="default", *, rate=48_000):
            super().__init__("null", rate=rate)
    pcm.AlsaPlayback = Speaker
if mode == "kept":
    from dataclasses import replace
    config = replace(config, audio=replace(config.audio, replay_pitch="kept"))
app = App(RunOptions(config, Path(db), "gpio", "none"), cutter=cutter)
[request] = made
offset = lambda button: int(config.pins[button].removeprefix("GPIO"))
def tap(button, wait_s=0.25):
    t = time.monotonic_ns()
    request.feed.press(offset(button), t)
    request.feed.release(offset(button), t + 50_000_000)
    time.sleep(wait_s)
    for item in app.inputs.read():
        app._take(item)
    app.step(time.monotonic_ns())
for button in ("P1", "P2", "P3", "P4", "SUPER"):
    tap(button)
start = time.monotonic()
calls = 0
while time.monotonic() - start < listen_s:
    tap(f"P{calls % 4 + 1}", 1.0)
    tap("VALID" if calls % 3 else "INVALID", 0.75)
    calls += 1
time.sleep(2.5)  # the last clip's window closes
tap("REPLAY", 2.0)
said = [m for m in app.messages if m.startswith("replay")]
clips = app.listening.clips.saved if app.listening.clips is not None else 0
cutter = app.listening.clips.cutter_pid if app.listening.clips is not None else None
cutter_mb = peak_mb(cutter) if cutter is not None else 0.0  # before it stops with the app
app.close()
print(json.dumps({"peak_mb": peak_mb(), "cutter_mb": cutter_mb, "calls": calls, "clips": clips,
                  "replay": said[-1] if said else "none"}), file=sys.stderr)
"""


def microphone_table(listen_s: float) -> list[str]:
    """The daemon's memory and its cutter's with the microphone off and on, same inputs."""
    print(f"\n## The microphone: the daemon's memory and its cutter's, off and on ({listen_s:g} s"
          " of calls)")  # fmt: skip
    print("| microphone (kept: the replay stretched) | calls | clips | replay | peak RSS MB:"
          " daemon | cutter | PSS MB, both | of it anonymous | USS MB, both |")  # fmt: skip
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    pss, anon = {}, {}
    for mode in ("off", "on", "kept"):
        db = Path("/dev/shm") / f"referee-bench-memory-{os.getpid()}-microphone-{mode}.db"
        try:
            said, sampled = _sampled(ROOT, _MICROPHONE, Path(mode), db, str(listen_s))
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            shutil.rmtree(db.parent / "clips", ignore_errors=True)
        pss[mode], anon[mode] = sampled["pss"], sampled["anon"]
        print(f"| {mode} | {said['calls']} | {said['clips']} | {said['replay']} |"
              f" {float(said['peak_mb']):.1f} | {float(said['cutter_mb']):.1f} |"
              f" {sampled['pss']:.1f} | {sampled['anon']:.1f} | {sampled['uss']:.1f} |",
              flush=True)  # fmt: skip
    more = max(pss["on"], pss["kept"]) - pss["off"]
    # The libraries' pages (libpython's, libc's) are shared with every other process
    # that maps them, on this machine other sessions' Pythons too: their share of them
    # moves with what else runs. The anonymous pages are the daemon's and its cutter's
    # alone (shared between the two by the fork), so their difference is steadier.
    print(
        f"on less off, anonymous PSS only: {max(anon['on'], anon['kept']) - anon['off']:.1f}"
        " MB (for comparison: libraries' pages shared with other processes move the PSS)"
    )
    met = more <= MAX_MICROPHONE_MB
    verdict = "met" if met else "NOT met"
    print(f"on less off, PSS of the daemon and its cutter: {more:.1f} MB (target <="
          f" {MAX_MICROPHONE_MB} MB): {verdict}")  # fmt: skip
    return [] if met else [f"microphone +{more:.1f} MB"]


def _sampled(root: Path, program: str, script: Path, db: Path, *more: str) -> tuple[dict, dict]:
    """_child's run, the memory of the child and of every process it started (the clips'
    cutter) sampled meanwhile: their PSS and USS summed, at the highest, in MB."""
    highest = {"pss": 0.0, "anon": 0.0, "uss": 0.0}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_S):
            for pid in _children(os.getpid()):  # the measured daemon: _child's process
                total = {"pss": 0.0, "anon": 0.0, "uss": 0.0}
                for each in (pid, *_children(pid)):
                    for key, mb in _smaps_mb(each).items():
                        total[key] += mb
                for key, mb in total.items():
                    highest[key] = max(highest[key], mb)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        said = _child(root, program, script, db, *more)
    finally:
        done.set()
        sampler.join()
    return said, highest


def _children(pid: int) -> list[int]:
    """The processes pid started (any of its threads), still running."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _smaps_mb(pid: int) -> dict[str, float]:
    """A process's PSS and USS (private pages, clean and dirty), in MB; none once it ended."""
    kb: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                kb[name] = int(rest.split()[0])
    if not kb:
        return {}
    return {
        "pss": kb["Pss"] / 1024,
        "anon": kb["Pss_Anon"] / 1024,
        "uss": (kb["Private_Clean"] + kb["Private_Dirty"]) / 1024,
    }


def _child(root: Path, program: str, script: Path, db: Path, *more: str) -> dict[str, float | str]:
    """Run a child program with root's code; what it measured."""
    env = {**os.environ, "PYTHONPATH": str(root), "SDL_VIDEODRIVER": "dummy"}
    args = [sys.executable, "-c", _PROLOGUE + program, str(root), str(script), str(db), *more]
    done = subprocess.run(
        args,
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=CHILD_TIMEOUT_S,
    )
    lines = done.stderr.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{script.name}: exit {done.returncode}: {done.stderr[-800:]}")
    said: dict[str, float | str] = json.loads(lines[-1])
    return said


@dataclass
class Row:
    rules: str
    inputs: int
    code: str
    replay_mb: float
    run_start_mb: float
    run_mb: float
    run_each_us: float
    resume_s: float
    resume_mb: float

    @property
    def missed(self) -> list[str]:
        missed = [
            what
            for what, mb in (("replay", self.replay_mb), ("run", self.run_mb))
            if mb > MAX_RSS_MB
        ]
        return missed + (["resume"] if self.resume_s >= MAX_RESUME_S else [])


def measure(root: Path, code: str, rules: str, lines: list[str], work: Path) -> Row:
    script = work / f"{code}-{rules}-{len(lines) - 1}.txt"
    script.write_text("\n".join(lines) + "\n")
    db = Path("/dev/shm") / f"referee-bench-memory-{os.getpid()}-{script.stem}.db"
    try:
        replayed = _child(root, _REPLAY, script, db)
        run = _child(root, _RUN, script, db)
        resumed = _child(root, _RESUME, script, db)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert resumed["phase"] == run["phase"], "the resumed game is not the game played"
    return Row(
        rules,
        len(lines) - 1,
        code,
        float(replayed["peak_mb"]),
        float(run["start_mb"]),
        float(run["peak_mb"]),
        float(run["each_us"]),
        float(resumed["seconds"]),
        float(resumed["peak_mb"]),
    )


def baseline_code(rev: str, work: Path) -> tuple[Path, set[str]]:
    """The code of revision rev in a directory of its own, and the rule sets it knows."""
    root = work / f"baseline-{rev}"
    root.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    known = subprocess.run(
        [sys.executable, "-c", "from referee.rules import RuleSet; print(*RuleSet)"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return root, set(known)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", default="10000,30000,100000", help="game lengths")
    parser.add_argument("--rules", default=",".join(RuleSet), help="rule sets")
    parser.add_argument("--baseline", default=BASELINE, metavar="REV", help="old code")
    parser.add_argument("--baseline-max", type=int, default=30_000, metavar="N")
    parser.add_argument("--only", choices=("games", "microphone"))
    parser.add_argument("--listen-s", type=float, default=40.0, help="the microphone's calls")
    args = parser.parse_args()
    if args.only == "microphone":
        header("The daemon's memory with the microphone (bench/memory.py --only microphone)")
        missed = microphone_table(args.listen_s)
        print(f"\nat the end: {load()}")
        return 1 if missed else 0
    lengths = sorted(int(n) for n in args.inputs.split(","))
    header("Memory and resume time of long games (bench/memory.py)")
    print(f"targets: peak RSS <= {MAX_RSS_MB} MB (replay, run), resume < {MAX_RESUME_S:g} s")
    print(f"baseline: {args.baseline} up to {args.baseline_max} inputs")
    print()
    title = (
        f"{'rules':9} {'inputs':>7} {'code':9} {'replay MB':>9} {'run MB':>7} {'(start)':>7}"
        f" {'us/input':>8} {'resume s':>8} {'resume MB':>9}  met?"
    )
    print(title)
    print("-" * len(title))
    missed = []
    with tempfile.TemporaryDirectory(prefix="referee-bench-memory-") as folder:
        work = Path(folder)
        old_root, old_rules = baseline_code(args.baseline, work)
        for rules in args.rules.split(","):
            lines = game(RuleSet(rules), lengths[-1])
            for n in lengths:
                codes = [("this", ROOT)]
                if rules in old_rules and n <= args.baseline_max:
                    codes.append(("baseline", old_root))
                for code, root in codes:
                    row = measure(root, code, rules, lines[: n + 1], work)
                    met = "-"
                    if code == "this":
                        missed += [f"{rules} {n} {what}" for what in row.missed]
                        met = "no: " + ", ".join(row.missed) if row.missed else "yes"
                    print(
                        f"{row.rules:9} {row.inputs:>7} {row.code:9} {row.replay_mb:>9.1f}"
                        f" {row.run_mb:>7.1f} {row.run_start_mb:>7.1f} {row.run_each_us:>8.0f}"
                        f" {row.resume_s:>8.2f} {row.resume_mb:>9.1f}  {met}",
                        flush=True,
                    )
    if args.only != "games":
        missed += microphone_table(args.listen_s)
    print()
    print(f"at the end: {load()}")
    print("targets met" if not missed else "MISSED: " + "; ".join(missed))
    return 1 if missed else 0


# The code before the undo states shared their calls (their memory grew with the square
# of a game's length): main as this benchmark was written.
BASELINE = "0e6f262"

if __name__ == "__main__":
    sys.exit(main())
