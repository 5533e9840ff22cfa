"""One referee per store: a second writer is refused, naming the first; readers never are."""

import json
import subprocess
import sys
import textwrap

import pytest

from referee.cli import main
from referee.errors import StoreInUse
from referee.rules import Settings
from referee.store import Store

HOLD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from referee.store import Store
    with Store.open(Path(sys.argv[1])) as store:
        store.append(store.new_game(store_settings(), lobby=True), Press(3, 0))
        print("holding", flush=True)
        sys.stdin.read()  # until the test closes our stdin
    """
).replace("store_settings()", "Settings()")


@pytest.fixture
def holder(tmp_path):
    """Another process with the store open to write, as a running daemon has it."""
    path = tmp_path / "referee.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from referee.rules import Press, Settings\n" + HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "holding\n"
    yield path, proc.pid
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=10)


def test_a_second_writer_is_refused_naming_the_first(holder):
    path, pid = holder
    with pytest.raises(StoreInUse) as caught:
        Store.open(path)
    assert caught.value.pid == pid
    assert (
        str(caught.value)
        == f"{path}: in use by another referee (PID {pid}): stop it first, or use another store"
    )


def test_readers_are_never_refused(holder, capsys):
    path, _ = holder
    assert main(["state", "--store", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["players"][0]["id"] == 3


def test_the_lock_goes_with_the_store(tmp_path):
    path = tmp_path / "referee.db"
    first = Store.open(path)
    with pytest.raises(StoreInUse):
        Store.open(path)
    first.close()
    with Store.open(path) as again:
        again.new_game(Settings(), lobby=True)


def test_a_second_daemon_exits_with_one_line(holder):
    path, pid = holder
    done = subprocess.run(
        [sys.executable, "-m", "referee", "run", "--store", str(path), "--display", "none",
         "--input", "serial:/dev/no-such-board"],
        capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr
        == f"{path}: in use by another referee (PID {pid}): stop it first, or use another store\n"
    )
