"""A slow card and a power cut, end to end: the real daemon, its real SQLite file, and the
store's syncs held at the OS level (tests/slow_fsync.py's gate, an LD_PRELOAD shim).

The daemon reads a button board (its beeps come back as `B` lines) and draws in a
terminal. A press's sync is held: its beep and its frame must come all the same. Then the
power is cut at a chosen moment: the daemon killed (SIGKILL), and its -wal file cut back
to its size at its last sync's return, which is all a power cut leaves of a file that
only grows. Started again, the ledger must hold every input whose sync had returned, and
the screen must say which input it resumed from (docs/design.md, "The store").
"""

import json
import os
import signal
import sys

import pytest

from referee.cli import main

from . import slow_fsync
from .fake_board import FakeBoard
from .processes import OnTerminal, wait_in_file

pytestmark = pytest.mark.skipif(
    slow_fsync.build() is None, reason="needs a C compiler for tests/slow_fsync.c"
)
CONFIG = "[rules]\npointout_s = 120.0\n[buttons]\ndebounce_ms = 1.0\n"
P2_CALLS = "B 880 300"  # the board's line for P2's note, a call's 300 ms


class Table:
    """`referee run` on a board and a terminal, its store's syncs at a gate."""

    def __init__(self, tmp_path, board: FakeBoard, gate: slow_fsync.Gate | None) -> None:
        self.config = tmp_path / "referee.toml"
        self.config.write_text(CONFIG)
        self.store = tmp_path / "disk" / "referee.db"
        self.board = board
        self.gate = gate
        env = dict(os.environ, HOME=str(tmp_path), **(gate.env if gate else {}))
        env.pop("DISPLAY", None)
        self.term = OnTerminal(
            [sys.executable, "-m", "referee", "run", "--input", f"serial:{board.path}",
             "--display", "terminal", "--config", str(self.config), "--store", str(self.store)],
            env,
        )  # fmt: skip

    def press(self, button: str, shown: str) -> None:
        """A press (and its release), until the screen shows `shown`."""
        self.board.edges_now(("D", button, 200), ("U", button, 100))
        self.term.wait_for(shown)

    def press_saved(self, button: str, shown: str) -> None:
        """A press, shown, and its one sync let through and returned."""
        gate = self.gate
        assert gate is not None
        gate.hold()
        self.press(button, shown)
        gate.wait(lambda: gate.held == 1, f"the sync of {button}'s input")
        syncs = gate.syncs
        gate.release()
        gate.wait(lambda: gate.syncs > syncs, f"the return of {button}'s sync")

    def heard(self, line: str) -> None:
        """Read what the referee sent the board until this line."""
        while self.board.read_line(timeout_s=5) != line:
            pass

    def cut(self) -> None:
        """The power goes: the process killed, the -wal as its last sync left it."""
        os.killpg(self.term.proc.pid, signal.SIGKILL)
        self.term.proc.wait(timeout=10)
        os.close(self.term.master)
        assert self.gate is not None
        wal = self.store.with_name("referee.db-wal")
        os.truncate(wal, self.gate.synced[str(wal.resolve())])


def resumed(table: Table, tmp_path, capsys, shown: str, last_kept: str) -> dict:
    """The daemon started again after the cut, on the keyboard (the store is what counts):
    it shows `shown` and names the last input kept; quit, and what `referee state` says."""
    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("DISPLAY", None)
    again = OnTerminal(
        [sys.executable, "-m", "referee", "run", "--input", "keyboard", "--display",
         "terminal", "--config", str(table.config), "--store", str(table.store)],
        env,
    )  # fmt: skip
    again.wait_for(shown)
    said = f"resumed after a power cut or crash: the last input kept is {last_kept} at "
    wait_in_file(table.store.with_name("referee.log"), said)
    again.press("q")
    assert again.proc.wait(timeout=10) == 0
    os.close(again.master)
    assert main(["state", "--store", str(table.store)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def table(tmp_path):
    (tmp_path / "disk").mkdir()
    shim = slow_fsync.build()
    assert shim is not None
    gate = slow_fsync.Gate(shim, tmp_path / "disk", tmp_path)
    with FakeBoard(tmp_path) as board:
        made = Table(tmp_path, board, gate)
        try:
            board.wait_connected(timeout_s=10)
            board.hello()
            board.tick()
            made.term.wait_for("PRESS YOUR BUZZER TO JOIN")
            made.press_saved("P1", "P1 joins the game")
            made.press_saved("P2", "P2 joins the game")
            made.press_saved("SUPER", "FIND A SET")
            yield made
        finally:
            gate.release()
            if made.term.proc.poll() is None:
                os.killpg(made.term.proc.pid, signal.SIGKILL)
                made.term.proc.wait()
            gate.close()


def test_a_held_sync_holds_back_neither_the_beep_nor_the_frame_and_a_cut_loses_only_it(
    table, tmp_path, capsys
):
    table.gate.hold()
    table.press("P2", "P2: SHOW YOUR SET")  # shown while its sync waits at the gate
    table.heard(P2_CALLS)
    table.gate.wait(lambda: table.gate.held == 1, "P2's call's sync, held")
    table.cut()

    # The call was not on the disk: it is gone, and the game open again.
    state = resumed(table, tmp_path, capsys, "FIND A SET", last_kept="super")
    assert (state["phase"], state["calls"]) == ("open", [])


def test_a_cut_after_the_sync_returned_keeps_the_call(table, tmp_path, capsys):
    table.press_saved("P2", "P2: SHOW YOUR SET")
    table.heard(P2_CALLS)
    table.cut()

    state = resumed(table, tmp_path, capsys, "P2: SHOW YOUR SET", last_kept="press 2")
    assert [c["callers"] for c in state["calls"]] == [[2]]
