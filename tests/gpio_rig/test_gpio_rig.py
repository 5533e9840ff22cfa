"""GpioButtons on a real kernel: gpio-sim lines, lgpio, the kernel's edge stamps.

Runs only inside the rig's guest (`make test-rig`, tests/gpio_rig/run.sh), which makes
gpiozero believe it is on a Pi and picks the lgpio factory through GPIOZERO_PIN_FACTORY,
so the buttons are opened exactly as `referee run` opens them. Under emulation a sysfs
write takes milliseconds: the order and the stamps are exact, the latencies say nothing
about a Pi. The printed tables show with `pytest -rP`.
"""

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero import Device

from referee.edges import Edge, Inbox, InboxItem
from referee.inputs.gpio import GpioButtons, GpioError

gpiosim_rig = pytest.importorskip("gpiosim_rig", reason="runs in the gpio-sim guest: make test-rig")

pytestmark = pytest.mark.rig

ROOT = Path(__file__).resolve().parents[2]

PINS = {"P1": "GPIO17", "P2": "GPIO27", "P3": "GPIO22", "P8": "GPIO13", "VALID": "GPIO16"}
RESOLUTION_NS = 100_000
# tests/vm/gpiosim_rig.py: leave at least 1 ms between toggles of one line.
TOGGLE_GAP_S = 0.001


def line(button: str) -> int:
    return int(PINS[button].removeprefix("GPIO"))  # gpio-sim offsets are BCM numbers


