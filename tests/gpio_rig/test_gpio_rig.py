"""The buttons on a real kernel: gpio-sim lines, the GPIO character device, libgpiod v2.

Runs only inside the rig's guest (`make test-rig`), whose gpio-sim chip carries the label
of a Pi 4's GPIO controller, so the buttons are found and opened exactly as `referee run`
opens them on a Pi. Under emulation a sysfs write takes milliseconds: the order and the
stamps are exact, the latencies say nothing about a Pi. The printed tables show with
`pytest -rP`.
"""

import itertools
import os
import select
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.errors import GpioError
from referee.inputs.edges import Edge
from referee.inputs.gpio import IRQ_BOUND_NS, GpioButtons, find_chip
from tests.processes import Output

gpiosim_rig = pytest.importorskip("gpiosim_rig", reason="runs in the gpio-sim guest: make test-rig")
gpiod = pytest.importorskip("gpiod")

pytestmark = pytest.mark.rig

ROOT = Path(__file__).resolve().parents[2]
PI4_LABEL = "pinctrl-bcm2711"
# REPLAY's line is never driven: a pin with no button on it, which the pull-up holds up.
PINS = {
    "P1": "GPIO17",
    "P2": "GPIO27",
    "P3": "GPIO22",
    "P8": "GPIO13",
    "VALID": "GPIO16",
    "REPLAY": "GPIO0",
}
RESOLUTION_NS = 100_000
# tests/vm/gpiosim_rig.py: leave at least 1 ms between toggles of one line.
TOGGLE_GAP_S = 0.001


def line(button: str, pins: dict[str, str] = PINS) -> int:
    return int(pins[button].removeprefix("GPIO"))  # gpio-sim offsets are BCM numbers


@pytest.fixture(scope="module")
def chip() -> Iterator[object]:
    with gpiosim_rig.SimChip(num_lines=28, label=PI4_LABEL) as sim:
        yield sim


@pytest.fixture
def buttons(chip) -> Iterator[GpioButtons]:
    source = GpioButtons(PINS, RESOLUTION_NS)
    yield source
    source.close()


def drive(chip, button: str, level: int) -> tuple[int, int]:
    """Set a button's line from outside; return the window the kernel's stamp must lie in."""
    before = time.monotonic_ns()
    chip.set_input(line(button), level)
    return before, time.monotonic_ns()


def collect(source: GpioButtons, count: int, timeout_s: float = 5.0) -> list[Edge]:
    """Read as the main loop does: wait on the request's descriptor, read it empty."""
    edges: list[Edge] = []
    end = time.monotonic() + timeout_s
    while len(edges) < count and (left := end - time.monotonic()) > 0:
        select.select([source.fileno()], [], [], left)
        edges += [item for item in source.read() if isinstance(item, Edge)]
    return edges


def test_the_chip_is_found_by_its_label_and_every_line_is_pulled_up(chip, buttons):
    assert find_chip() == Path(chip.path)
    assert buttons.name == "GPIO (kernel edge times)"
    assert buttons.held_at_start() == ()  # REPLAY's empty pin too: no phantom press
    with gpiod.Chip(chip.path) as opened:
        for button in ("P1", "REPLAY"):
            info = opened.get_line_info(line(button))
            assert info.consumer == "referee" and info.bias == gpiod.line.Bias.PULL_UP


def test_presses_are_stamped_by_the_kernel_in_the_order_they_happened(chip, buttons):
    order = ["P3", "P1", "P8", "VALID", "P2"]  # neither pin order nor map order
    windows = [drive(chip, button, 0) for button in order]
    presses = collect(buttons, len(order))
    windows += [drive(chip, button, 1) for button in order]
    releases = collect(buttons, len(order))
    assert [e.down for e in presses + releases] == [True] * 5 + [False] * 5
    assert [e.button for e in presses] == order
    for edge, (before, after) in zip(presses + releases, windows, strict=True):
        assert before <= edge.t_ns <= after, f"{edge} stamped outside its write"
    gaps_us = [(b.t_ns - a.t_ns) / 1e3 for a, b in itertools.pairwise(presses)]
    print("gaps between five presses (µs):", ", ".join(f"{g:.1f}" for g in gaps_us))


