"""`referee run` on a real full or read-only disk: a small tmpfs in a mount namespace of
its own (unshare -Urm, no root needed where user namespaces are allowed).

Played in a terminal, as a person would: the trouble is on the screen from the first
frame; the game goes on; what waits at `q` is kept in a file named on stderr with exit
status 3; the next start puts it back.
"""

import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from referee.cli import main
from referee.errors import EXIT_UNSAVED
from referee.outputs.terminal import ALT_SCREEN_OFF

from .processes import OnTerminal, namespaces

pytestmark = pytest.mark.skipif(bool(why := namespaces()), reason=why or "")

CONFIG = "[buttons]\ndebounce_ms = 1.0\n"  # typed keys do not bounce; they come fast
SETUP = """
from pathlib import Path
import sys
from referee.store.ledger import Ledger
from referee.store.store import Store
from referee.rules import Settings
with Store.open(Path(sys.argv[1])) as store:
    Ledger(store, store.new_game(Settings(), lobby=True))
"""
# In the namespace: a 1 MB disk with a store on it, filled up (or made read-only), then
# `referee run` as often as asked. The store is copied out at the end: the disk goes
# with the namespace. The test's own folder stands for the service's /run/referee, where
# a rescue file goes when the store's disk takes none.
SCRIPT = """
set -e
mount -t tmpfs tmpfs /run
mkdir /run/referee
mount --bind "$RUNDIR" /run/referee
mount -t tmpfs -o size=1m tmpfs "$DISK"
"$PY" -c "$SETUP" "$DISK/referee.db"
case "$TROUBLE" in
  full) dd if=/dev/zero of="$DISK/fill" bs=4096 2>/dev/null || true ;;
  read-only) mount -o remount,ro "$DISK" ;;
esac
set +e
for run in $(seq "$RUNS"); do
  "$PY" -m referee run --input keyboard --display terminal --config "$CONFIG" \\
    --store "$DISK/referee.db"
  echo "exit status $?"
  rm -f "$DISK/fill"  # room again for the next start
done
cp "$DISK"/referee.db* "$OUT"/
"""


class Box(OnTerminal):
    """`referee run` in a terminal, its store on a tiny disk of its own."""

    def __init__(self, tmp_path: Path, trouble: str, runs: int = 1) -> None:
        self.disk = tmp_path / "disk"
        self.out = tmp_path / "out"
        self.run_dir = tmp_path / "run"
        for folder in (self.disk, self.out, self.run_dir):
            folder.mkdir()
        config = tmp_path / "referee.toml"
        config.write_text(CONFIG)
        env = dict(
            os.environ,
            DISK=str(self.disk),
            OUT=str(self.out),
            PY=sys.executable,
            SETUP=SETUP,
            CONFIG=str(config),
            TROUBLE=trouble,
            RUNS=str(runs),
            RUNDIR=str(self.run_dir),
            HOME=str(tmp_path),
        )
        super().__init__(["unshare", "-Urm", "sh", "-c", SCRIPT], env)

    def wait_for_exit(self) -> tuple[int, str]:
        """The exit status of a run, and what it wrote after leaving the screen."""
        found = self.output.wait_until(
            lambda got: re.search(r"exit status \d+", got.rsplit(ALT_SCREEN_OFF, 1)[-1]),
            "the exit",
        )
        after = found.rsplit(ALT_SCREEN_OFF, 1)[-1]
        self.output.text = ""
        said, status = after.rsplit("exit status ", 1)
        return int(status.split()[0]), said.strip()

    def free_space(self) -> None:
        """Delete the filler, as someone cleaning up the disk would."""
        self.delete("fill")

    def delete(self, name: str) -> None:
        """Delete a file of the disk (through /proc: the tmpfs is only mounted in the box's
        namespace)."""
        (Path(f"/proc/{self.proc.pid}/root") / str(self.disk).lstrip("/") / name).unlink()

    def end(self) -> None:
        assert self.proc.wait(timeout=20) == 0
        os.close(self.master)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@pytest.fixture
