import threading
from itertools import pairwise

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from referee.outputs import lights
from referee.outputs.lights import (
    BoardLeds,
    LedMode,
    PinLeds,
    ShiftRegisterLeds,
    led_modes,
    lit_at,
    next_blink_ns,
)
from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    End,
    Input,
    Press,
    RuleSet,
    Settings,
    Super,
    Verdict,
    new_game,
    step,
)
from referee.view import View

from .wakeups import assert_asleep, thread_named

OFF, ON, SLOW, FAST = LedMode.OFF, LedMode.ON, LedMode.SLOW_BLINK, LedMode.FAST_BLINK
WAIT_S = 5.0  # how long a test waits for a thread before calling it a failure


def view(*inputs: Input, settings: Settings | None = None, lobby: bool = False) -> View:
    settings = settings or Settings(players=4, tie_ns=5 * NS_PER_MS)
    state = new_game(settings, lobby=lobby)
    for inp in inputs:
        state, _ = step(settings, state, inp)
    return View(settings=settings, state=state, now_ns=inputs[-1].t_ns if inputs else 0)


def s(t: float) -> int:
    return round(t * NS_PER_S)


# --- the table ---------------------------------------------------------------------------


def test_lobby_joined_on_the_rest_invited():
    assert led_modes(view(Press(1, 0), Press(3, s(1)), lobby=True)) == {
        1: ON,
        2: SLOW,
        3: ON,
        4: SLOW,
    }


def test_open_armed_on_locked_and_absent_off():
    joined = (Press(1, 0), Press(2, 0), Press(3, 0), Super(s(1)))
    v = view(*joined, Press(2, s(2)), Verdict(False, s(3)), lobby=True)
    assert v.state.locked == (2,)
    assert led_modes(v) == {1: ON, 2: OFF, 3: ON, 4: OFF}


def test_open_every_player_armed_at_the_start():
    assert led_modes(view()) == {1: ON, 2: ON, 3: ON, 4: ON}


def test_call_the_turn_blinks_fast_and_co_callers_wait_on():
    tied = (Press(3, s(1)), Press(1, s(1) + 2 * NS_PER_MS), Press(4, s(2)))
    assert led_modes(view(*tied)) == {1: ON, 2: OFF, 3: FAST, 4: OFF}
    assert led_modes(view(*tied, Verdict(False, s(3)))) == {1: FAST, 2: OFF, 3: OFF, 4: OFF}


def test_super_join_participants_on_others_invited_locked_off():
    locked_2 = (Press(2, 0), Verdict(False, s(1)))
    v = view(*locked_2, Super(s(2)), Press(3, s(3)))
    assert led_modes(v) == {1: SLOW, 2: OFF, 3: ON, 4: SLOW}


def test_super_countdown_only_participants_on():
    v = view(Super(0), Press(1, s(1)), Press(3, s(1)), Super(s(2)))
    assert led_modes(v) == {1: ON, 2: OFF, 3: ON, 4: OFF}


def test_super_call_the_caller_blinks_fast():
    v = view(Super(0), Press(1, s(1)), Press(3, s(1)), Super(s(2)), Press(3, s(4)))
    assert led_modes(v) == {1: OFF, 2: OFF, 3: FAST, 4: OFF}


def test_over_the_winners_blink_slowly():
    v = view(Press(2, 0), Verdict(True, s(1)), End(s(2)))
    assert led_modes(v) == {1: OFF, 2: SLOW, 3: OFF, 4: OFF}
    tie = view(End(0))
    assert led_modes(tie) == {1: SLOW, 2: SLOW, 3: SLOW, 4: SLOW}


def test_solo_claim_waits_for_the_judge_with_every_led_off():
    solo = Settings(rules=RuleSet.SOLO, players=1)
    assert led_modes(view(settings=solo)) == {1: ON}
    assert led_modes(view(Super(s(1)), settings=solo)) == {1: OFF}


