"""referee run in a real X window (Xvfb), played with real key presses (xdotool).

SDL's dummy driver cannot show what matters here: under X11 SDL's wait does not return
by itself, so only the real thing proves that SIGTERM still stops an idle window.
Skipped where Xvfb, xdotool or xwininfo are missing (.ci/run installs them).
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .processes import Output
from .wakeups import task_wakeups

TOOLS = ("Xvfb", "xdotool", "xwininfo")
pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in TOOLS), reason="needs Xvfb, xdotool and xwininfo"
)


@pytest.fixture
def x_display(request):
    """A private X server, on a display number no other process here is using; its screen
    1280x720, or the size the test gives (indirect parametrization)."""
    size = getattr(request, "param", "1280x720")
    for number in range(100 + os.getpid() % 500, 700):
        if Path(f"/tmp/.X11-unix/X{number}").exists():
            continue
        display = f":{number}"
        server = subprocess.Popen(
            ["Xvfb", display, "-screen", "0", f"{size}x24", "-nolisten", "tcp"],
            stderr=subprocess.DEVNULL,
        )
        env = dict(os.environ, DISPLAY=display)
        end = time.monotonic() + 10
        # Ready once it answers; gone if another server took the number first.
        while server.poll() is None and time.monotonic() < end:
            if subprocess.run(["xwininfo", "-root"], env=env, capture_output=True).returncode == 0:
                yield display
                server.terminate()
                server.wait(timeout=10)
                return
        server.kill()
        server.wait(timeout=10)
    pytest.fail("no X display number was free")


class Daemon:
    def __init__(self, display: str, tmp_path: Path) -> None:
        self.env = dict(os.environ, DISPLAY=display, SDL_AUDIODRIVER="dummy")
        self.env.pop("SDL_VIDEODRIVER")  # the tests' dummy driver: here, the real X11 one
        config = tmp_path / "referee.toml"
        # xdotool types faster than anyone presses a buzzer twice, and keys do not bounce.
        config.write_text("[buttons]\ndebounce_ms = 1.0\n")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "run", "--input", "keyboard",
             "--config", str(config), "--store", str(tmp_path / "referee.db")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=self.env,
        )  # fmt: skip
        assert self.proc.stderr is not None
        self.output = Output(self.proc.stderr.fileno())

    def wait_for(self, text: str) -> None:
        self.output.wait_for(text)

    def x(self, *command: str) -> str:
        return subprocess.run(command, env=self.env, capture_output=True, text=True).stdout

    def assert_asleep(self, settle_s: float = 5, watch_s: float = 0.5) -> None:
        """Once it has drawn and played what it had to, the main loop wakes no more."""
        end = time.monotonic() + settle_s
        while True:
            before = task_wakeups(self.proc.pid, self.proc.pid)
            time.sleep(watch_s)  # watching a process: there is nothing to wait on
            woke = task_wakeups(self.proc.pid, self.proc.pid) - before
            if woke == 0:
                return
            assert time.monotonic() < end, f"the idle loop woke {woke} times in {watch_s} s"

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.x("xdotool", "key", key)


def test_a_game_in_an_x_window_and_sigterm_while_idle(x_display, tmp_path):
    daemon = Daemon(x_display, tmp_path)
    daemon.wait_for("display window (x11)")
    # xdotool cannot search windows without a window manager; xwininfo can list them.
    tree = daemon.x("xwininfo", "-root", "-tree").splitlines()
    window = next(line.split()[0] for line in tree if '"referee":' in line)
    daemon.x("xdotool", "windowfocus", "--sync", window)
    daemon.keys("1", "2", "s")
    daemon.wait_for("game on: P1, P2")
    daemon.keys("2")
    daemon.wait_for("P2 calls SET")
    daemon.keys("v")
    daemon.wait_for("P2 SET! (+1)")
    # The window's surface is shown through shared memory: no OpenGL, so no Mesa (and its
    # LLVM, 90 MB) in the process.
    maps = Path(f"/proc/{daemon.proc.pid}/maps").read_text()
    assert "_dri.so" not in maps and "libGL" not in maps
    # Idle, nothing due: asleep on the X server's connection, never woken to look for keys.
    daemon.assert_asleep()
    daemon.keys("1")
    daemon.wait_for("P1 calls SET")  # and a key wakes it
    daemon.proc.send_signal(signal.SIGTERM)  # idle: asleep on its sources
    assert daemon.proc.wait(timeout=5) == 0


@pytest.mark.parametrize("x_display", ["800x480"], indirect=True)
def test_the_window_fits_a_small_desktop(x_display, tmp_path):
    """[display] width = 0 opened 1280x720 on an 800x480 screen, its corners off it."""
    daemon = Daemon(x_display, tmp_path)
    daemon.wait_for("display window (x11)")
    tree = daemon.x("xwininfo", "-root", "-tree").splitlines()
    window = next(line.split()[0] for line in tree if '"referee":' in line)
    info = dict(
        line.strip().split(": ", 1)
        for line in daemon.x("xwininfo", "-id", window).splitlines()
        if ": " in line
    )
    left, top = int(info["Absolute upper-left X"]), int(info["Absolute upper-left Y"])
    width, height = int(info["Width"]), int(info["Height"])
    assert left >= 0 and top >= 0 and left + width <= 800 and top + height <= 480, info
    assert width / height == pytest.approx(1280 / 720, rel=0.01)  # its shape kept
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.proc.wait(timeout=5) == 0
