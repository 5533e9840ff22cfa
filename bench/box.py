"""What the benchmarks share: the whole box on this machine, its hardware played from outside.

    bench/drive.py (another process)  --pipe-->  FakeRequest -> GpioButtons -> Inputs
        -> App.run(), the real main loop -> arbiter -> session -> ledger (on the disk)
        -> window (SDL's dummy driver), LEDs and beeper (gpiozero's MockFactory)

- The buttons, `source` "gpio": `referee.inputs.gpio.GpioButtons` as on a Pi, reading a
  fake line request (tests/fake_gpio.py) whose events another process writes, stamped
  with CLOCK_MONOTONIC as the kernel stamps them: the main loop waits on the pipe as it
  waits on the request. Or "serial": `referee.inputs.serial_board.SerialBoard` on a
  pseudo-terminal whose other end that process plays the button board on.
- That process (bench/drive.py) plays the outside world to a plan: the edges, in any
  order, and the stalls: SIGSTOP of the box's process, or a thread of the box holding the
  GIL (the staller, here) for as long as asked.
- `Box` opens the real App with a window and runs App.run() in the main thread, while a
  benchmark's thread sends plans. It watches the loop by wrapping the App's own calls:
  `step` (after it, the engine's state holds what was decided), the window's `show`, the
  request's reads (the order a naive referee would take the presses in) and the beeper's
  pin (when a note starts). With `mic`, the box listens as with a USB microphone: the
  real capture (its reader thread and 30 s ring, referee/audio/capture.py) and the clips'
  writer (a WAV of every call beside the store, off the loop: its thread takes each window
  from the ring, its cutter, a process of its own forked as `referee run` forks it, before
  the box's first thread, finds the onsets and writes the files) on
  tests/fake_capture.py's RealTimeCard, a card at 48 kHz on the monotonic clock that
  makes its samples too (its cost is counted in: an upper bound on a real card's). The
  drawing load (LOADS) is one of:
    idle    the App as it is: it draws when the picture changes and sleeps otherwise;
    render  the loop draws as often as the box lets itself: at every frame its pacing
            allows (60 a second, the settings' most, and App's DRAW_SHARE), a new frame,
            the whole View rendered on the window's surface on top of the App's own
            drawing: the main thread as busy as frames can make it. (A loop made to never
            sleep at all, as this load was until the box paced slow frames too, is one
            the kernel stops for 50 ms of every second at SCHED_FIFO: no box reaches it.)
"""

import json
import os
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

# Before pygame is imported: no screen and no sound card are needed.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.pop("NOTIFY_SOCKET", None)  # no systemd watchdog in a benchmark

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/fake_gpio.py

import pygame  # noqa: E402
from gpiozero import Device  # noqa: E402
from gpiozero.pins.mock import MockFactory, MockPWMPin  # noqa: E402

from referee.audio.capture import Capture  # noqa: E402
from referee.audio.cutter_process import CutterProcess  # noqa: E402
from referee.cli import SWITCH_INTERVAL_S  # noqa: E402
from referee.config import default_config  # noqa: E402
from referee.daemon import app as app_module  # noqa: E402
from referee.daemon.app import App, RunOptions  # noqa: E402
from referee.daemon.realtime import run_first  # noqa: E402
from referee.inbox import Quit  # noqa: E402
from referee.inputs import gpio  # noqa: E402
from referee.inputs.board_stream import BoardStream  # noqa: E402
from referee.outputs.display import render  # noqa: E402
from referee.rules import Phase  # noqa: E402
from referee.store.store import Stored  # noqa: E402
from referee.view import View  # noqa: E402
from tests.fake_capture import RealTimeCard  # noqa: E402
from tests.fake_gpio import FakeRequest  # noqa: E402

sys.setswitchinterval(SWITCH_INTERVAL_S)  # as `referee run` does

LOADS = ("idle", "render")
MS = 1_000_000
BUZZERS = [f"P{n}" for n in range(1, 9)]
TAP_NS = 5 * MS  # how long a button is held: a tap