def test_an_official_dealer_who_sits_out_is_off():
    match = Settings(rules=RuleSet.OFFICIAL, players=4, deals=0, dealer_plays=False)
    assert led_modes(view(settings=match)) == {1: OFF, 2: ON, 3: ON, 4: ON}
    assert led_modes(view(Super(s(1)), settings=match)) == {1: ON, 2: OFF, 3: ON, 4: ON}


def test_blinks_share_one_phase_lit_first():
    modes = {1: ON, 2: SLOW, 3: FAST}
    fast, slow = lights.FAST_HALF_NS, lights.SLOW_HALF_NS
    assert lit_at(modes, 0) == {1, 2, 3}
    assert lit_at(modes, fast) == {1, 2}
    assert lit_at(modes, 2 * fast) == {1, 2, 3}
    assert lit_at(modes, slow) == {1, 3}
    assert next_blink_ns(modes, 0) == fast
    assert next_blink_ns(modes, fast) == 2 * fast
    assert next_blink_ns({2: SLOW}, 1) == slow
    assert next_blink_ns({1: ON, 2: OFF}, 12345) is None


# --- a 74HC595 with its latch tied to its shift clock ------------------------------------


class Chip595:
    """The chip as the datasheet draws it: every rising clock edge shifts the data pin
    into QA and, RCLK being SRCLK, stores the shift register as it was before the edge."""

    def __init__(self, factory: MockFactory, data: str, clock: str) -> None:
        self.data = factory.pin(data)
        self.clock = factory.pin(clock, pin_class=ClockPin, chip=self)
        self.shift = [False] * 8  # QA'..QH'
        self.bits: list[bool] = []  # the data pin at each rising edge
        self.frames: list[frozenset[int]] = []  # the lit seats after each ninth edge
        self.changed = threading.Condition()
        self._stored = [False] * 8  # QA..QH = P1..P8

    def rise(self) -> None:
        with self.changed:
            self._stored = list(self.shift)
            self.shift = [bool(self.data.state), *self.shift[:7]]
            self.bits.append(bool(self.data.state))
            if len(self.bits) % 9 == 0:
                self.frames.append(frozenset(i + 1 for i, q in enumerate(self._stored) if q))
                self.changed.notify_all()

    def wait_frames(self, n: int) -> list[frozenset[int]]:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.frames) >= n, WAIT_S)
            return list(self.frames)


class ClockPin(MockPin):
    def __init__(self, factory, info, chip: Chip595) -> None:
        super().__init__(factory, info)
        self.chip = chip

    def _change_state(self, value):
        changed = super()._change_state(value)
        if changed and value:
            self.chip.rise()
        return changed


@pytest.fixture
def chip():
    factory = MockFactory()
    chip = Chip595(factory, "GPIO4", "GPIO19")
    leds = ShiftRegisterLeds("GPIO4", "GPIO19", pin_factory=factory)
    yield chip, leds
    leds.close()


@pytest.fixture
def quick_blinks(monkeypatch):
    monkeypatch.setattr(lights, "FAST_HALF_NS", 10 * NS_PER_MS)
    monkeypatch.setattr(lights, "SLOW_HALF_NS", 40 * NS_PER_MS)


def test_shift_register_writes_p8_first_then_the_latch_clock(chip):
    chip, leds = chip
    assert chip.frames == [frozenset()]  # whatever the register held, it starts dark
    assert chip.bits == [False] * 9
    leds.show({1: ON, 3: ON, 8: ON, 2: OFF})
    assert chip.frames == [frozenset(), {1, 3, 8}]
    #                  P8    P7     P6     P5     P4     P3    P2     P1    latch
    assert chip.bits[9:] == [True, False, False, False, False, True, False, True, False]
    assert [p.state for p in chip.clock.states] == [False] + [True, False] * 18
    assert chip.data.state is False  # the data line rests low


