"""One referee per store: a second writer is refused, naming the first; readers never are."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.cli import main
from referee.errors import StoreInUse
from referee.rules import Settings
from referee.store.store import Store

HOLD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from referee.store.store import Store
    with Store.open(Path(sys.argv[1])) as store:
        store.append(store.new_game(store_settings(), lobby=True), Press(3, 0))
        print("holding", flush=True)
        sys.stdin.read()  # until the test closes our stdin
    """
).replace("store_settings()", "Settings()")


@pytest.fixture
def holder(tmp_path):
    """Another process with the store open to write, as a running daemon has it: a
    script named `referee` run by Python, as the installed command is."""
    path = tmp_path / "referee.db"
    script = tmp_path / "referee"
    script.write_text("from referee.rules import Press, Settings\n" + HOLD)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(path)],
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


def test_another_program_holding_the_lock_is_named_for_what_it_is(tmp_path):
    path = tmp_path / "referee.db"
    path.touch()
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout.readline() == "holding\n"
        name = Path(f"/proc/{other.pid}/comm").read_text().strip()
        with pytest.raises(StoreInUse) as caught:
            Store.open(path)
    finally:
        other.stdin.close()
        other.wait(timeout=10)
        other.stdout.close()
    assert str(caught.value) == (
        f"{path}: in use by another program, {name} (PID {other.pid}):"
        " stop it first, or use another store"
    )


# Not a referee: any program that takes a lock on the file (flock(1), a backup tool...).
OTHER = """
import fcntl, sys
with open(sys.argv[1]) as held:
    fcntl.flock(held, fcntl.LOCK_EX)
    print("holding", flush=True)
    sys.stdin.read()
"""
