"""`referee run`: the one place that wires inputs, arbiter, engine, store and outputs.

One thread, this one, owns the engine, the store and the screen (DESIGN.md). Input
threads only put edges in the inbox; signals only put a Quit there. The loop sleeps
until the next edge or the next thing due: a decision's settle window, a timer, a
frame, the watchdog, or a retry of the ledger. At idle it wakes only for the watchdog
and, with a window, to take the window's events (every 10 ms when the window is the
keyboard).
"""

import contextlib
import logging
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from . import rescue
from .arbiter import Arbiter
from .config import Config
from .devices import KEY_POLL_S, StartError, WindowKeys, open_input, open_lights, open_speaker
from .edges import Edge, Inbox, InboxItem, Quit, SourceStatus, signals_to
from .errors import UnsavedInputs
from .outputs import captions
from .outputs.lights import led_modes
from .outputs.sound import next_pip_ns, pips_due, sounds_for
from .outputs.terminal import TerminalScreen
from .rules import NS_PER_S, Effect
from .session import Session
from .store import Store
from .systemd import Notifier
from .view import Notice, Severity, View

if TYPE_CHECKING:  # pygame is imported only when a window is opened
    from .outputs.display import Window

log = logging.getLogger(__name__)

MESSAGES_KEPT = 6
LEDGER_RETRY_NS = 5_000_000_000
WINDOW_POLL_S = 0.5
PI_MODEL = Path("/proc/device-tree/model")


class Screen(Protocol):
    def show(self, view: View) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class RunOptions:
    config: Config
    store_path: Path
    input: str = "auto"  # auto | gpio | keyboard | serial:DEVICE
    display: str = "auto"  # auto | window | terminal | none


def is_raspberry_pi() -> bool:
    try:
        return "Raspberry Pi" in PI_MODEL.read_text(errors="replace")
    except OSError:
        return False


def pick_display(requested: str, environ: dict[str, str] | None = None) -> list[str]:
    """The displays to try, in order. `auto`: a window where there may be a screen (a
    desktop session, or a Pi, whose KMS screen SDL finds by itself), then the terminal
    where there is one, else none."""
    if requested != "auto":
        return [requested]
    env = os.environ if environ is None else environ
    desktop = env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")
    candidates = []
    if desktop or env.get("SDL_VIDEODRIVER") == "kmsdrm" or is_raspberry_pi():
        candidates.append("window")
    if sys.stdin.isatty() and sys.stdout.isatty():
        candidates.append("terminal")
    return [*candidates, "none"]


def pick_input(requested: str) -> str:
    if requested != "auto":
        return requested
    return "gpio" if is_raspberry_pi() else "keyboard"


