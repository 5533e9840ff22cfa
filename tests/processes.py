"""Reading what a child process writes (a pipe or a pseudo-terminal) until something shows."""

import contextlib
import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.outputs.terminal import CLEAR
from referee.store.reads import StoredGame
from referee.store.store import Store

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Output:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.text = ""

    def wait_until(self, found: Callable[[str], bool], what: str, timeout: float = 10) -> str:
        """Read until `found(all read so far)`; fail, showing what came, after `timeout`."""
        end = time.monotonic() + timeout
        while not found(self.text):
            if not select.select([self.fd], [], [], max(0, end - time.monotonic()))[0]:
                pytest.fail(f"{what} never came; the output was:\n{self.text[-3000:]}")
            try:
                chunk = os.read(self.fd, 65536).decode(errors="replace")
            except OSError:  # a pty whose process is gone
                chunk = ""
            if not chunk:
                pytest.fail(f"the process ended before {what}; its output was:\n{self.text}")
            self.text += chunk
        return self.text

    def wait_for(self, text: str, timeout: float = 10) -> str:
        return self.wait_until(lambda got: text in got, repr(text), timeout)


def wait_in_file(path: Path, text: str, timeout: float = 10) -> str:
    """Wait until a file another process writes (a log) holds `text`; a file has no
    readiness to wait on, so it is looked at every few milliseconds."""
    end = time.monotonic() + timeout
    while text not in (got := path.read_text() if path.exists() else ""):
        if time.monotonic() > end:
            pytest.fail(f"{text!r} never came in {path}; it holds:\n{got[-3000:]}")
        time.sleep(0.01)
    return got


def wait_until_open(pid: int, path: Path, timeout: float = 10) -> None:
    """Wait until the process has the file open: a moment of its start that a test can
    see from outside. Its open files give nothing to wait on, so they are looked at every
    millisecond."""
    end = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):  # a descriptor closed while looked at
            if any(fd.readlink() == path for fd in Path(f"/proc/{pid}/fd").iterdir()):
                return
        if time.monotonic() > end:
            pytest.fail(f"process {pid} never opened {path}")
        time.sleep(0.001)


def wait_in_store(
    path: Path, check: Callable[[StoredGame], bool], what: str, timeout: float = 10
) -> StoredGame:
    """Wait until the latest game of a store a daemon writes passes `check`, as a reader
    sees it: what the daemon shows may still be on its way to the disk, written behind its
    loop (docs/design.md, "The store"). Looked at every few milliseconds, as a file is."""
    end = time.monotonic() + timeout
    while True:
        with Store.open_readonly(path) as store:
            game = store.latest_game()
        if game is not None and check(game):
            return game
        if time.monotonic() > end:
            pytest.fail(f"{what} never came in {path}; its game is {game}")
        time.sleep(0.01)


class OnTerminal:
    """A program on a pseudo-terminal, seen the way a person at its keyboard sees it."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        master, slave = os.openpty()
        self.proc = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.master = master
        self.output = Output(master)

    def press(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    @staticmethod
    def frame(output: str) -> str:
        """The latest picture in what the program wrote, without its escape sequences."""
        return ANSI.sub("", output.rsplit(CLEAR, 1)[-1])

    def wait_for(self, text: str) -> str:
        """Read the screen until `text` appears in its latest frame."""
        self.output.wait_until(lambda got: text in self.frame(got), f"{text!r} on the screen")
        return self.frame(self.output.text)


def namespaces() -> str | None:
    """Why a private tmpfs cannot be mounted here (unshare -Urm: a user and mount namespace
    of the test's own, no root needed where they are allowed), or None when it can."""
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    tried = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
        capture_output=True,
        text=True,
        check=False,
    )
    if tried.returncode != 0:
        return f"cannot mount a tmpfs in a user namespace: {tried.stderr.strip()}"
    return None
