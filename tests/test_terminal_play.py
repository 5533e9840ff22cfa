"""A whole game in a terminal, end to end: keys in, the screen out, killed and resumed."""

import json
import os
import signal
import subprocess
import sys

from referee.cli import main
from referee.store.mark import marked
from referee.store.paths import pin_path
from referee.store.pin import read_pin

from .processes import OnTerminal, wait_in_file, wait_in_store

# The test types faster than anyone could press a buzzer twice; a keyboard has no contact
# bounce, so a short debounce window keeps its quick repeats of a key from being bounce.
CONFIG = "[rules]\npointout_s = 120.0\n[buttons]\ndebounce_ms = 1.0\n"


class Terminal(OnTerminal):
    """`referee run` on a pseudo-terminal, the way a person at a keyboard sees it."""

    def __init__(self, tmp_path, store, more=""):
        config = tmp_path / "referee.toml"
        config.write_text(CONFIG + more)
        env = dict(os.environ, HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"))
        env.pop("DISPLAY", None)
        super().__init__(
            [sys.executable, "-m", "referee", "run", "--input", "keyboard", "--display",
             "terminal", "--config", str(config), "--store", str(store)],
            env,
        )  # fmt: skip

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        os.close(self.master)

    def quit(self) -> int:
        self.press("q")
        code = self.proc.wait(timeout=10)
        os.close(self.master)
        return code


def test_a_game_played_in_the_terminal_survives_being_killed(tmp_path, capsys):
    store = tmp_path / "referee.db"
    term = Terminal(tmp_path, store)
    term.wait_for("PRESS YOUR BUZZER TO JOIN")
    term.press("1")
    term.wait_for("P1 ●")
    term.press("2")
    term.wait_for("P2 ▲")
    term.press("s")
    term.wait_for("FIND A SET")
    term.press("1")
    frame = term.wait_for("P1: SHOW YOUR SET")
    assert "time to show it: 1" in frame  # the point-out timer counts down from 120 s
    term.press("v")
    term.wait_for("bank 2")
    term.press("3")  # P3 did not join: the screen says why nothing happened
    term.wait_for("ignored: P3 did not join this game")
    term.press("2")
    term.wait_for("P2: SHOW YOUR SET")
    # A power cut in the middle of a call, once the call is on the disk: the cut may lose
    # an input shown a moment before it (docs/design.md, "The store"). P2's call itself:
    # P1's, still on the disk while the writer is behind, is a call too.
    wait_in_store(
        store,
        lambda game: (call := game.state().pending) is not None and call.callers == (2,),
        "P2's call",
    )
    term.kill()

    term = Terminal(tmp_path, store)
    frame = term.wait_for("P2: SHOW YOUR SET")  # resumed mid-call
    wait_in_file(
        tmp_path / "referee.log",
        "resumed after a power cut or crash: the last input kept is press 2",
    )
    assert "P1 ●   1" in frame
    term.press("x")
    frame = term.wait_for("LOCKED")
    assert "P2 ▲   0 [LOCKED]" in frame
    assert term.quit() == 0

    assert main(["state", "--store", str(store)]) == 0
    state = json.loads(capsys.readouterr().out)
    assert [p["points"] for p in state["players"]] == [1, 0]
    assert [p["locked"] for p in state["players"]] == [False, True]
    assert state["bank"] == 2 and state["phase"] == "open"
    assert [c["verdicts"] for c in state["calls"]] == [["valid"], ["invalid"]]


def test_sigterm_ends_the_game_loop_cleanly(tmp_path):
    term = Terminal(tmp_path, tmp_path / "referee.db")
    term.wait_for("PRESS YOUR BUZZER TO JOIN")
    term.proc.send_signal(signal.SIGTERM)
    assert term.proc.wait(timeout=10) == 0
    os.close(term.master)


def test_sigusr1_logs_a_status_line_and_sighup_and_sigquit_end_cleanly(tmp_path):
    """SIGHUP (the terminal gone, or `kill -HUP`) and SIGQUIT end the box as SIGTERM does,
    leaving the LEDs dark and saving what waits for the disk; SIGUSR1 asks for a status."""
    for stop in (signal.SIGHUP, signal.SIGQUIT):
        term = Terminal(tmp_path, tmp_path / "referee.db")
        term.wait_for("PRESS YOUR BUZZER TO JOIN")
        term.proc.send_signal(signal.SIGUSR1)
        log = tmp_path / "referee.log"
        wait_in_file(log, "status: game 1, phase lobby")
        term.proc.send_signal(stop)
        assert term.proc.wait(timeout=10) == 0
        assert f"stopping: {stop.name}" in log.read_text()
        os.close(term.master)


def test_the_store_deleted_under_the_daemon_keeps_every_input_and_its_lock(tmp_path, capsys):
    """Deleted while the game is played: a second daemon on that path is refused as by the
    lock, the first says so on the screen, writes the store anew and plays on."""
    store = tmp_path / "referee.db"
    term = Terminal(tmp_path, store)
    term.wait_for("PRESS YOUR BUZZER TO JOIN")
    term.press("1")
    term.wait_for("P1 ●")
    term.proc.send_signal(signal.SIGSTOP)  # deleted before it can notice: as if at once
    store.unlink()
    second = subprocess.run(
        [sys.executable, "-m", "referee", "run", "--store", str(store), "--display", "none",
         "--input", "serial:/no-such-board"],
        capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    term.proc.send_signal(signal.SIGCONT)
    assert (second.returncode, second.stderr) == (
        2,
        f"{store}: in use by another referee (PID {term.proc.pid}):"
        " stop it first, or use another store\n",
    )
    term.wait_for("store file deleted: written anew")
    assert "written anew, every game in it" in wait_in_file(tmp_path / "referee.log", "anew")
    term.press("2")
    term.wait_for("P2 ▲")
    assert term.quit() == 0
    assert main(["state", "--store", str(store)]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["players"]] == [1, 2]


def test_the_lobby_says_where_the_page_is_served_and_its_pin(tmp_path):
    """`run` without --web: the page is another process's (referee-web.service), shown
    while that one marks it served, at the address it serves at; nothing while none does
    (an address where nothing answers is no way to join); with listen off, no address and
    no PIN."""
    store = tmp_path / "referee.db"
    with marked(store, "10.1.2.3:8080"):  # the page's service, as the daemon sees it
        term = Terminal(tmp_path, store, '[web]\nlisten = "10.1.2.3:8080"\n')
        frame = term.wait_for("the page on the phones: http://10.1.2.3:8080/ · PIN ")
        assert f"PIN {read_pin(pin_path(store))}" in frame  # made by the daemon, the first time
        assert term.quit() == 0
    term = Terminal(tmp_path, store, '[web]\nlisten = "10.1.2.3:8080"\n')  # none serves it
    frame = term.wait_for("PRESS YOUR BUZZER TO JOIN")
    assert "the page" not in frame and "PIN" not in frame
    assert "no page is served for this store" in wait_in_file(tmp_path / "referee.log", "no page")
    assert term.quit() == 0
    term = Terminal(tmp_path, store, '[web]\nlisten = "off"\n')
    frame = term.wait_for("PRESS YOUR BUZZER TO JOIN")
    assert "PIN" not in frame
    assert term.quit() == 0
