"""What the benchmarks share: the box's GPIO path without a Pi, and the machine's facts.

    gpiozero pins (TimedPin) -> GpioButtons -> Inbox -> App.run(), the real main loop

- `TimedPin` is gpiozero's MockPin whose edges carry a chosen time, as lgpio's carry the
  kernel's (tests/test_gpio.py has the same class). `LGPIOFactory` is gpiozero's
  MockFactory passing for the lgpio factory, so that GpioButtons treats those times as
  kernel edge times, as on a Pi: resolution 100 us, latency lgpio's hold plus one GIL
  switch interval, and the settle window sized from it.
- `Rig` opens the real App on those pins, with a window on SDL's dummy video driver, and
  runs App.run() in the main thread while the benchmark's driver presses buttons from a
  second thread (the one gpiozero's callbacks come from on a Pi). It watches the loop by
  wrapping three of the App's own calls: `step` (after it, the engine's state holds what
  was decided), the window's `show` (a frame drawn and flipped) and the inbox's `put`
  (the order callbacks arrived in). The drawing load (LOADS) is one of:
    idle    the App as it is: it draws when the picture changes and sleeps otherwise;
    render  the loop never sleeps and renders the whole View on the window's surface on
            every pass, on top of the App's own frames (which it flips when the picture
            changes): the main thread always busy drawing, competing for the GIL;
    flip    the same, but every pass is flipped to the screen too. pygame's flip lets go
            of the GIL and takes it straight back, and CPython then never asks the main
            thread to hand it over (a waiting thread only asks when no other switch
            happened in its 5 ms wait), so other threads can wait for seconds. The real
            loop sleeps between frames (it draws at most `fps` a second), which ends
            such a wait; this load shows what happens when it does not.
- `Buttons` presses and releases the buzzers from the driver's thread. A press is held
  past the debounce window, and a button is pressed again only a debounce window after
  its release, so every press is one clean press to the arbiter.
"""

import math
import os
import platform
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

# Before pygame is imported: no screen and no sound card are needed.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.pop("NOTIFY_SOCKET", None)  # no systemd watchdog in a benchmark

import pygame
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from referee.app import App, RunOptions
from referee.cli import SWITCH_INTERVAL_S
from referee.config import default_config
from referee.edges import Edge, InboxItem, Quit
from referee.outputs.display import render
from referee.rules import Input, State, new_game
from referee.view import View

sys.setswitchinterval(SWITCH_INTERVAL_S)  # as `referee run` does (fairness.py can override)

LOADS = ("idle", "render", "flip")
MS = 1_000_000
MARGIN_NS = 2 * MS  # past the debounce window, so that the arbiter sees clean presses


class TimedPin(MockPWMPin):
    """A mock pin whose edges carry a chosen time (PWM: the beeper's pin needs it)."""

    def edge_at(self, t_ns: int, *, high: bool) -> None:
        self._state = high
        self._last_change = t_ns / 1_000_000_000  # lgpio hands on seconds, as a float
        if self._when_changed is not None:
            self._call_when_changed()


class LGPIOFactory(MockFactory):
    """Mock pins behind a factory that GpioButtons takes for gpiozero's lgpio one."""


LGPIOFactory.__module__ = "gpiozero.pins.lgpio"


