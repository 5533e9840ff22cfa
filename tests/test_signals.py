"""Every signal the daemon handles is safe from its first instruction: one that comes
while `referee run` starts (here, while it replays a long game) is taken once its loop
runs, as it would be then, and never ends it the default way (a real process)."""

import os
import signal
import subprocess
import sys

import pytest

from referee.rules import Settings
from referee.store.store import Store

from .processes import Output, wait_until_open

LONG_GAME = 20_000  # lobby presses: their replay keeps the daemon starting for a while


@pytest.fixture(scope="module")
def long_game(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("long") / "referee.db"
    with Store.open(path) as store:
        game = store.new_game(Settings(), lobby=True)
        # One transaction for them all: one an input would take a while.
        with store._writing() as conn:
            conn.executemany(
                "INSERT INTO inputs (game_id, t_ns, words) VALUES (?, ?, ?)",
                ((game, n * 1_000_000, f"press {n % 2 + 1}") for n in range(LONG_GAME)),
            )
    return path.read_bytes()


@pytest.mark.parametrize(
    "sent", [signal.SIGUSR1, signal.SIGTERM, signal.SIGINT], ids=lambda sent: sent.name
)
def test_a_signal_while_the_daemon_starts_is_taken_once_it_runs(tmp_path, long_game, sent):
    store = tmp_path / "referee.db"
    store.write_bytes(long_game)
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "DISPLAY")}
    daemon = subprocess.Popen(
        [sys.executable, "-m", "referee", "run", "--store", str(store), "--display", "none",
         "--input", "serial:/no-such-board"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        wait_until_open(daemon.pid, store)  # it reads the game, and replays it next
        daemon.send_signal(sent)
        output = Output(daemon.stderr.fileno())
        if sent == signal.SIGUSR1:
            output.wait_for("status: game 1, phase lobby", timeout=20)
            daemon.send_signal(signal.SIGTERM)
            sent = signal.SIGTERM
        assert daemon.wait(timeout=20) == 0, output.text
        log = output.text + daemon.stderr.read().decode()
    finally:
        daemon.kill()
        daemon.wait()
        daemon.stderr.close()
    assert f"stopping: {sent.name}" in log and "Traceback" not in log, log