def test_presses_under_a_millisecond_apart_are_ordered_by_kernel_time(chip, buttons):
    # One shell writes both lines back to back: P2 (line 27) first, then P1 (line 17).
    script = f"echo pull-down > {chip.pull_path(27)}; echo pull-down > {chip.pull_path(17)}"
    before = time.monotonic_ns()
    subprocess.run(["sh", "-c", script], check=True)
    after = time.monotonic_ns()
    presses = collect(buttons, 2)
    chip.set_input(27, 1)
    chip.set_input(17, 1)
    collect(buttons, 2)
    assert [e.button for e in presses] == ["P2", "P1"]
    assert all(e.down and before <= e.t_ns <= after for e in presses)
    print(f"P1 stamped {(presses[1].t_ns - presses[0].t_ns) / 1e3:.1f} µs after P2")


def test_a_bounce_burst_arrives_as_edges_and_the_kernel_counts_what_it_merged(chip, buttons):
    """Toggles 1 ms apart: each is an edge, unless the interrupt's thread came late and
    merged some (the event then keeps the last stamp): the sequence numbers count those.
    Either way the burst starts with a press and ends up, each stamp in its write."""
    levels = [0, 1, 0, 1, 0, 1]
    windows = []
    for level in levels:
        windows.append(drive(chip, "P1", level))
        time.sleep(TOGGLE_GAP_S)
    merged = buttons.lost_edges
    edges = collect(buttons, len(levels), timeout_s=2)
    merged = buttons.lost_edges - merged
    print(f"{len(edges)} edges read, {merged} merged by the kernel")
    assert len(edges) + merged == len(levels)
    assert edges[0].down and not edges[-1].down
    assert all(any(before <= edge.t_ns <= after for before, after in windows) for edge in edges)


def stamp_to_reader(chip, buttons: GpioButtons, count: int) -> list[float]:
    """Milliseconds from each edge's stamp (the hard interrupt) to the moment a reader
    waiting on the request wakes with it: the interrupt thread's delay, and the reader's."""
    delays = []
    for n in range(count):
        writer = threading.Thread(target=chip.set_input, args=(line("P2"), n % 2))
        writer.start()
        select.select([buttons.fileno()], [], [], 5)
        woke = time.monotonic_ns()
        delays += [(woke - e.t_ns) / 1e6 for e in buttons.read() if isinstance(e, Edge)]
        writer.join()
    return sorted(delays)


def test_the_interrupt_threads_delay_is_measured(chip, buttons):
    """The watermark trusts that an edge is queued within IRQ_BOUND_NS of its stamp; an
    edge later than that is late data, decided again in its place. Measured idle and
    under a CPU hog on every core (on a Pi the interrupt thread runs at real-time
    priority, above the hogs; under emulation every thread is the host's)."""
    idle = stamp_to_reader(chip, buttons, 200)
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        busy = stamp_to_reader(chip, buttons, 200)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    for name, ms in (("idle", idle), (f"{len(hogs)} CPU hogs", busy)):
        print(
            f"stamp to reader awake, {len(ms)} edges, {name}: median "
            f"{statistics.median(ms):.3f} ms, p99 {ms[int(0.99 * len(ms)) - 1]:.3f} ms, "
            f"max {ms[-1]:.3f} ms (bound used: {IRQ_BOUND_NS / 1e6:g} ms)"
        )
    assert len(idle) == len(busy) == 200


def test_a_pin_another_program_holds_is_named_with_what_to_do(chip):
    settings = gpiod.LineSettings(direction=gpiod.line.Direction.INPUT)
    with (
        gpiod.request_lines(chip.path, consumer="other", config={5: settings}),
        pytest.raises(GpioError) as caught,
    ):
        GpioButtons({"P1": "GPIO17", "P5": "GPIO5"}, RESOLUTION_NS)
    print(caught.value)
    assert str(caught.value).startswith("GPIO5 (P5) is held by other: stop that program")
    GpioButtons({"P1": "GPIO17"}, RESOLUTION_NS).close()  # P1 was let go again


