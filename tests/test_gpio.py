"""GPIO buttons read from a fake line request; tests/gpio_rig/ runs them on a real kernel."""

import re
import subprocess
import sys

import pytest

from referee.errors import GpioError
from referee.inbox import SourceStatus
from referee.inputs import gpio
from referee.inputs.edges import Edge
from referee.inputs.gpio import IRQ_BOUND_NS, GpioButtons, find_chip
from tests.fake_gpio import FakeRequest

PINS = {"P1": "GPIO17", "P2": "GPIO27", "VALID": "GPIO16"}
RESOLUTION_NS = 100_000
MS = 1_000_000
T0 = 7_000 * MS


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def open_buttons(clock, low=()):
    made = []

    def request(chip, offsets):
        made.append(FakeRequest(offsets, low))
        return made[-1]

    buttons = GpioButtons(
        PINS, RESOLUTION_NS, chip=gpio.DEV / "gpiochip0", request=request, clock=clock
    )
    return buttons, made[0]


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def opened(clock):
    buttons, request = open_buttons(clock)
    yield buttons, request
    buttons.close()


def test_one_request_holds_every_button_and_its_descriptor_is_waited_on(opened):
    buttons, request = opened
    assert sorted(request.offsets) == [16, 17, 27]
    assert buttons.fileno() == request.fd
    assert buttons.buttons == ("P1", "P2", "VALID")
    assert buttons.name == "GPIO (kernel edge times)"


def test_edges_keep_the_kernels_times_in_time_order(opened, clock):
    buttons, request = opened
    # Two lines' interrupt threads queued these out of order.
    request.feed.press(27, T0 + 2 * MS)
    request.feed.press(17, T0 + 1 * MS)
    request.feed.release(17, T0 + 3 * MS)
    clock.now = T0 + 5 * MS
    assert buttons.read() == [
        Edge("P1", T0 + 1 * MS, True),
        Edge("P2", T0 + 2 * MS, True),
        Edge("P1", T0 + 3 * MS, False),
    ]


def test_the_watermark_is_the_last_empty_read_less_the_interrupt_threads_bound(opened, clock):
    buttons, _ = opened
    assert buttons.watermark_ns == T0 - IRQ_BOUND_NS  # opened at T0
    clock.now = T0 + 40 * MS
    assert buttons.read() == []
    assert buttons.watermark_ns == T0 + 40 * MS - IRQ_BOUND_NS
    # To see every edge stamped before a time, read once the bound has passed it.
    assert buttons.wake_ns(T0 + 50 * MS) == T0 + 50 * MS + IRQ_BOUND_NS
    assert buttons.wake_ns(None) is None  # else the descriptor wakes the loop


def test_a_button_that_is_up_can_only_go_down(opened, clock):
    """The kernel names a both-edges event by the level its thread reads, which can be
    wrong while a contact bounces: the first edge of an up button is a press anyway."""
    buttons, request = opened
    request.feed.release(17, T0 + 1 * MS)  # called rising, but P1 was up
    request.feed.press(17, T0 + 1 * MS + 20_000)  # bounce
    request.feed.release(17, T0 + 90 * MS)  # the real release
    clock.now = T0 + 100 * MS
    assert [e.down for e in buttons.read()] == [True, True, False]


def test_gaps_in_the_sequence_numbers_are_counted_and_an_overflow_said(opened, clock):
    buttons, request = opened
    request.feed.edge(17, T0 + 1 * MS, falling=True, seqno=1)
    request.feed.edge(17, T0 + 2 * MS, falling=False, seqno=5)  # a bounce merged 3 edges
    clock.now = T0 + 3 * MS
    assert buttons.read()[-1] == Edge("P1", T0 + 2 * MS, False)
    assert buttons.lost_edges == 3
    request.feed.edge(17, T0 + 4 * MS, falling=True, seqno=5 + 1 + gpio.EVENT_BUFFER)
    clock.now = T0 + 5 * MS
    said = [(i.text, i.ok) for i in buttons.read() if isinstance(i, SourceStatus)]
    dropped = f"GPIO: the kernel dropped {gpio.EVENT_BUFFER} edges (its queue was full)"
    assert said == [(dropped, False)]


