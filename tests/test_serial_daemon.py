"""End to end: a button board's lines, through the running daemon, to `referee state`."""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import ClassVar

import pytest

from referee.cli import main
from referee.rules import Verdict

from .fake_board import FakeBoard
from .processes import Output, wait_in_store


class Daemon:
    """`referee run` reading a board, as under systemd: no screen, the log on stderr."""

    started: ClassVar[list["Daemon"]] = []

    def __init__(
        self, tmp_path, board: FakeBoard, settings: str = "[rules]\nplayers = 4\n"
    ) -> None:
        config = tmp_path / "referee.toml"
        config.write_text(settings)
        self.store = tmp_path / "referee.db"
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "DISPLAY")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "run", "--input", f"serial:{board.path}",
             "--display", "none", "--config", str(config), "--store", str(self.store)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=env,
        )  # fmt: skip
        self.started.append(self)
        assert self.proc.stderr is not None
        self.output = Output(self.proc.stderr.fileno())

    def wait_for(self, text: str) -> None:
        self.output.wait_for(text)

    def game_on(self, board: FakeBoard, *players: str) -> None:
        """The board plugged in and ticking, the players joined and SUPER pressed: each
        press and release stamped as it happens on the board's clock, with its T."""
        board.wait_connected(timeout_s=10)
        board.hello()
        board.tick()
        for button in (*players, "SUPER"):
            board.edges_now(("D", button, 200), ("U", button, 100))
        self.wait_for(f"game on: {', '.join(players)}")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=10)
        assert self.proc.stderr is not None
        self.log = self.output.text + self.proc.stderr.read().decode()
        return code