def test_shift_register_writes_only_on_change(chip):
    chip, leds = chip
    leds.show({1: ON, 2: OFF})
    edges = len(chip.clock.states)
    leds.show({1: ON})
    leds.show({1: ON, 4: OFF})
    assert len(chip.clock.states) == edges
    leds.show({1: ON, 2: ON})
    assert chip.frames[-1] == {1, 2}


def test_shift_register_blinks_only_the_blinking_bits(chip, quick_blinks):
    chip, leds = chip
    leds.show({1: ON, 2: FAST, 3: SLOW})
    frames = chip.wait_frames(12)[1:]
    assert frames[0] == {1, 2, 3}  # blinking starts lit
    changes = [a ^ b for a, b in pairwise(frames)]
    assert all(changes), "a frame was written that changed nothing"
    assert all(change <= {2, 3} for change in changes)
    fast = sum(2 in change for change in changes)
    slow = sum(3 in change for change in changes)
    assert fast > slow > 0


def test_shift_register_sleeps_while_nothing_blinks(chip, quick_blinks):
    chip, leds = chip
    thread = thread_named("referee-leds")
    assert_asleep(thread)
    leds.show({2: FAST})
    chip.wait_frames(4)
    leds.show({2: ON, 5: ON})
    with chip.changed:
        assert chip.changed.wait_for(lambda: chip.frames[-1] == {2, 5}, WAIT_S)
        written = len(chip.frames)
    assert_asleep(thread)
    assert len(chip.frames) == written


def test_shift_register_close_goes_dark_at_once(quick_blinks):
    factory = MockFactory()
    chip = Chip595(factory, "GPIO4", "GPIO19")
    leds = ShiftRegisterLeds("GPIO4", "GPIO19", pin_factory=factory)
    leds.show({1: SLOW, 2: ON})
    leds.close()
    assert chip.frames[-1] == frozenset()
    assert not [t for t in threading.enumerate() if t.name == "referee-leds"]


# --- one pin per LED -----------------------------------------------------------------------


class WatchedPin(MockPin):
    changed = threading.Condition()

    def _change_state(self, value):
        with self.changed:
            changed = super()._change_state(value)
            self.changed.notify_all()
        return changed


def test_pin_leds_light_and_blink_their_pins(quick_blinks):
    factory = MockFactory(pin_class=WatchedPin)
    pins = {1: "GPIO17", 2: "GPIO27", 3: "GPIO22"}
    leds = PinLeds(pins, pin_factory=factory)
    p1, p2, p3 = (factory.pin(name) for name in pins.values())
    try:
        leds.show({1: ON, 2: FAST, 3: OFF})
        assert p1.state is True
        with WatchedPin.changed:
            assert WatchedPin.changed.wait_for(lambda: len(p2.states) >= 6, WAIT_S)
        assert [p.state for p in p2.states[:6]] == [False, True, False, True, False, True]
        assert [p.state for p in p1.states] == [False, True]
        assert [p.state for p in p3.states] == [False]
        leds.show({1: ON, 2: ON})
        assert p2.state is True
        assert_asleep(thread_named("referee-leds"))
    finally:
        leds.close()
    assert (p1.state, p2.state) == (False, False)


# --- the serial board ----------------------------------------------------------------------


class FakeBoard:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def set_led(self, button: str, mode: str) -> None:
        self.sent.append((button, mode))


def test_board_leds_send_only_changes():
    board = FakeBoard()
    leds = BoardLeds(board)
    leds.show({1: ON, 2: SLOW})
    assert board.sent == [
        ("P1", "on"),
        ("P2", "blink"),
        *((f"P{n}", "off") for n in range(3, 9)),  # the board's LEDs may be left lit
    ]
    board.sent.clear()
    leds.show({1: ON, 2: FAST, 3: OFF})  # the board has one blink
    assert board.sent == []
    leds.show({2: FAST, 3: ON})
    assert board.sent == [("P1", "off"), ("P3", "on")]
    board.sent.clear()
    leds.close()
    assert board.sent == [("P2", "off"), ("P3", "off")]
