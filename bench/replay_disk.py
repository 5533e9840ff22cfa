"""How long REPLAY holds the main loop, with the clips' folder as a worn or crowded card
leaves it: the tree as it is, and a revision before it (issue 29: 1.3 s per REPLAY with
20,000 junk files in the folder).

    .venv/bin/python bench/replay_disk.py [--before REV] [--replays 10] [--junk 20000]

The real App (referee/daemon/app.py) on the terminal keyboard, its microphone a fake card on a
fake clock (tests/test_app_clips.py's Box), the store and the clips' folder on the disk
(/var/tmp). A game of two, P2's call under way (no point-out limit, so REPLAY plays it
however long ago it was made), its clip cut by the real cutter. Then REPLAY, --replays
times (and once before, not counted: the first loads the replays' modules), each stopped
by REPLAY again and followed by 6 s of the fake clock (past the 5 s in which REPLAY steps
back to the call before): each REPLAY's time on the loop is the time
spent in the loop's own passes (its sources read, each item taken, its step) from the key
to the replay shown: the press decided, and the clip read there (before) or the read
clip's samples taken up from the inbox (after; the read itself is on the replay's thread,
waited for between passes, as the loop waits in its sleep). Its log goes to /dev/null, as
a log would somewhere.

Folders:
  clean       the one clip;
  junk names  and --junk files no clip is named like (junk-N.txt);
  junk clips  and --junk files named like the game's clips (game00001-callN.json), none
              of which can be read: the issue's case.

Each tree runs in a process of its own: REV is taken out of git (`git archive`) into a
temporary folder. The printed table goes to bench/results/.
"""

import argparse
import io
import json
import logging
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from machine import header, load, store_dir

ROOT = Path(__file__).resolve().parents[1]
NS_PER_S = 1_000_000_000
MS = 1_000_000
FOLDERS = ("clean", "junk names", "junk clips")


def measure(root: Path, replays: int, junk: int) -> dict[str, object]:
    """In this process, the tree at root: each folder's REPLAYs' times on the loop, in s."""
    sys.path.insert(0, str(root))
    import referee

    assert Path(referee.__file__).is_relative_to(root), referee.__file__
    logging.basicConfig(level=logging.INFO, handlers=[logging.FileHandler(os.devnull)])
    sys.setswitchinterval(0.001)  # the daemon's (cli.py)
    times = {folder: replays_in(folder, replays, junk) for folder in FOLDERS}
    return {"tree": str(root), "times": times}


def replays_in(folder: str, replays: int, junk: int) -> list[float]:
    """The REPLAYs' times on the loop with the clips' folder so."""
    from referee.audio.capture import Capture
    from referee.config import default_config
    from referee.daemon import app as app_module
    from referee.daemon.app import App, RunOptions
    from referee.store.paths import clips_folder
    from tests.fake_capture import FakeCard
    from tests.test_app import KEY_OF, Clock

    config = default_config()
    config = replace(config, game=replace(config.game, pointout_ns=0))
    with store_dir() as where:
        store = Path(where) / "referee.db"
        clock = Clock()
        card = FakeCard(start_ns=clock.now, seed=4)
        capture = Capture(card)
        app_module.open_microphone = lambda audio: (capture, None)  # type: ignore[assignment]
        keys_r, keys = os.pipe()
        app = App(
            RunOptions(config, store, input="keyboard", display="terminal"),
            clock=clock,
            stdin_fd=keys_r,
            stdout=io.StringIO(),  # never drawn: the loop's passes here are its step alone
        )
        spent = [0.0]

        def at(t_ns: int) -> None:
            """The card captures up to t_ns; then a pass of the loop, timed."""
            while card.now_ns < t_ns:
                card.advance(min(20 * MS, t_ns - card.now_ns))
                capture.pump(0)
            clock.now = t_ns
            started = time.perf_counter()
            for item in app.inputs.read():
                app._take(item)
            app.step(t_ns)
            spent[0] += time.perf_counter() - started

        def tap(button: str) -> None:
            os.write(keys, KEY_OF[button].encode())
            at(clock.now + 50 * MS)
            at(clock.now + 40 * MS)  # past the tie and debounce windows

        try:
            for button in ("P1", "P2", "SUPER", "P2"):
                tap(button)
            at(clock.now + 2 * NS_PER_S + 200 * MS)
            assert app.listening.clips is not None and app.listening.clips.wait_cut(30)
            clips = clips_folder(store)
            for n in range(junk if folder != "clean" else 0):
                name = f"junk-{n}.txt" if folder == "junk names" else f"game00001-call{n:015d}.json"
                (clips / name).write_text("{")
            taken: list[float] = []
            for n in range(replays + 1):  # the first loads the replays' modules: not counted
                spent[0] = 0.0
                tap("REPLAY")
                while (said := app.view().messages[-1]).startswith("replay: loading"):
                    select.select([app.inbox], [], [], 30)  # the reader's thread
                    at(clock.now)
                assert said.startswith("replay: P2's call at "), said
                if n:
                    taken.append(spent[0])
                tap("REPLAY")  # stopped
                at(clock.now + 6 * NS_PER_S)
            return taken
        finally:
            app.close()
            os.close(keys_r)
            os.close(keys)


def run_in(root: Path, replays: int, junk: int) -> dict[str, list[float]]:
    """measure() in a process of its own, for the tree at root."""
    command = [sys.executable, __file__, f"--measure={root}", f"--replays={replays}"]
    done = subprocess.run([*command, f"--junk={junk}"], capture_output=True, text=True, cwd=root)
    if done.returncode:
        sys.exit(f"{root}: {done.stderr}")
    result: dict[str, list[float]] = json.loads(done.stdout.splitlines()[-1])["times"]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="9a250ce", help="the revision to compare with")
    parser.add_argument("--replays", type=int, default=10)
    parser.add_argument("--junk", type=int, default=20_000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.replays, args.junk)))
        return 0
    header("REPLAY's time on the main loop, by what the clips' folder holds")
    print(f"{args.replays} REPLAYs a folder, {args.junk} junk files; {load()} before")
    print("each tree in a process of its own, at the daemon's GIL switch interval (1 ms)")
    with tempfile.TemporaryDirectory(prefix="referee-before-") as before:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.before], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", before], input=archive.stdout, check=True)
        runs = {
            f"before ({args.before})": run_in(Path(before), args.replays, args.junk),
            "after (this tree)": run_in(ROOT, args.replays, args.junk),
        }
    print(f"{load()} after")
    print()
    print("| folder | tree | median (ms) | max (ms) |")
    print("|---|---|---|---|")
    for folder in FOLDERS:
        for tree, times in runs.items():
            ms = [t * 1000 for t in times[folder]]
            print(f"| {folder} | {tree} | {statistics.median(ms):.2f} | {max(ms):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