class TimedInbox(Inbox):
    """An inbox that notes when each item reached it, to show how late callbacks come."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[tuple[InboxItem, int]] = []

    def put(self, item: InboxItem) -> None:
        self.arrived.append((item, time.monotonic_ns()))
        super().put(item)


@pytest.fixture(scope="module")
def chip() -> Iterator[object]:
    if os.environ.get("GPIOZERO_PIN_FACTORY") != "lgpio":
        pytest.fail("GPIOZERO_PIN_FACTORY=lgpio is not set: run this through make test-rig")
    with gpiosim_rig.SimChip(num_lines=28) as sim:
        assert sim.path == "/dev/gpiochip0", "lgpio's factory opens chip 0 on this board"
        yield sim
        Device.pin_factory.close()  # before the chip goes, while its lines still exist
        Device.pin_factory = None


@pytest.fixture
def inbox() -> TimedInbox:
    return TimedInbox()


@pytest.fixture
def buttons(chip, inbox) -> Iterator[GpioButtons]:
    source = GpioButtons(PINS, RESOLUTION_NS)
    source.start(inbox)
    yield source
    source.close()


def drive(chip, button: str, level: int) -> tuple[int, int]:
    """Set a button's line from outside; return the window the kernel's stamp must lie in."""
    before = time.monotonic_ns()
    chip.set_input(line(button), level)
    return before, time.monotonic_ns()


def collect(inbox: Inbox, count: int, timeout_s: float = 5.0) -> list[Edge]:
    edges: list[Edge] = []
    deadline = time.monotonic() + timeout_s
    while len(edges) < count and (left := deadline - time.monotonic()) > 0:
        edges += [item for item in inbox.get(left) if isinstance(item, Edge)]
    return edges


def show(title: str, inbox: TimedInbox, windows: list[tuple[int, int]]) -> None:
    t0 = min(t for t, _ in windows)
    print(f"{title} (times in µs after the first write began)")
    print("  arrived  button  edge   kernel time   write window         callback late by")
    for n, (item, arrived_ns) in enumerate(inbox.arrived):
        assert isinstance(item, Edge)
        window = next(((b, a) for b, a in windows if b <= item.t_ns <= a), None)
        where = f"[{(window[0] - t0) / 1e3:8.1f}, {(window[1] - t0) / 1e3:8.1f}]" if window else "-"
        late_ms = (arrived_ns - item.t_ns) / 1e6
        print(
            f"  {n:7}  {item.button:6}  {'down' if item.down else 'up':5}"
            f"  {(item.t_ns - t0) / 1e3:11.1f}   {where:20} {late_ms:6.2f} ms"
        )


def test_it_is_the_lgpio_factory_with_kernel_times(buttons):
    assert buttons.name == "GPIO (lgpio: kernel edge times)"
    assert buttons.resolution_ns == RESOLUTION_NS
    assert type(Device.pin_factory).__name__ == "LGPIOFactory"
    assert all(Device.pin_factory.pin(name).state for name in PINS.values()), "pulled up"


def test_presses_are_stamped_by_the_kernel_in_the_order_they_happened(chip, inbox, buttons):
    order = ["P3", "P1", "P8", "VALID", "P2"]  # neither pin order nor map order
    windows = []
    for button in order:
        windows.append(drive(chip, button, 0))
        time.sleep(0.002)  # paces the presses; nothing waits on a thread here
    presses = collect(inbox, len(order))
    for button in order:
        windows.append(drive(chip, button, 1))
    releases = collect(inbox, len(order))
    show("five presses 2 ms apart, then five releases", inbox, windows)

    assert [e.down for e in presses + releases] == [True] * 5 + [False] * 5
    by_time = sorted(presses + releases, key=lambda e: e.t_ns)
    assert [e.button for e in by_time] == order + order
    for edge, (before, after) in zip(by_time, windows, strict=True):
        assert before <= edge.t_ns <= after, f"{edge} stamped outside its write"
    gaps_ms = [(b.t_ns - a.t_ns) / 1e6 for a, b in itertools.pairwise(by_time[:5])]
    print("  gaps between presses (ms):", ", ".join(f"{g:.3f}" for g in gaps_ms))
    assert all(g >= 2.0 for g in gaps_ms), "each press follows a 2 ms pause"


def test_presses_under_a_millisecond_apart_are_ordered_by_kernel_time(chip, inbox, buttons):
    # One shell writes both lines back to back: P2 (line 27) first, then P1 (line 17).
    script = f"echo pull-down > {chip.pull_path(27)}; echo pull-down > {chip.pull_path(17)}"
    before = time.monotonic_ns()
    subprocess.run(["sh", "-c", script], check=True)
    after = time.monotonic_ns()
    presses = collect(inbox, 2)
    show("P2 then P1 from one shell command", inbox, [(before, after)])
    chip.set_input(27, 1)
    chip.set_input(17, 1)
    collect(inbox, 2)

    assert sorted((e.t_ns, e.button) for e in presses)[0][1] == "P2"
    assert all(e.down and before <= e.t_ns <= after for e in presses)
    first, second = sorted(e.t_ns for e in presses)
    print(f"  P1 stamped {(second - first) / 1e3:.1f} µs after P2")
    assert second > first


def test_a_bounce_burst_arrives_as_every_edge_in_order(chip, inbox, buttons):
    levels = [0, 1, 0, 1, 0, 1]
    windows = []
    for level in levels:
        windows.append(drive(chip, "P1", level))
        time.sleep(TOGGLE_GAP_S)
    edges = collect(inbox, len(levels))
    show("P1 toggled six times, 1 ms apart", inbox, windows)

    assert [e.down for e in edges] == [level == 0 for level in levels]
    assert all(e.button == "P1" for e in edges)
    for edge, (before, after) in zip(edges, windows, strict=True):
        assert before <= edge.t_ns <= after
    assert [e.t_ns for e in edges] == sorted({e.t_ns for e in edges})


def test_close_stops_the_edges_and_the_pins_can_be_opened_again(chip):
    inbox = Inbox()
    first = GpioButtons(PINS, RESOLUTION_NS)
    first.start(inbox)
    first.close()
    chip.set_input(line("P1"), 0)
    assert inbox.get(0.2) == [], "no edge after close()"
    chip.set_input(line("P1"), 1)
    again = GpioButtons(PINS, RESOLUTION_NS)
    again.start(inbox)
    before, after = drive(chip, "P1", 0)
    edges = collect(inbox, 1)
    again.close()
    chip.set_input(line("P1"), 1)
    assert len(edges) == 1
    assert edges[0].button == "P1"
    assert edges[0].down
    assert before <= edges[0].t_ns <= after


def test_a_pin_another_program_holds_is_named_with_what_to_do(chip):
    gpiod = pytest.importorskip("gpiod")
    settings = gpiod.LineSettings(direction=gpiod.line.Direction.INPUT)
    # A line of its own: lgpio keeps the lines GpioButtons closed (they are inputs again).
    with (
        gpiod.request_lines(chip.path, consumer="other", config={5: settings}),
        pytest.raises(GpioError) as caught,
    ):
        GpioButtons({"P1": "GPIO17", "P5": "GPIO5"}, RESOLUTION_NS)
    print(caught.value)
    assert str(caught.value).startswith("GPIO5 (P5): the pin is busy: another program or a kernel")
    GpioButtons({"P1": "GPIO17"}, RESOLUTION_NS).close()  # P1 was let go again


def test_a_user_without_access_to_the_chip_is_told_what_to_do(chip):
    code = (
        "from referee.inputs.gpio import GpioButtons, GpioError\n"
        "try:\n"
        "    GpioButtons({'P1': 'GPIO17'}, 100_000)\n"
        "except GpioError as err:\n"
        "    print(err)\n"
    )
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # cwd: importing lgpio moved this process's working directory to $LG_WD.
    run = subprocess.run(
        [*nobody, sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    print(run.stdout, run.stderr)
    assert run.stdout.strip() == (
        "GPIO17 (P1): permission denied on /dev/gpiochip0: add the user to the gpio group "
        "(sudo adduser $USER gpio), then log in again"
    )
