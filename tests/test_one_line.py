"""What a saboteur tries: each gets one line naming what is wrong, a non-zero exit status,
never a traceback and never a hang. Run as a user runs them: `python -m referee ...`."""

import os
import sqlite3
import subprocess
import sys
import threading
from contextlib import contextmanager, suppress

import pytest

from referee.cli import main
from referee.config import ConfigError, load_config
from referee.rules import Settings
from referee.store.store import Store

TIMEOUT_S = 20  # a hang fails the test instead of the suite


def referee(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )


def one_line(done: subprocess.CompletedProcess[str], *, code: int = 2) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert done.returncode == code, done.stderr
    return lines[0]


@contextmanager
def unblocked_after(fifo, seconds: float = TIMEOUT_S):
    """Should the code wait on the FIFO, a writer opens it after a while, so that the test
    fails instead of hanging."""
    done = threading.Event()
    waited = []

    def writer() -> None:
        if done.wait(seconds):
            return
        waited.append(True)
        while not done.wait(0.1):  # each time the code opens it again
            with suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
    assert not waited, f"waited {seconds} s on the FIFO"


def settings(tmp_path, text: str):
    path = tmp_path / "referee.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[store]\npath = "~nosuchuser/x.db"\n',
            'referee.toml:2: [store] path: "~nosuchuser": no such user on this computer;'
            ' got "~nosuchuser/x.db"',
        ),
        (
            '[store]\npath = "x\\u0000.db"\n',
            'referee.toml:2: [store] path: must be the ledger\'s file, or "" for the default'
            ' place, with no NUL character; got "x\\u0000.db"',
        ),
        (
            '[serial]\ndevice = "/dev/tty\\u0000"\n',
            "referee.toml:2: [serial] device: must be the board's serial device, with no NUL"
            ' character; got "/dev/tty\\u0000"',
        ),
        ("x = " + "[" * 5000, "referee.toml: not TOML: arrays or tables nested too deeply"),
        (
            "[rules]\nplayers = " + "1" * 5000 + "\n",
            "referee.toml:2: not TOML this box reads: a number of more than 4300 digits",
        ),
    ],
    ids=["no-such-user", "nul-store", "nul-device", "nested", "5000-digits"],
)
def test_a_bad_settings_file_is_one_line(tmp_path, capsys, text, message):
    path = settings(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{tmp_path}/{message}"
    assert main(["config", "--config", str(path)]) == 2
    assert capsys.readouterr().err == f"{tmp_path}/{message}\n"


def test_run_with_a_nul_in_the_store_path_is_one_line(tmp_path):
    path = settings(tmp_path, '[store]\npath = "x\\u0000.db"\n')
    done = referee("run", "--config", str(path), "--display", "none", "--input", "serial:/no")
    assert one_line(done).startswith(f"{path}:2: [store] path: must be the ledger's file")


def test_a_settings_file_that_is_a_fifo(tmp_path, capsys):
    fifo = tmp_path / "referee.toml"
    os.mkfifo(fifo)
    with unblocked_after(fifo):
        assert main(["config", "--config", str(fifo)]) == 2
    assert capsys.readouterr().err == (
        f"{fifo}: cannot read the settings: not a regular file (a FIFO)\n"
    )


def test_a_store_that_is_a_fifo(tmp_path, capsys):
    fifo = tmp_path / "referee.db"
    os.mkfifo(fifo)
    expected = f"{fifo}: not a regular file (a FIFO), so not a referee store"
    with unblocked_after(fifo):
        assert main(["state", "--store", str(fifo)]) == 2
    assert capsys.readouterr().err == expected + "\n"
    done = referee("run", "--store", str(fifo), "--display", "none", "--input", "serial:/no")
    assert one_line(done) == expected


def test_a_store_that_is_a_directory(tmp_path, capsys):
    assert main(["state", "--store", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"{tmp_path}: not a regular file (a directory), so not a referee store\n"
    )


@pytest.mark.parametrize(
    ("column", "why"),
    [
        ('{"players": 1e999}', "players: must be a whole number of seats"),
        ('{"dealer_plays": "false"}', "dealer_plays: must be true or false"),
    ],
)
def test_a_store_with_damaged_settings_is_one_line(tmp_path, capsys, column, why):
    store = tmp_path / "referee.db"
    with Store.open(store) as opened:
        opened.new_game(Settings(), lobby=True)
    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE games SET settings = ?", (column,))
    conn.close()
    expected = f"{store}: game 1: bad settings {column!r}: {why}"
    assert main(["state", "--store", str(store)]) == 2
    assert capsys.readouterr().err.startswith(expected)
    done = referee("run", "--store", str(store), "--display", "none", "--input", "serial:/no")
    # The log says the board is missing first: the game is read once the devices are open.
    assert "Traceback" not in done.stderr and done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1].startswith(expected)


NO_SCREEN = ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER", "XDG_RUNTIME_DIR")


@pytest.mark.parametrize(
    ("display", "said"),
    [
        ("terminal", "--input keyboard reads keys from a terminal: standard input is not a"),
        ("window", "--display window: no desktop here (neither DISPLAY nor WAYLAND_DISPLAY"),
        (
            "kms:/dev/dri/card99",
            "--display kms:/dev/dri/card99: no such card /dev/dri/card99: use --display terminal",
        ),
    ],
)
def test_a_display_that_cannot_open_is_one_line_before_anything_is_written(tmp_path, display, said):
    """Nothing on standard output (no terminal's escape codes), no log lines, no store."""
    env = {k: v for k, v in os.environ.items() if k not in NO_SCREEN} | {"HOME": str(tmp_path)}
    check_nothing_written(tmp_path, env, display, said)


@pytest.mark.parametrize(
    ("desktop", "said"),
    [
        ({"DISPLAY": ":97"}, "--display window: DISPLAY=:97: no X server answers there"),
        (
            {"WAYLAND_DISPLAY": "wayland-9"},
            "--display window: WAYLAND_DISPLAY=wayland-9: no compositor there",
        ),
    ],
)
def test_a_desktop_named_but_not_there_is_one_line_before_anything_is_written(
    tmp_path, desktop, said
):
    """Not SDL's way: trying every driver it has, libwayland's complaint on the way, and
    the store made before it fails."""
    env = {k: v for k, v in os.environ.items() if k not in NO_SCREEN} | {"HOME": str(tmp_path)}
    check_nothing_written(tmp_path, env | desktop, "window", said)


def check_nothing_written(tmp_path, env, display, said):
    store = tmp_path / "store.db"
    args = ("run", "--input", "keyboard", "--display", display, "--store", str(store))
    done = referee(*args, env=env)
    assert one_line(done).startswith(said)
    assert done.stdout == ""
    assert not store.exists()


@pytest.mark.parametrize(
    ("display", "said"),
    [
        ("none+terminal", "--display none+terminal: none shows nothing: it joins no other"),
        ("auto+terminal", "--display auto+terminal: auto picks one display: it joins no other"),
        ("window+window", "--display window+window: one window at most: its keys and events"),
        ("terminal+terminal", "--display terminal+terminal: terminal twice: each display once"),
        ("kms+terminal+kms", "--display kms+terminal+kms: kms twice: each display once at most"),
        (
            "terminal+kms:/dev/dri/card99",
            "--display kms:/dev/dri/card99: no such card /dev/dri/card99: use --display terminal",
        ),
        ("terminal+window", "--display window: no desktop here (neither DISPLAY nor"),
    ],
)
def test_displays_joined_that_cannot_open_are_one_line_before_anything_is_written(
    tmp_path, display, said
):
    """`--display A+B`: each part is refused as it would be alone, and what cannot be
    joined is said; nothing on the terminal, no store."""
    env = {k: v for k, v in os.environ.items() if k not in NO_SCREEN} | {"HOME": str(tmp_path)}
    check_nothing_written(tmp_path, env, display, said)


def test_a_window_that_will_not_open_beside_the_terminal_is_one_line(tmp_path):
    """SDL fails once asked: the window opens before the terminal, which is never taken."""
    store = tmp_path / "store.db"
    Store.open(store).close()  # its first migration is logged: not this test's business
    env = {k: v for k, v in os.environ.items() if k not in NO_SCREEN} | {
        "HOME": str(tmp_path),
        "SDL_VIDEODRIVER": "no-such-driver",
    }
    args = ("run", "--input", "keyboard", "--display", "terminal+window", "--store", str(store))
    done = referee(*args, env=env)
    assert one_line(done).startswith("--display window: no screen to open (SDL: ")
    assert done.stdout == ""