# Notified whenever the box has changed (a step that changed the game, a frame drawn, a
# note): a benchmark's thread waits on it for what it expects, rather than looking again
# and again (which would take the GIL from the main loop it measures). Not on every pass:
# a thread woken 800 times a second trades the GIL with the loop so often that CPython
# never lets a third thread, the sound's, ask for it (someone else took it within each
# switch interval), and the beeps under `render` waited up to 250 ms for it.
changed = threading.Condition()


def notify() -> None:
    with changed:
        changed.notify_all()


def wait_until(predicate: Callable[[], object], what: str, timeout_s: float = 10.0) -> None:
    with changed:
        if not changed.wait_for(predicate, timeout_s):
            raise RuntimeError(f"{what} did not come in {timeout_s:g} s")


class BeeperPin(MockPWMPin):
    """The beeper's pin: when each note started (MockPin keeps only the duty cycle)."""

    notes: list[tuple[int, float]]

    def _set_frequency(self, value: float | None) -> None:
        super()._set_frequency(value)
        if value is not None:
            self.notes.append((time.monotonic_ns(), value))  # list.append is thread-safe
            notify()


class Staller:
    """A thread of the box that holds the GIL when asked: one C call that never lets go."""

    def __init__(self) -> None:
        self._r, self.fd = os.pipe()
        self._modulus = 3**2_000 + 1  # about 3 kbit: a squaring takes some 20 µs, holds come near
        # As long as the modulus from the first squaring on: 3's first 14 were nearly free.
        self._base = self._modulus // 7
        self._per_bit_ns = self._calibrate()
        self._thread = threading.Thread(target=self._serve, name="staller", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Its thread ended, once the driver (which holds the pipe too) has: the next box
        forks its cutter with no other thread running."""
        os.close(self.fd)
        self._thread.join()

    def _calibrate(self) -> float:
        # Doubled up to 20 ms, no further: it holds the GIL too, and a fixed 2,000 bits
        # held it 2.8 s here, longer than the microphone's 1 s buffer (a false overrun).
        bits = 1
        while True:
            started = time.perf_counter_ns()
            pow(self._base, (1 << bits) - 1, self._modulus)
            took = time.perf_counter_ns() - started
            if took >= 20 * MS:
                return took / bits
            bits *= 2

    def hold(self, ms: float) -> None:
        bits = max(1, round(ms * MS / self._per_bit_ns))
        pow(self._base, (1 << bits) - 1, self._modulus)  # one C call: the GIL is held throughout

    def _serve(self) -> None:
        with os.fdopen(self._r) as asks:
            for line in asks:
                self.hold(float(line))


def listening(audio: object) -> tuple[Capture, None]:
    """devices.open_microphone's part on a machine with no sound card: the fake one."""
    capture = Capture(RealTimeCard())
    capture.start()
    return capture, None


class Box:
    """The real App on fake hardware, its loop watched (see the module's docstring)."""

    def __init__(
        self,
        store_dir: Path,
        *,
        load: str,
        source: str = "gpio",
        players: int = 8,
        mic: bool = False,
        camera: bool = False,
    ) -> None:
        if load not in LOADS:
            raise ValueError(f"load {load!r}: one of {', '.join(LOADS)}")
        # First, as `referee run` forks it (early.fork_cutter): no thread of this box or
        # of the one before runs yet (Box.run ends them), or this raises ThreadsRunning.
        cutter = CutterProcess.forked() if mic else None
        BeeperPin.notes = []
        Device.pin_factory = MockFactory(pin_class=BeeperPin)
        self.reads: list[tuple[int, str]] = []  # (read at, button pressed): raw order
        config = default_config()
        config = replace(config, game=replace(config.game, players=players))
        if load == "render":
            config = replace(config, display=replace(config.display, fps=60))
        self.feed: CameraFeed | None = None
        if camera:
            self.feed = CameraFeed(store_dir / "frames")
            config = replace(config, camera=replace(config.camera, source=str(self.feed.folder)))
        if source == "gpio":
            kind, fd = "gpio", self._fake_request(config.pins)
        else:
            fd, board = os.openpty()
            tty.setraw(board)
            kind = f"serial:{os.ttyname(board)}"
            self._watch_board_lines()
        options = RunOptions(config, store_dir / "referee.db", input=kind, display="window")
        app_module.open_microphone = listening if mic else lambda audio: (None, None)  # type: ignore[assignment]
        self.app = app = App(options, cutter=cutter)
        assert (app.microphone is not None) == mic
        assert app.window is not None
        self.window = app.window
        self.steps = 0
        self.step_now = 0  # the clock's reading the step running now was given
        self.saved: list[tuple[int, Stored]] = []  # (on the disk at, input): the ledger's
        self._watch_ledger()
        self.after_step: Callable[[int], None] = lambda now_ns: None
        self._started = threading.Event()
        self.staller = Staller()
        self.priority = ""  # what realtime.run_first said, once the loop runs
        offsets = {b: int(p.removeprefix("GPIO")) for b, p in config.pins.items()}
        self._driver = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "drive.py"), source, str(fd),
             str(self.staller.fd), str(os.getpid()), json.dumps(offsets)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            pass_fds=(fd, self.staller.fd),
        )  # fmt: skip
        step, show = app.step, self.window.show

        def stepped(now_ns: int) -> list:
            self.step_now = now_ns
            before = app.session.state
            outcomes = step(now_ns)
            self.steps += 1
            self.after_step(now_ns)
            if outcomes or app.session.state is not before:
                notify()
            return outcomes

        def shown(view: View) -> bool:
            self._started.set()  # the loop runs: the driver may begin
            if load == "render":
                render(pygame.display.get_surface(), view)  # drawn, not flipped: load
            drawn = show(view)
            if drawn:
                notify()
            return drawn or load == "render"  # a frame drawn: the App paces the next

        app.step = stepped  # type: ignore[method-assign]
        self.window.show = shown  # type: ignore[method-assign]
        if load == "render":
            timeout = app._timeout

            def next_frame(now_ns: int, view: View) -> float | None:
                # Every frame a new one: due as soon as the pacing allows, or sooner.
                frame_s = max(0, app._next_frame_ns - now_ns) / 1e9
                wait = timeout(now_ns, view)
                return frame_s if wait is None else min(frame_s, wait)

            app._timeout = next_frame  # type: ignore[method-assign]

    def _watch_ledger(self) -> None:
        """Note when each input is on the disk: its transaction committed (fsync)."""
        store = self.app.store
        append = store._append

        def appending(game_id: int, batch: Sequence[Stored]) -> None:
            append(game_id, batch)
            now = time.monotonic_ns()
            self.saved += [(now, stored) for stored in batch]
            notify()

        store._append = appending  # type: ignore[method-assign]

    def _fake_request(self, pins: dict[str, str]) -> int:
        """The line request the box will open, made now (fake) so that the driver can
        write into it; returns its feed's descriptor."""
        button_at = {int(p.removeprefix("GPIO")): b for b, p in pins.items()}
        made = FakeRequest(list(button_at))
        read = made.read_edge_events

        def reading(max_events: int | None = None) -> list:
            events = read(max_events)
            now = time.monotonic_ns()
            falls = [e for e in events if e.event_type is e.Type.FALLING_EDGE]
            self.reads += [(now, button_at[e.line_offset]) for e in falls]
            return events

        def request(chip: Path, offsets: Sequence[int]) -> FakeRequest:
            made.offsets = list(offsets)
            return made

        made.read_edge_events = reading  # type: ignore[method-assign]
        gpio.find_chip = lambda: gpio.DEV / "gpiochip0"  # type: ignore[assignment]
        gpio.request_buttons = request  # type: ignore[assignment]
        return made.feed.fd

    def _watch_board_lines(self) -> None:
        """Note each D line as the source takes it: the order a naive referee goes by."""
        take = BoardStream.take

        def taking(stream: BoardStream, raw: bytes, line: object, received_ns: int) -> list:
            if raw.startswith(b"D "):
                self.reads.append((received_ns, raw.split()[1].decode()))
            return take(stream, raw, line, received_ns)  # type: ignore[arg-type]

        BoardStream.take = taking  # type: ignore[method-assign]

    @property
    def driver_priority(self) -> str:
        """How the driver, playing the kernel, is scheduled (once it has answered a plan)."""
        if os.sched_getscheduler(self._driver.pid) == os.SCHED_FIFO:
            return "SCHED_FIFO 50, as the kernel's GPIO interrupt thread"
        return "normal priority (SCHED_FIFO refused): its own delays count as the box's"

    @property
    def beeper_notes(self) -> list[tuple[int, float]]:
        return BeeperPin.notes

    def plan(self, actions: list[list]) -> int:
        """Have the driver play these actions (bench/drive.py); return when it is done,
        with the time the plan began on CLOCK_MONOTONIC."""
        assert self._driver.stdin is not None and self._driver.stdout is not None
        self._driver.stdin.write(json.dumps({"at": actions}) + "\n")
        self._driver.stdin.flush()
        return int(json.loads(self._driver.stdout.readline())["t0"])

    def run(self, drive: Callable[[], None]) -> None:
        """App.run() here, in the main thread, while `drive` sends plans from another."""
        errors: list[BaseException] = []

        def driver() -> None:
            try:
                self._started.wait()
                drive()
            except BaseException as err:
                errors.append(err)
            finally:
                self.app.inbox.put(Quit("benchmark done"))

        thread = threading.Thread(target=driver, name="bench-driver", daemon=True)
        thread.start()
        if self.feed is not None:
            self.feed.start()
        # As `referee run` does, after every other thread of the box has started.
        self.priority = run_first(0, self.app.speaker.thread_id)
        try:
            self.app.run()  # closes the App (inputs, screen, store) when it returns
        finally:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))  # the next box's turn
            if self.feed is not None:
                self.feed.stop()
            thread.join(timeout=5)
            assert self._driver.stdin is not None
            self._driver.stdin.close()
            self._driver.wait(5)
            self.staller.close()
            Device.pin_factory.close()
            Device.pin_factory = None
        if errors:
            raise errors[0]
        if thread.is_alive():
            raise RuntimeError("the main loop stopped before the benchmark was done")