def box(tmp_path):
    boxes = []

    def make(trouble: str, runs: int = 1) -> Box:
        boxes.append(Box(tmp_path, trouble, runs))
        return boxes[-1]

    yield make
    for made in boxes:
        made.kill()


def test_a_full_disk_shown_from_the_start_kept_at_exit_put_back_at_the_next(box, capsys):
    term = box("full", runs=2)
    frame = term.wait_for("PRESS YOUR BUZZER TO JOIN")
    assert "!! storage trouble: disk full: inputs will wait in memory" in frame
    term.press("12s")  # play goes on
    frame = term.wait_for("FIND A SET")
    assert "storage trouble: disk full, 3 inputs not yet saved" in frame
    assert "Traceback" not in term.output.text and "Logging error" not in term.output.text
    term.press("q")
    status, said = term.wait_for_exit()
    assert status == EXIT_UNSAVED
    kept = next(term.run_dir.glob("referee-unsaved-game1-*.txt"))
    named = f"/run/referee/{kept.name}"  # as the box sees it
    assert said == (
        f"referee: 3 inputs could not be saved to {term.disk}/referee.db (disk full);"
        f" they are in {named}: `referee recover {named}` puts them back"
    )
    # The next start, with room again, puts them back before it resumes the game.
    frame = term.wait_for("FIND A SET")
    assert "storage trouble" not in frame
    assert not kept.exists()
    term.press("q")
    assert term.wait_for_exit() == (0, "")
    term.end()
    assert main(["state", "--store", str(term.out / "referee.db")]) == 0
    state = json.loads(capsys.readouterr().out)
    assert (state["phase"], [p["id"] for p in state["players"]]) == ("open", [1, 2])


def test_when_space_comes_back_the_waiting_inputs_are_saved(box, capsys):
    term = box("full")
    term.wait_for("PRESS YOUR BUZZER TO JOIN")
    term.press("1")
    term.wait_for("storage trouble: disk full, 1 input not yet saved")
    term.free_space()
    term.press("2")  # the next input tries the disk again: both go in
    term.output.wait_until(
        lambda got: "P2 joins the game" in (frame := term.frame(got)) and "trouble" not in frame,
        "P2's join, saved with P1's",
    )
    term.press("q")
    assert term.wait_for_exit() == (0, "")
    term.end()
    assert main(["state", "--store", str(term.out / "referee.db")]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["players"]] == [1, 2]


def test_a_read_only_disk_is_shown_from_the_start(box):
    term = box("read-only")
    frame = term.wait_for("PRESS YOUR BUZZER TO JOIN")
    assert "!! storage trouble: read-only storage: inputs will wait in memory" in frame
    term.press("q")
    assert term.wait_for_exit() == (0, "")
    term.end()


def test_a_store_deleted_on_a_full_disk_is_kept_whole_for_the_next_start(box, capsys):
    """Deleted while the disk is full, the store cannot be written anew: the game is kept in
    memory, shown as trouble, and goes whole to a rescue file at the exit."""
    term = box("full", runs=2)
    term.wait_for("PRESS YOUR BUZZER TO JOIN")
    term.delete("referee.db")
    term.wait_for("store file deleted: inputs wait in memory")
    term.press("1")
    why = "store file deleted, not written anew: disk full"
    term.wait_for(f"storage trouble: {why}, 1 input")  # not yet saved (the line wraps)
    term.press("q")
    status, said = term.wait_for_exit()
    assert status == EXIT_UNSAVED
    assert said.startswith(f"referee: 1 input could not be saved to {term.disk}/referee.db ({why})")
    kept = next(term.run_dir.glob("referee-unsaved-game1-*.txt"))
    assert "# first: 1\n" in kept.read_text()  # the whole game
    term.wait_for("P1 ●")  # the next start, with room again, puts the game back
    term.press("q")
    assert term.wait_for_exit() == (0, "")
    term.end()
    assert main(["state", "--store", str(term.out / "referee.db")]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["players"]] == [1]