@pytest.fixture(autouse=True)
def no_daemon_outlives_its_test() -> Iterator[None]:
    """A test that fails midway leaves its daemon running, reading a board that is gone."""
    yield
    while Daemon.started:
        proc = Daemon.started.pop().proc
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_board_lines_through_the_daemon_to_the_ledger(tmp_path, capsys):
    with FakeBoard(tmp_path) as board:
        daemon = Daemon(tmp_path, board)
        daemon.game_on(board, "P1", "P2", "P4")
        board.wait_until_us(board.clock_us() + 100_000)  # no bounce of the last presses
        # P4 is first by 0.3 ms, but its line comes second: the board's stamps order them,
        # and the photo finish shows the board's exact margin.
        board.edges_now(("D", "P2", 1_000), ("D", "P4", 1_300))
        daemon.wait_for("P4 calls SET")
        sent = [board.read_line()]
        while sent[-1] != "L P4 blink":  # its turn: its LED blinks (read_line times out)
            sent.append(board.read_line())
        board.garbage(b"\xff\xfeNOT A LINE\n")
        board.garbage(b"U P7 100000000000000000000")
        board.edges_now(("U", "P2", 100), ("U", "P4", 100))
        board.edges_now(("D", "VALID", 200), ("U", "VALID", 100))
        daemon.wait_for("P4 SET! (+1)")
        daemon.wait_for("impossible time: 1e+14 s ahead")
        wait_in_store(daemon.store, lambda game: isinstance(game.inputs[-1], Verdict), "VALID")
        assert main(["state", "--store", str(daemon.store)]) == 0  # while the daemon writes
        live = json.loads(capsys.readouterr().out)
        assert daemon.stop() == 0
    assert "NOT A LINE" in daemon.log  # counted and logged, never fatal
    assert "U P7 100000000000000000000" in daemon.log
    assert "ms late" not in daemon.log

    assert main(["state", "--store", str(daemon.store)]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state == live
    assert [p["id"] for p in state["players"]] == [1, 2, 4]
    assert [p["points"] for p in state["players"]] == [0, 0, 1]
    assert state["bank"] == 2
    assert state["calls"] == [
        {
            "callers": [4],
            "presses": [[4, 0.0], [2, 0.3]],
            "verdicts": ["valid"],
            "super": False,
            "seen": None,
        }
    ]


def test_a_verdict_stamped_in_time_beats_the_timeout_however_late_its_line_comes(tmp_path):
    """Issue 7's stall: the table's VALID is stamped inside the caller's time but reaches
    the daemon after the deadline, first because the daemon is stopped, then because the
    board's lines are held up (for less than the second that makes it stalled)."""
    with FakeBoard(tmp_path) as board:
        daemon = Daemon(tmp_path, board, "[rules]\nplayers = 2\npointout_s = 0.4\n")
        daemon.game_on(board, "P1", "P2")
        board.wait_until_us(board.clock_us() + 100_000)  # no bounce of the last press
        called_us = board.edges_now(("D", "P2", 0))
        daemon.wait_for("P2 calls SET")
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            board.wait_until_us(called_us + 100_000)
            board.edges_now(("U", "P2", 0))
            board.wait_until_us(called_us + 200_000)
            board.edges_now(("D", "VALID", 0))
            board.wait_until_us(called_us + 250_000)
            board.edges_now(("U", "VALID", 0))
            board.wait_until_us(called_us + 700_000)  # well past the deadline
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
        daemon.wait_for("P2 SET! (+1)")

        board.wait_until_us(board.clock_us() + 100_000)
        called_us = board.edges_now(("D", "P1", 0))
        daemon.wait_for("P1 calls SET")
        board.stop_ticking()
        board.wait_until_us(called_us + 600_000)
        # Sent now, stamped when they happened: P1 let go, VALID pressed and released.
        board.edges_now(("U", "P1", 450_000), ("D", "VALID", 400_000), ("U", "VALID", 350_000))
        board.tick()
        daemon.wait_for("P1 SET! (+1)")
        assert daemon.stop() == 0
    assert "too late" not in daemon.log
    assert "ms late" not in daemon.log
    assert "stalled" not in daemon.log


def test_an_unplugged_board_is_waited_for_and_an_older_one_plays_in_its_place(tmp_path):
    with FakeBoard(tmp_path) as board:
        daemon = Daemon(tmp_path, board)
        board.wait_connected(timeout_s=10)
        board.hello()
        board.tick()
        board.edges_now(("D", "P3", 0))
        daemon.wait_for("P3 joins the game")
        board.edges_now(("D", "UNDO", 0))
        board.unplug()
        daemon.wait_for("unplugged")
        board.plug()
        board.wait_connected(timeout_s=10)
        # A board with an older firmware, without T lines: its lines alone, with the
        # keyboard's rules. Its clock starts again.
        board.hello()
        now = board.clock_us()
        board.send(f"U P3 {now}", f"D P1 {now + 100}")
        daemon.wait_for("P1 joins the game")
        assert daemon.stop() == 0
    assert "UNDO" not in daemon.log.partition("unplugged")[2]  # the lost UNDO undid nothing
    assert "stalled" not in daemon.log


def test_bad_lines_neither_deafen_the_board_nor_hold_its_timers_back(tmp_path, capsys):
    """Issue 16's three attacks on the running daemon, while the board ticks: three lines
    far ahead in one write with the firmware's T, three far behind, and a ratchet of ten
    lines each under a second ahead. Then a race 0.3 ms apart is named right, and a 2 s
    point-out runs out on time."""
    with FakeBoard(tmp_path) as board:
        daemon = Daemon(tmp_path, board, "[rules]\nplayers = 2\npointout_s = 2\n")
        daemon.game_on(board, "P1", "P2")
        board.wait_until_us(board.clock_us() + 1_100_000)  # its clock learned
        with board.lock:
            board.send(*(f"D P1 {10**12 + k}" for k in range(3)), f"T {board.clock_us()}")
            board.send("D P1 5", "D P1 6", "D P1 7", f"T {board.clock_us()}")
        for k in range(1, 11):
            board.send(f"U P7 {board.clock_us() + k * 900_000}")
            board.wait_until_us(board.clock_us() + 100_000)
        pressed_us = board.edges_now(("D", "P2", 1_000), ("D", "P1", 1_300)) - 1_300
        daemon.wait_for("P1 calls SET")
        daemon.wait_for("too late")
        late_s = (board.clock_us() - pressed_us) / 1e6 - 2
        daemon.wait_for("15 more lines with impossible times")
        assert main(["state", "--store", str(daemon.store)]) == 0
        state = json.loads(capsys.readouterr().out)
        assert daemon.stop() == 0
    assert state["calls"][0]["presses"] == [[1, 0.0], [2, 0.3]]
    # The T lines come every 100 ms: the time-up is decided at the first after the deadline,
    # shown within 0.2 s at rest; on two cores shared at a load of 8 the daemon's process
    # showed it 0.6 s after. The bound is for a time-up held back by the ratchet's lines,
    # 0.9 s apart; how fast it is shown is the latency benchmark's.
    assert late_s < 1.0, f"the point-out ran out {late_s:.3f} s after its deadline"
    assert "ms late" not in daemon.log
    assert "held down" not in daemon.log
