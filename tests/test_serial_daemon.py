"""End to end: a button board's lines, through the running daemon, to `referee state`."""

import json
import os
import signal
import subprocess
import sys

from referee.cli import main

from .fake_board import FakeBoard
from .processes import Output


class Daemon:
    """`referee run` reading a board, as under systemd: no screen, the log on stderr."""

    def __init__(self, tmp_path, board: FakeBoard) -> None:
        config = tmp_path / "referee.toml"
        config.write_text("[rules]\nplayers = 4\n")
        self.store = tmp_path / "referee.db"
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "DISPLAY")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "run", "--input", f"serial:{board.path}",
             "--display", "none", "--config", str(config), "--store", str(self.store)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=env,
        )  # fmt: skip
        assert self.proc.stderr is not None
        self.output = Output(self.proc.stderr.fileno())

    def wait_for(self, text: str) -> None:
        self.output.wait_for(text)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=10)
        assert self.proc.stderr is not None
        self.log = self.output.text + self.proc.stderr.read().decode()
        return code


def test_board_lines_through_the_daemon_to_the_ledger(tmp_path, capsys):
    with FakeBoard(tmp_path) as board:
        daemon = Daemon(tmp_path, board)
        board.wait_connected(timeout_s=10)
        board.hello()
        # The board's microseconds. Lines written together are stamped close together, as
        # a real board's are: it sends each line when its edge happens.
        t = 5_000_000
        for button in ("P1", "P2", "P4", "SUPER"):
            board.down(button, t)
            board.up(button, t + 100)
            t += 200
        daemon.wait_for("game on: P1, P2, P4")
        # P4 is first by 0.3 ms: the board's clock orders them, and the photo finish shows
        # the board's exact margin.
        t += 500_000
        board.send(f"D P4 {t}", f"D P2 {t + 300}")
        daemon.wait_for("P4 calls SET")
        sent = [board.read_line()]
        while sent[-1] != "L P4 blink":  # its turn: its LED blinks (read_line times out)
            sent.append(board.read_line())
        board.garbage(b"\xff\xfeNOT A LINE\n")
        board.send(f"U P2 {t + 90_000}", f"U P4 {t + 90_000}")
        board.down("VALID", t + 1_000_000)
        board.up("VALID", t + 1_100_000)
        daemon.wait_for("P4 SET! (+1)")
        assert main(["state", "--store", str(daemon.store)]) == 0  # while the daemon writes
        live = json.loads(capsys.readouterr().out)
        assert daemon.stop() == 0
    assert "NOT A LINE" in daemon.log  # counted and logged, never fatal
    assert "later than the settle window" not in daemon.log

    assert main(["state", "--store", str(daemon.store)]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state == live
    assert [p["id"] for p in state["players"]] == [1, 2, 4]
    assert [p["points"] for p in state["players"]] == [0, 0, 1]
    assert state["bank"] == 2
    assert state["calls"] == [
        {"callers": [4], "presses": [[4, 0.0], [2, 0.3]], "verdicts": ["valid"], "super": False}
    ]


def test_an_unplugged_board_is_waited_for_and_play_goes_on(tmp_path):
    with FakeBoard(tmp_path) as board:
        daemon = Daemon(tmp_path, board)
        board.wait_connected(timeout_s=10)
        board.hello()
        board.down("P3", 1_000)
        daemon.wait_for("P3 joins the game")
        board.unplug()
        daemon.wait_for("unplugged")
        board.plug()
        board.wait_connected(timeout_s=10)
        board.hello()  # the board restarted: its clock starts again
        board.up("P3", 50)
        board.down("P1", 100_000)
        daemon.wait_for("P1 joins the game")
        assert daemon.stop() == 0
