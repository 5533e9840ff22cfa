"""The daemon at rest on GPIO, on a real kernel: CPU and wake-ups, this tree against another.

    make bench-rig               # in the rig's guest, beside the tree before libgpiod
    python3 bench/idle_gpio.py [--idle-s 30] [--old TREE]   # by hand, in the guest

Runs `python3 -m referee run --input gpio --display none` on the guest's gpio-sim chip
(labelled as a Pi 4's GPIO controller), in its lobby with every seat open, and measures
over --idle-s seconds its CPU time (utime + stime, /proc/PID/stat) as % of one core and
its threads' context switches a second. With --old TREE it then does the same, in the same run,
for the referee in TREE (a checkout of an earlier commit, e.g. the one whose buttons came
through gpiozero's lgpio callbacks), with gpiozero made to believe it is on a Pi the way
that tree's rig did. Under emulation the numbers are the guest's, not a Pi's: the ratio
between the two trees is what they show. Target: the new path under 0.2 % of a core.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TICK = os.sysconf("SC_CLK_TCK")
CONFIG = '[leds]\ndriver = "none"\n[beeper]\npin = ""\n[sound]\noutput = "none"\n'


def sample(pid: int) -> tuple[float, float, int]:
    """(wall s, CPU s, context switches so far) of the process and all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    switches = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith(("voluntary_ctxt", "nonvoluntary_ctxt")):
                switches += int(line.split()[1])
    return time.monotonic(), cpu, switches


def daemon(tree: Path, tmp: Path, env: dict[str, str]) -> subprocess.Popen:
    config = tmp / f"{tree.name}.toml"
    config.write_text(CONFIG)
    command = [sys.executable, "-m", "referee", "run", "--input", "gpio", "--display", "none",
               "--config", str(config), "--store", str(tmp / f"{tree.name}.db")]  # fmt: skip
    process = subprocess.Popen(command, cwd=tree, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    seen = ""
    for line in process.stderr:  # until its start line, or the end of its output
        seen += line
        if "input GPIO" in line:
            return process
    raise RuntimeError(f"{tree}: the daemon did not start:\n{seen}")


def main() -> int:
    from gpiosim_rig import SimChip  # the rig's, on its path in the guest

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-s", type=float, default=30)
    parser.add_argument("--old", type=Path, help="another tree to measure the same way")
    args = parser.parse_args()
    trees = [ROOT] + ([args.old.resolve()] if args.old else [])
    env = dict(os.environ, LG_WD=tempfile.gettempdir())
    old_env = dict(env, GPIOZERO_PIN_FACTORY="lgpio")
    before, after = [], []
    # One after the other: a line is claimed by one program at a time.
    with SimChip(num_lines=28, label="pinctrl-bcm2711"), tempfile.TemporaryDirectory() as tmp:
        for tree in trees:
            process = daemon(tree, Path(tmp), env if tree == ROOT else old_env)
            try:
                time.sleep(5)  # the start's own work is over
                before.append(sample(process.pid))
                time.sleep(args.idle_s)
                after.append(sample(process.pid))
            finally:
                process.terminate()
                process.wait(30)
    print(f"{'tree':>40} | {'CPU % of a core':>15} | {'wake-ups/s':>10}")
    print("-" * 72)
    for tree, (w0, c0, s0), (w1, c1, s1) in zip(trees, before, after, strict=True):
        cpu = 100 * (c1 - c0) / (w1 - w0)
        print(f"{str(tree)[-40:]:>40} | {cpu:>15.3f} | {(s1 - s0) / (w1 - w0):>10.1f}")
    new_cpu = 100 * (after[0][1] - before[0][1]) / (after[0][0] - before[0][0])
    print(f"CPU counted in ticks of 1/{TICK} s: {100 / TICK / args.idle_s:.3f} % per tick")
    print(f"target idle CPU with GPIO < 0.2 % of a core: {'met' if new_cpu < 0.2 else 'NOT met'}")
    return 0 if new_cpu < 0.2 else 1


if __name__ == "__main__":
    sys.exit(main())
