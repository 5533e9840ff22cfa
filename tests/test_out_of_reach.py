"""A command started where its user cannot look (issue 29): `cd /root && sudo -u referee
referee pin`, as docs/web.md tells a judge, looks for ./referee.toml in a folder the user
cannot read. What a command looks for without being told (the settings' search, the
default store, the clips beside it) is skipped with one line, or refused in one line:
never a traceback.

Root reads every folder whatever its mode, so the command runs as a user who cannot:
under root, a child drops to nobody's ids once it stands in the folder; otherwise the
folder is the test user's own, and its mode stops its owner as it stops anyone.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.config import load_config

NOBODY = 65534  # the kernel's overflow id: no passwd entry needed to become it
CANNOT_DROP = 77

# Stands in the folder, makes it unreadable, becomes a user who cannot read it, runs
# `referee`. What the command imports later is imported first: the interpreter's own
# folder may be out of that user's reach as well (a pyenv under /root).
CHILD = f"""
import importlib, os, sys
folder, preload, argv = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
os.chdir(folder)
for name in ["locale", "referee.cli", *preload]:
    importlib.import_module(name)
os.chmod(folder, 0)
if os.geteuid() == 0:
    try:
        os.setgroups([])
        os.setgid({NOBODY})
        os.setuid({NOBODY})
    except PermissionError:
        sys.exit({CANNOT_DROP})
sys.exit(sys.modules["referee.cli"].main(argv))
"""


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder the unprivileged user can reach (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="referee-reach-"))
    folder.chmod(0o755)
    yield folder
    for inside in (folder, *folder.rglob("*")):
        if inside.is_dir() and not inside.is_symlink():
            inside.chmod(0o755)
    shutil.rmtree(folder)


def mine(path: Path) -> Path:
    """A folder the command's user may write."""
    path.mkdir(parents=True)
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    return path


def referee_in(
    folder: Path, *argv: str, env: dict[str, str], preload: str = ""
) -> subprocess.CompletedProcess[str]:
    folder.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), preload, *argv],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    folder.chmod(0o755)  # for the next command, and the clean-up
    if done.returncode == CANNOT_DROP:
        pytest.skip("root here cannot become another user (a namespace without setuid)")
    return done


def test_the_pin_a_judge_asks_for_from_roots_home(reachable):
    """The line docs/web.md gives a judge, run in a folder like /root."""
    locked = reachable / "root"
    env = {
        "HOME": str(reachable / "home"),
        "XDG_CONFIG_HOME": str(reachable / "config"),
        "XDG_DATA_HOME": str(mine(reachable / "data")),
    }
    done = referee_in(locked, "pin", env=env, preload="referee.store.pin")
    assert "Traceback" not in done.stderr
    assert done.stderr == f"{locked}/referee.toml: skipped: cannot look at it (Permission denied)\n"
    assert done.returncode == 0 and done.stdout.strip().isdigit()


@pytest.mark.parametrize(
    ("argv", "preload"),
    [
        (["pin"], "referee.store.pin"),
        (["state"], ""),
        (["config"], ""),
        (["history"], "csv referee.history.export referee.history.book referee.history.stats"),
        (["clips"], "wave referee.audio.clips"),
        (["clips", "--delete", "--all"], "wave referee.audio.clips"),
    ],
)
def test_nothing_a_command_looks_for_unasked_ends_in_a_traceback(reachable, argv, preload):
    """The user's own folders out of reach too (sudo keeping root's HOME): the settings
    searched for, the default store and its clips are each said once, in one line."""
    locked = reachable / "root"
    env = {
        "HOME": str(locked),
        "XDG_CONFIG_HOME": str(locked / "config"),
        "XDG_DATA_HOME": str(locked / "data"),
    }
    done = referee_in(locked, *argv, env=env, preload=preload)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 2), done
    said = done.stderr.splitlines()
    assert f"{locked}/referee.toml: skipped: cannot look at it (Permission denied)" in said
    assert f"{locked}/config/referee/referee.toml: skipped: cannot look at it" in done.stderr
    assert all(str(locked) in line for line in said), said  # each line says where


def test_a_current_folder_deleted_has_no_settings_file_to_find(tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("referee.config.loading.SYSTEM_PATH", tmp_path / "etc" / "referee.toml")
    assert load_config(None).path is None