class CameraFeed:
    """A folder camera whose table changes every FRAME_S: two rendered tables of 12 cards
    (tools/vision/render.py, 1280 x 960 JPEGs, made once in another process, so that the
    box's own process never imports OpenCV), shown in turn as the newest file, so the
    camera's process reads every one, as it reads a real camera's moving table."""

    FRAME_S = 0.5

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()
        made = folder.parent / "tables"
        made.mkdir()
        subprocess.run(
            [sys.executable, "-c", _RENDER, str(made)], check=True, cwd=ROOT, timeout=120
        )
        self.tables = [(made / name).read_bytes() for name in ("a.jpg", "b.jpg")]
        self.shown = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._show, name="bench-camera", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _show(self) -> None:
        while not self._stop.wait(self.FRAME_S):
            name = self.folder / f"table-{self.shown:06d}.jpg"
            part = name.with_suffix(".part")  # not an image's name: never read half written
            part.write_bytes(self.tables[self.shown % 2])
            part.rename(name)
            if self.shown:
                (self.folder / f"table-{self.shown - 1:06d}.jpg").unlink()
            self.shown += 1


_RENDER = """
import sys
from pathlib import Path
import cv2, numpy as np
from referee.vision.card import all_faces
from tools.vision.render import render_table
rng = np.random.default_rng(32)
for name in ("a.jpg", "b.jpg"):
    faces = [all_faces()[i] for i in rng.choice(81, 12, replace=False)]
    table = render_table(faces, rng, size=(1280, 960))
    cv2.imwrite(str(Path(sys.argv[1]) / name), table.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
"""


def tap(button: str, at_ns: int = 0) -> list[list]:
    """A plan's actions: the button pressed at_ns from now and released a tap later."""
    up = at_ns + TAP_NS
    return [[at_ns, "edge", button, at_ns, True], [up, "edge", button, up, False]]


def start_game(box: Box) -> None:
    """Every buzzer joins, SUPER starts the game: through the box, as a table does."""
    for n, button in enumerate([*BUZZERS, "SUPER"]):
        box.plan(tap(button, n * 3 * TAP_NS))
    wait_until(lambda: box.app.session.state.phase is Phase.OPEN, "the game's start")