class App:
    def __init__(
        self,
        options: RunOptions,
        *,
        clock: Callable[[], int] = time.monotonic_ns,
        stdin_fd: int | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        self.options = options
        self.clock = clock
        self.inbox = Inbox()
        self.messages: deque[str] = deque(maxlen=MESSAGES_KEPT)
        self.lost_sources: dict[str, str] = {}
        self.unsaved: UnsavedInputs | None = None  # at exit: where the waiting inputs went
        # Whatever opened is closed again if a later part cannot open (and by close()).
        with contextlib.ExitStack() as opened:
            self.notifier = Notifier()
            opened.callback(self.notifier.close)
            self.window: Window | None = None
            displays = pick_display(options.display)
            self.screen, self.display = self._open_screen(displays, stdout)
            if self.screen is not None:
                opened.callback(self.screen.close)
            self.source = open_input(
                pick_input(options.input), options.config, display=self.display, stdin_fd=stdin_fd
            )
            opened.callback(self.source.close)
            timing = options.config.buttons
            # The settle window covers at least how late this input can deliver an edge.
            settle_ns = max(timing.settle_ns, self.source.latency_ns)
            self.timing = replace(timing, settle_ns=settle_ns)
            self.arbiter = Arbiter(self.timing)
            self.arbiter.decide(self.clock())
            self.store = Store.open(options.store_path)
            opened.callback(self.store.close)
            self.session = Session(
                self.store,
                options.config.rules,
                tie_floor_ns=self.source.resolution_ns,
                now_ns=self.arbiter.horizon,
            )
            opened.callback(self._save_what_waits)
            self.lights = open_lights(options.config, self.source)
            if self.lights is not None:
                opened.callback(self.lights.close)
            desktop = self.display == "window"
            self.speaker = open_speaker(options.config, self.source, desktop=desktop)
            opened.callback(self.speaker.close)
            self._close = opened.pop_all()
        self._last_ping = self.clock()
        self._retry_at = 0
        self._shown: View | None = None
        self._next_frame_ns = 0

    def _open_screen(self, displays: list[str], stdout: TextIO | None) -> tuple[Screen | None, str]:
        """The first of the displays that opens, and its name."""
        display, *others = displays
        if display == "window":
            from .outputs.display import ScreenUnavailable, Window

            size = self.options.config.display
            try:
                self.window = Window(
                    self.inbox, size=(size.width, size.height) if size.width else None
                )
            except ScreenUnavailable as err:
                if not others:
                    raise StartError(str(err)) from None
                log.warning("%s: trying the %s instead", err, others[0])
                return self._open_screen(others, stdout)
            return self.window, display
        if display == "terminal":
            return TerminalScreen(sys.stdout if stdout is None else stdout), display
        if display == "none":
            return None, display
        raise StartError(f"unknown display {display!r}: use auto, window, terminal or none")

    # --- the loop --------------------------------------------------------------------------

    def run(self) -> int:
        with signals_to(self.inbox):
            for button in self.source.held_at_start():
                self.arbiter.held_at_start(button, self.clock())
            self.source.start(self.inbox)
            self.notifier.ready(f"{self.source.name}, game {self.session.ledger.game_id}")
            shown = f"window ({self.window.driver})" if self.window else self.display
            log.info("input %s, display %s, store %s", self.source.name, shown, self.store.path)
            try:
                return self._loop()
            finally:
                self.notifier.stopping()
                self.close()

    def _loop(self) -> int:
        while True:
            view = self.view()
            self.present(view)
            now = self.clock()
            for item in self._wait(self._timeout(now, view)):
                if isinstance(item, Quit):
                    log.info("stopping: %s", item.reason)
                    return 0
                self._take(item)
            self.step(self.clock())

    def _wait(self, timeout: float | None) -> list[InboxItem]:
        """Sleep on the inbox until an edge or the timeout. A window's events (its keys,
        its closing, its uncovering) wait in SDL's queue until they are taken: often when
        the window is the keyboard, now and then otherwise."""
        if self.window is None:
            return self.inbox.get(timeout)
        nap = KEY_POLL_S if isinstance(self.source, WindowKeys) else WINDOW_POLL_S
        items = self.inbox.get(nap if timeout is None else min(timeout, nap))
        self.window.take_events()
        return items + self.inbox.drain()

    def step(self, now_ns: int) -> list[Effect]:
        """Decide what is due by now, play it, and let the game's timers fire."""
        effects: list[Effect] = []
        decisions = self.arbiter.decide(now_ns)
        for decision in decisions:
            effects += self.session.play(decision)
        effects += self.session.tick(self.arbiter.horizon)
        for effect in effects:
            log.info("%s", effect.text)
            self.messages.append(effect.text)
        for sound in sounds_for(effects):
            self.speaker.play(sound)
        if self.session.ledger.trouble and (decisions or now_ns >= self._retry_at):
            if not decisions:  # else an input has just tried the disk
                self.session.ledger.flush()
            self._retry_at = now_ns + LEDGER_RETRY_NS
        interval = self.notifier.watchdog_interval_ns
        if interval and now_ns >= self._last_ping + interval:
            self.notifier.watchdog()
            self._last_ping = now_ns
        return effects

    def present(self, view: View) -> None:
        """Show the view: the screen, the lights, and the countdown's pips."""
        if self.screen is not None:
            self.screen.show(view)
            self._next_frame_ns = self.clock() + NS_PER_S // self.options.config.display.fps
        if self.lights is not None:
            self.lights.show(led_modes(view))
        for pip in pips_due(self._shown, view):
            self.speaker.play(pip)
        self._shown = view

    def _take(self, item: InboxItem) -> None:
        match item:
            case Edge():
                self.arbiter.take(item)
            case SourceStatus(source=name, text=text, ok=ok):
                if ok:
                    self.lost_sources.pop(name, None)
                else:
                    self.lost_sources[name] = text
                self.messages.append(text)

    def _timeout(self, now_ns: int, view: View) -> float | None:
        settle = self.timing.settle_ns
        times = [self.arbiter.next_wakeup_ns()]
        if (deadline := self.session.deadline_mono_ns) is not None:
            times.append(deadline + settle)
        if (pip := next_pip_ns(view)) is not None:
            times.append(self.session.mono_ns(pip) + settle)
        if self.screen is not None and (frame := captions.next_change_ns(view)) is not None:
            # No sooner than the settings' frame rate allows.
            times.append(max(self.session.mono_ns(frame) + settle, self._next_frame_ns))
        if self.notifier.watchdog_interval_ns:
            times.append(self._last_ping + self.notifier.watchdog_interval_ns)
        if self.session.ledger.trouble:
            times.append(self._retry_at)
        due = min((t for t in times if t is not None), default=None)
        return None if due is None else max(0, due - now_ns) / 1e9

    def view(self) -> View:
        return View(
            settings=self.session.settings,
            state=self.session.state,
            now_ns=self.session.game_ns(self.arbiter.horizon),
            messages=tuple(self.messages),
            notices=self.notices(),
            source=self.source.name,
        )

    def notices(self) -> tuple[Notice, ...]:
        notices = [Notice(text) for text in self.lost_sources.values()]
        notices += [Notice(f"{b} is held down: ignored until released") for b in self.arbiter.stuck]
        if trouble := self.session.ledger.trouble:
            notices.append(Notice(trouble, Severity.ERROR))
        return tuple(notices)

    def close(self) -> None:
        self._close.close()

    def _save_what_waits(self) -> None:
        ledger = self.session.ledger
        if not ledger.flush():
            log.error("%d inputs could not be saved: %s", ledger.pending, ledger.trouble)
            self.unsaved = rescue.keep(ledger)