def test_buttons_low_at_start_are_held(clock):
    buttons, _ = open_buttons(clock, low=[16])
    try:
        assert buttons.held_at_start() == ("VALID",)
    finally:
        buttons.close()


def test_close_hands_the_lines_back_once(clock):
    buttons, request = open_buttons(clock)
    buttons.close()
    buttons.close()
    assert request.released
    assert buttons.fileno() is None and buttons.read() == []


@pytest.mark.parametrize(
    ("pins", "message"),
    [
        ({}, "no buttons given"),
        ({"P1": "GPIO5", "P2": "GPIO5"}, "GPIO5 (P2): the pin is also given to P1"),
        ({"P9": "GPIO5"}, "GPIO5 (P9): P9 is not a button"),
        ({"P1": "BOARD11"}, "BOARD11 (P1): 'BOARD11' is not a GPIO pin name"),
    ],
)
def test_a_wrong_pin_map_is_refused_naming_pin_and_button(pins, message, clock):
    with pytest.raises(GpioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        GpioButtons(
            pins, RESOLUTION_NS, chip=gpio.DEV / "gpiochip0", request=FakeRequest.on, clock=clock
        )


@pytest.mark.parametrize(
    ("errno_name", "message"),
    [
        ("EACCES", "permission denied on /dev/gpiochip0: add the user to the gpio group"),
        ("EINVAL", "/dev/gpiochip0: cannot request the buttons' lines: Invalid argument"),
    ],
)
def test_a_refused_request_says_what_to_do(errno_name, message, clock):
    import errno
    import os

    code = getattr(errno, errno_name)

    def refuse(chip, offsets):
        raise OSError(code, os.strerror(code))

    with pytest.raises(GpioError, match=re.escape(message)):
        GpioButtons(PINS, RESOLUTION_NS, chip=gpio.DEV / "gpiochip0", request=refuse, clock=clock)


def test_without_gpio_the_error_says_so(tmp_path):
    with pytest.raises(GpioError, match=r"no GPIO here \(no .*/gpiochip\*; not a Raspberry Pi\?\)"):
        find_chip(tmp_path)


def test_a_chip_that_cannot_be_opened_is_named(tmp_path):
    (tmp_path / "gpiochip0").write_text("not a chip")
    with pytest.raises(GpioError, match=r"cannot open .*gpiochip0"):
        find_chip(tmp_path)


def test_importing_it_leaves_pygame_out():
    code = "import sys, referee.inputs.gpio; print('pygame' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_line_is_asked_for_with_the_pull_up(monkeypatch):
    """A pin with no button on it (a box without REPLAY's) reads up: never a press."""
    asked = {}

    def request_lines(path, *, consumer, config, event_buffer_size):
        asked.update(config)
        return "the request"

    monkeypatch.setattr(gpio.gpiod, "request_lines", request_lines)
    assert gpio.request_buttons(gpio.DEV / "gpiochip0", [0, 5, 21]) == "the request"
    [(offsets, settings)] = asked.items()
    assert offsets == (0, 5, 21)
    assert settings.bias is gpio.Bias.PULL_UP and settings.direction is gpio.Direction.INPUT


def test_a_busy_replay_pin_says_the_button_is_optional(monkeypatch, clock):
    import errno
    import os
    from types import SimpleNamespace

    class Chip:
        def __init__(self, path):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def get_line_info(self, offset):
            return SimpleNamespace(used=offset == 0, consumer="hat-eeprom")

    def busy(chip, offsets):
        raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))

    monkeypatch.setattr(gpio.gpiod, "Chip", Chip)
    with pytest.raises(GpioError) as caught:
        GpioButtons({**PINS, "REPLAY": "GPIO0"}, RESOLUTION_NS, chip=gpio.DEV / "gpiochip0",
                    request=busy, clock=clock)  # fmt: skip
    assert str(caught.value) == (
        "GPIO0 (REPLAY) is held by hat-eeprom: stop that program, drop the dtoverlay that"
        ' claims it, or choose another pin (or [pins] REPLAY = "": the button is optional)'
        " (`gpioinfo` lists every pin's user)"
    )