def test_a_user_without_access_to_the_chip_is_told_what_to_do(chip):
    code = (
        "from referee.errors import GpioError\n"
        "from referee.inputs.gpio import find_chip\n"
        "try:\n"
        "    find_chip()\n"
        "except GpioError as err:\n"
        "    print(err)\n"
    )
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    run = subprocess.run(
        [*nobody, sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    print(run.stdout, run.stderr)
    assert run.stdout.strip() == (
        f"permission denied on {chip.path}: add the user to the gpio group "
        "(sudo adduser $USER gpio), then log in again"
    )


# --- the daemon: `referee run` on the kernel's lines, stopped at the worst moments -------------


class Daemon:
    """`referee run --input gpio` on the rig's chip, with a ledger to read back."""

    def __init__(self, tmp: Path, **rules: object) -> None:
        from referee.config import load_config

        self.config_path = tmp / "referee.toml"
        rule_lines = "".join(f"{k} = {v}\n" for k, v in rules.items())
        self.config_path.write_text(
            f'[rules]\n{rule_lines}[leds]\ndriver = "none"\n[beeper]\npin = ""\n'
            '[sound]\noutput = "none"\n'
        )
        self.pins = load_config(self.config_path).pins
        self.store = tmp / "referee.db"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "referee", "run", "--config", str(self.config_path),
             "--store", str(self.store), "--input", "gpio", "--display", "none"],
            cwd=ROOT, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert self.process.stderr is not None
        self.log = Output(self.process.stderr.fileno())
        self.log.wait_for("input GPIO (kernel edge times)", timeout=60)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def go_on(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def state(self) -> dict:
        import json

        run = subprocess.run(
            [sys.executable, "-m", "referee", "state", "--store", str(self.store)],
            cwd=ROOT, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return json.loads(run.stdout)

    def wait_state(self, found, what: str, timeout_s: float = 30) -> dict:
        end = time.monotonic() + timeout_s
        while not found(state := self.state()):
            if time.monotonic() > end:
                pytest.fail(f"{what} never came; the state: {state}")
            time.sleep(0.2)  # the daemon is another process: its ledger is polled
        return state

    def close(self) -> None:
        self.go_on()
        self.process.terminate()
        assert self.process.wait(30) == 0


def tap(chip, daemon: Daemon, button: str) -> None:
    chip.set_input(line(button, daemon.pins), 0)
    time.sleep(0.05)  # a tap as a hand makes it, longer than the debounce window
    chip.set_input(line(button, daemon.pins), 1)
    time.sleep(0.05)


@pytest.fixture
def daemon(chip, tmp_path, request) -> Iterator[Daemon]:
    """The daemon, with the rules the test names (`@pytest.mark.rules(...)`)."""
    marker = request.node.get_closest_marker("rules")
    running = Daemon(tmp_path, players=2, **(marker.kwargs if marker else {}))
    yield running
    running.close()


def started(chip, daemon: Daemon) -> None:
    for button in ("P1", "P2", "SUPER"):
        tap(chip, daemon, button)
    daemon.wait_state(lambda s: s["phase"] == "open", "the game's start")


@pytest.mark.rules(pointout_s=0)  # the ledger is read slowly under emulation
@pytest.mark.parametrize("first", ["P1", "P2"])
def test_the_kernels_first_press_wins_with_the_daemon_stopped_between(chip, daemon, first):
    started(chip, daemon)
    second = "P2" if first == "P1" else "P1"
    chip.set_input(line(first, daemon.pins), 0)
    daemon.stop()
    time.sleep(0.001)
    chip.set_input(line(second, daemon.pins), 0)
    time.sleep(0.2)
    daemon.go_on()
    state = daemon.wait_state(lambda s: s["phase"] == "call", "the call")
    call = state["calls"][-1]
    print(f"{first} first, {second} 1 ms later, the daemon stopped between: {call}")
    assert call["callers"] == [int(first[1])]
    assert [p for p, _ in call["presses"]] == [int(first[1]), int(second[1])]
    assert 0.5 <= call["presses"][1][1] <= 50  # ms: the kernel's gap, not the stop's


@pytest.mark.rules(pointout_s=2)
def test_a_verdict_pressed_in_time_is_in_time_whatever_the_stall(chip, daemon):
    """pointout_s = 2: P1 calls; the daemon is stopped at +1 s; VALID is pressed at
    +1.5 s; the daemon goes on at +3.2 s, past the deadline: the SET is valid."""
    started(chip, daemon)

    def at(seconds: float) -> None:
        time.sleep(max(0.0, called + seconds - time.monotonic()))

    called = time.monotonic()
    tap(chip, daemon, "P1")
    at(1.0)
    daemon.stop()
    at(1.5)
    tap(chip, daemon, "VALID")
    at(3.2)
    daemon.go_on()
    state = daemon.wait_state(lambda s: s["calls"] and s["calls"][-1]["verdicts"], "the verdict")
    assert state["calls"][-1]["verdicts"] == ["valid"]
    assert [p["points"] for p in state["players"]] == [1, 0]