class Rig:
    """The real App on simulated lgpio pins, its loop watched (see the module's docstring)."""

    def __init__(
        self, store_dir: Path, *, load: str, players: int = 8, settle_ms: float | None = None
    ) -> None:
        if load not in LOADS:
            raise ValueError(f"load {load!r}: one of {', '.join(LOADS)}")
        Device.pin_factory = LGPIOFactory(pin_class=TimedPin)
        config = default_config()
        config = replace(config, rules=replace(config.rules, players=players))
        if settle_ms is not None:  # [buttons] settle_ms, as a settings file would set it
            buttons = replace(config.buttons, settle_ns=round(settle_ms * MS))
            config = replace(config, buttons=buttons)
        options = RunOptions(config, store_dir / "referee.db", input="gpio", display="window")
        self.app = app = App(options)
        assert app.window is not None
        self.window = app.window
        self.steps = 0
        self.frame_ns: list[int] = []  # how long each of the App's frames took
        self.write_ns: list[int] = []  # how long each ledger write took (fsync included)
        self.puts: list[tuple[Edge, int]] = []  # every edge, with when it reached the inbox
        self.after_step: Callable[[int], None] = lambda now_ns: None
        self.after_frame: Callable[[View], None] = lambda view: None
        self._started = threading.Event()
        step, show, put = app.step, self.window.show, app.inbox.put

        def stepped(now_ns: int) -> list:
            effects = step(now_ns)
            self.steps += 1
            self.after_step(now_ns)
            return effects

        def shown(view: View) -> None:
            self._started.set()  # the loop runs: the driver may begin
            if load == "render":
                render(pygame.display.get_surface(), view)  # drawn, not flipped: load
            elif load == "flip":
                self.window._last_key = None  # draw and flip it even if it did not change
            frames, started = self.window.frames, time.monotonic_ns()
            show(view)
            if self.window.frames > frames:
                self.frame_ns.append(time.monotonic_ns() - started)  # render and flip
                self.after_frame(view)

        def putting(item: InboxItem) -> None:
            put(item)
            if isinstance(item, Edge):
                self.puts.append((item, time.monotonic_ns()))  # list.append is thread-safe

        ledger = app.session.ledger
        append = ledger.append

        def appending(inp: Input) -> bool:
            started = time.monotonic_ns()
            saved = append(inp)
            self.write_ns.append(time.monotonic_ns() - started)
            return saved

        ledger.append = appending  # type: ignore[method-assign]
        app.step = stepped  # type: ignore[method-assign]
        self.window.show = shown  # type: ignore[method-assign]
        app.inbox.put = putting  # type: ignore[method-assign]
        if load != "idle":
            app._timeout = lambda now_ns, view: 0.0  # type: ignore[method-assign]

    def open_game(self) -> State:
        """Every seat playing, no call: the state each trial starts from. Call it before
        run(), or from the main loop."""
        state = new_game(self.app.session.settings, lobby=False)
        self.app.session.state = state
        return state

    def run(self, drive: Callable[[], None]) -> None:
        """App.run() here, in the main thread, while `drive` presses buttons from another."""
        errors: list[BaseException] = []

        def driver() -> None:
            try:
                self._started.wait()
                drive()
            except BaseException as err:
                errors.append(err)
            finally:
                self.app.inbox.put(Quit("benchmark done"))

        # A daemon thread: if the loop stops first (Ctrl-C, a failure), it is left behind.
        thread = threading.Thread(target=driver, name="gpio-callbacks", daemon=True)
        thread.start()
        try:
            self.app.run()  # closes the App (inputs, screen, store) when it returns
        finally:
            thread.join(timeout=5)
            Device.pin_factory.close()
            Device.pin_factory = None
        if errors:
            raise errors[0]
        if thread.is_alive():
            raise RuntimeError("the main loop stopped before the benchmark was done")


class Buttons:
    """The buzzers, pressed from the calling thread as gpiozero's callbacks would be."""

    def __init__(self, app: App, names: list[str], rng: random.Random) -> None:
        factory = Device.pin_factory
        self.pins = {b: factory.pin(app.options.config.pins[b]) for b in names}
        self.debounce_ns = app.timing.debounce_ns
        self.held_ns = self.debounce_ns + MARGIN_NS  # how long a press lasts
        self.rng = rng
        self.ready_at = dict.fromkeys(names, 0)
        self.releases: list[tuple[int, str]] = []

    def pick(self, n: int) -> list[str]:
        """n buttons that may be pressed now, in random order; waits for them if need be."""
        while True:
            now = time.monotonic_ns()
            self._release_due(now)
            ready = [b for b, t in self.ready_at.items() if t <= now]
            if len(ready) >= n:
                return self.rng.sample(ready, n)
            sleep_until(sorted(self.ready_at.values())[n - 1])

    def down(self, button: str, t_ns: int) -> None:
        """Its callback runs now, with the edge stamped t_ns; the release comes later."""
        self.pins[button].edge_at(t_ns, high=False)
        up = t_ns + self.held_ns
        self.releases.append((up, button))
        self.ready_at[button] = up + self.debounce_ns + MARGIN_NS

    def _release_due(self, now: int) -> None:
        # A release is delivered when the button is next wanted, stamped when it happened:
        # a late release changes no decision, and it always comes before the next press.
        due = sorted(r for r in self.releases if r[0] <= now)
        for up, button in due:
            self.pins[button].edge_at(up, high=True)
            self.releases.remove((up, button))


def sleep_until(t_ns: int) -> None:
    time.sleep(max(0, t_ns - time.monotonic_ns()) / 1e9)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile, nearest rank (p99 of 1000 values is the 990th smallest)."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * p / 100)) - 1]


def store_dir(parent: str | None = None) -> tempfile.TemporaryDirectory:
    # On the disk by default, not in memory: the ledger's fsync is part of every decision,
    # as on a Pi.
    return tempfile.TemporaryDirectory(prefix="referee-bench-", dir=parent or "/var/tmp")


def machine() -> str:
    model = "unknown CPU"
    with Path("/proc/cpuinfo").open() as cpuinfo:
        for line in cpuinfo:
            if line.startswith(("model name", "Model")):
                model = line.split(":", 1)[1].strip()
                break
    os_name = platform.platform(terse=True)
    with Path("/etc/os-release").open() as release:
        for line in release:
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    return (
        f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"pygame-ce {pygame.version.ver} (SDL {'.'.join(map(str, pygame.get_sdl_version()))}), "
        f"{os_name}, kernel {platform.release()}"
    )


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min)"


def header(title: str) -> None:
    print(title)
    print(f"machine: {machine()}")
    print(f"at start: {load()}; GIL switch interval {sys.getswitchinterval() * 1000:g} ms")
