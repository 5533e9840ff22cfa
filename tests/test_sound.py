import subprocess
import sys
import threading
from typing import get_args

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from referee.outputs.sound import (
    DEAL_OVER,
    FANFARE,
    FLIP,
    INVALID,
    PIP,
    PLAYER_HZ,
    RESUME,
    SHARED,
    STALE_NS,
    SUPER,
    TICK,
    TIME_UP,
    UNDO,
    VALID,
    BeeperSpeaker,
    BoardSpeaker,
    QueuedSpeaker,
    Silence,
    Sound,
    SoundCardSpeaker,
    call_out,
    co_caller,
    countdown_plan,
    game_on,
    joined,
    left,
    render,
    sounds_for,
    turn,
)
from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    Card,
    Input,
    Judgement,
    Press,
    Settings,
    State,
    Super,
    Tick,
    Undo,
    Verdict,
    new_game,
    step,
)
from referee.rules import effects as fx
from referee.view import View

from .wakeups import assert_asleep, thread_named

WAIT_S = 5.0  # how long a test waits for a thread before calling it a failure


def s(t: float) -> int:
    return round(t * NS_PER_S)


# --- what each effect sounds like ----------------------------------------------------------

EFFECT_SOUNDS = [
    (fx.Ignored("no call to judge"), [TICK]),
    (fx.Joined(2), [joined(2)]),
    (fx.Joined(2, super_round=True), [joined(2)]),
    (fx.Left(3), [left(3)]),
    (fx.GameStarted((3, 1)), [game_on((1, 3))]),
    (fx.CallOpened(4), [call_out(4)]),
    (fx.CoCaller(2, 1_000), [co_caller(2)]),
    (fx.PhotoFinish(2, 5_000_000), []),
    (fx.TurnStarted(2), [turn(2)]),
    (fx.Judged(1, Judgement.VALID, 1), [VALID]),
    (fx.Judged(1, Judgement.INVALID, -1), [INVALID]),
    (fx.Judged(1, Judgement.TIMEOUT, -1), [INVALID]),
    (fx.Locked(1), []),
    (fx.Unlocked((1, 2)), []),
    (fx.SuperOpened(), [SUPER]),
    (fx.SuperCancelled(), [UNDO]),
    (fx.CountdownStarted((1, 2)), [FLIP]),
    (fx.CountdownResumed(), [RESUME]),
    (fx.TimeUp((1,)), []),  # heard at the deadline: countdown_plan
    (fx.RoundEnded(), []),
    (fx.NoSetClaimed(), [SUPER]),
    (fx.ClaimJudged(upheld=True), [VALID]),
    (fx.ClaimJudged(upheld=False), [INVALID]),
    (fx.Undone("the flip"), [UNDO]),
    (fx.GameOver(()), [FANFARE]),
    # The rest of the seeds' game: the screen says these.
    (fx.SharedCards((1, 2)), [SHARED]),
    (fx.NoSetDealt(1), [SUPER]),
    (fx.DebtPaid(0), []),  # its SET's chirp says it
    (fx.CameraSaw((Card((0, 0, 0, 0)),) * 3), []),  # the camera's verdict is its Judged
    (fx.DealOver(1, 2), [DEAL_OVER]),
    (fx.DealStarted(2, 2, 2), [turn(2)]),
]


@pytest.mark.parametrize(("effect", "expected"), EFFECT_SOUNDS, ids=lambda x: repr(x)[:40])
def test_each_effect_has_its_sound(effect, expected):
    assert sounds_for([effect]) == expected


def test_every_kind_of_effect_is_decided():
    assert {type(e) for e, _ in EFFECT_SOUNDS} == set(get_args(fx.Effect))


def test_a_tie_sounds_the_caller_then_the_co_caller():
    settings = Settings(players=4, tie_ns=5 * NS_PER_MS)
    state = new_game(settings, lobby=False)
    state, first = step(settings, state, Press(3, s(1)))
    state, second = step(settings, state, Press(1, s(1) + NS_PER_MS))
    assert sounds_for([*first, *second]) == [call_out(3), co_caller(1)]
    _, verdict = step(settings, state, Verdict(False, s(2)))
    assert sounds_for(verdict) == [INVALID, turn(1)]


def test_the_seats_have_eight_different_notes_a_beeper_can_play():
    assert len(set(PLAYER_HZ)) == 8
    assert tuple(sorted(PLAYER_HZ)) == PLAYER_HZ
    every = [VALID, INVALID, SUPER, FLIP, RESUME, PIP, TIME_UP, UNDO, FANFARE, TICK, SHARED]
    every += [DEAL_OVER]
    every += [f(p) for f in (call_out, co_caller, turn, joined, left) for p in range(1, 9)]
    for each in every:
        assert all(hz == 0 or 220 <= hz <= 3520 for hz, _ in each.notes)
        assert each.ms <= 800  # short: a table must not wait for the box


def test_only_call_outs_cut_what_is_queued():
    assert call_out(1).cuts
    assert not any(x.cuts for x in (co_caller(1), turn(1), VALID, INVALID, PIP, TIME_UP, TICK))


# --- the countdown's pips --------------------------------------------------------------------


SETTINGS = Settings(players=4)
FLIPPED = (Super(0), Press(1, s(1)), Press(2, s(1)), Super(s(2)))  # deadline 12 s


def game(*inputs: Input, settings: Settings = SETTINGS) -> State:
    state = new_game(settings, lobby=False)
    for inp in inputs:
        state, _ = step(settings, state, inp)
    return state


def at(state: State, t: float, settings: Settings = SETTINGS) -> View:
    return View(settings=settings, state=state, now_ns=s(t))


def test_pips_at_three_two_and_one_second_left_and_the_end_at_zero():
    state = game(*FLIPPED)  # flipped at 2 s
    assert countdown_plan(at(state, 2)) == (
        (s(9), PIP),
        (s(10), PIP),
        (s(11), PIP),
        (s(12), TIME_UP),
    )
    # The plan is the countdown's, not the moment's: it stands as time goes by.
    assert countdown_plan(at(state, 11.5)) == countdown_plan(at(state, 2))


def test_the_time_up_tone_is_planned_not_played_with_the_engines_decision():
    state = game(*FLIPPED)
    assert state.deadline == s(12)
    after, effects = step(SETTINGS, state, Tick(s(12)))
    assert [type(e) for e in effects] == [fx.TimeUp]
    assert sounds_for(effects) == []  # heard at the deadline, from the plan
    assert countdown_plan(at(after, 12)) == ()


def test_no_plan_while_the_countdown_is_paused_and_a_new_one_when_it_resumes():
    paused = game(*FLIPPED, Press(1, s(9.5)))  # 2.5 s left
    assert countdown_plan(at(paused, 15)) == ()
    resumed = game(*FLIPPED, Press(1, s(9.5)), Verdict(False, s(19)))  # deadline 21.5 s
    assert resumed.super_round is not None
    assert resumed.super_round.countdown_deadline == s(21.5)
    # The 3 s pip would be at 18.5 s, before the countdown resumed: the speaker drops a
    # planned sound whose moment has passed when it is planned.
    assert countdown_plan(at(resumed, 19))[0] == (s(18.5), PIP)


def test_an_undo_plans_the_restarted_countdown():
    restarted = game(*FLIPPED, Press(2, s(11.2)), Undo(s(12)))  # full 10 s again
    assert countdown_plan(at(restarted, 12))[0] == (s(19), PIP)
    again = game(*FLIPPED, Tick(s(12)), Undo(s(30)))
    assert countdown_plan(at(again, 30))[-1] == (s(40), TIME_UP)


def test_a_short_countdown_has_only_the_pips_it_can_hold():
    short = Settings(players=4, super_ns=s(2))
    state = game(*FLIPPED, settings=short)  # deadline 4 s
    assert countdown_plan(at(state, 2, short)) == ((s(3), PIP), (s(4), TIME_UP))


def test_no_plan_outside_a_countdown():
    assert countdown_plan(at(game(), 9)) == ()
    assert countdown_plan(at(game(*FLIPPED[:3]), 9)) == ()  # joining, not flipped yet


# --- speakers ----------------------------------------------------------------------------------


class RecordingPWMPin(MockPWMPin):
    """Keeps every frequency set: MockPin's `states` holds only the duty cycle."""

    changed = threading.Condition()

    def __init__(self, factory, info) -> None:
        super().__init__(factory, info)
        self.frequencies: list[float | None] = []

    def _set_frequency(self, value):
        super()._set_frequency(value)
        with self.changed:
            self.frequencies.append(value)
            self.changed.notify_all()


@pytest.fixture
def beeper():
    factory = MockFactory(pin_class=RecordingPWMPin)
    speaker = BeeperSpeaker("GPIO18", pin_factory=factory)
    pin = factory.pin("GPIO18")
    pin.frequencies.clear()  # what TonalBuzzer set while it started
    yield speaker, pin
    speaker.close()


def test_the_beeper_plays_each_note_within_its_range(beeper):
    speaker, pin = beeper
    speaker.play(Sound(((784, 5), (0, 5), (100, 5), (5000, 5))))
    assert speaker.wait_quiet(WAIT_S)
    assert pin.frequencies == [784.0, None, 220.0, 3520.0, None]
    assert pin.state == 0  # silent, duty cycle 0


def test_a_call_out_cuts_what_is_stale(beeper):
    speaker, pin = beeper
    speaker.play(Sound(((988, 60_000),)))
    with pin.changed:
        assert pin.changed.wait_for(lambda: pin.frequencies == [988.0], WAIT_S)
    speaker.play(joined(8))  # queued behind the long note...
    speaker.play(call_out(1))  # ...and dropped with it
    assert speaker.wait_quiet(WAIT_S)
    assert pin.frequencies == [988.0, None, 784.0, None]


def test_the_speaker_sleeps_when_quiet(beeper):
    speaker, _ = beeper
    speaker.play(Sound(((784, 5),)))
    assert speaker.wait_quiet(WAIT_S)
    assert_asleep(thread_named("referee-sound"))


def test_close_silences_at_once():
    factory = MockFactory(pin_class=RecordingPWMPin)
    speaker = BeeperSpeaker("GPIO18", pin_factory=factory)
    pin = factory.pin("GPIO18")
    speaker.play(Sound(((988, 60_000),)))
    with pin.changed:
        assert pin.changed.wait_for(lambda: 988.0 in pin.frequencies, WAIT_S)
    speaker.close()
    assert pin.frequency is None
    assert not [t for t in threading.enumerate() if t.name == "referee-sound"]
    speaker.play(PIP)  # after close: nothing, and no error


class FakeBeeper:
    def __init__(self, failures: int = 0) -> None:
        self.beeps: list[tuple[int, int]] = []
        self.failures = failures

    def beep(self, hz: int, ms: int) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("the board is unplugged")
        self.beeps.append((hz, ms))


def test_the_board_beeps_each_note_rests_are_silent():
    board = FakeBeeper()
    speaker = BoardSpeaker(board)
    try:
        speaker.play(Sound(((784, 5), (0, 5), (988, 5))))
        assert speaker.wait_quiet(WAIT_S)
        assert board.beeps == [(784, 5), (988, 5)]
    finally:
        speaker.close()


def test_a_failing_speaker_logs_and_plays_on(caplog):
    board = FakeBeeper(failures=1)
    speaker = BoardSpeaker(board)
    try:
        speaker.play(Sound(((784, 5),)))
        speaker.play(Sound(((988, 5),)))
        assert speaker.wait_quiet(WAIT_S)
    finally:
        speaker.close()
    assert board.beeps == [(988, 5)]
    assert "the speaker failed" in caplog.text


class RestingSpeaker(QueuedSpeaker):
    rest_after_s = 0.01

    def __init__(self) -> None:
        self.rested = threading.Event()
        super().__init__()

    def _perform(self, sound, rest):
        self.rested.clear()

    def _rest(self):
        self.rested.set()


def test_a_speaker_rests_its_device_after_a_silence_then_sleeps():
    speaker = RestingSpeaker()
    try:
        assert_asleep(thread_named("referee-sound"))  # nothing played: nothing to rest
        assert not speaker.rested.is_set()
        speaker.play(TICK)
        assert speaker.rested.wait(WAIT_S)
        assert_asleep(thread_named("referee-sound"))
    finally:
        speaker.close()


def test_silence_takes_anything():
    quiet = Silence()
    quiet.play(FANFARE)
    quiet.plan(((0, PIP),))
    quiet.close()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000 * NS_PER_S

    def __call__(self) -> int:
        return self.now


class Recording(QueuedSpeaker):
    """Notes what it performs and whether it was cut; holds a sound while told to."""

    def __init__(self, clock) -> None:
        self.started: list[Sound] = []
        self.performed: list[tuple[Sound, bool]] = []
        self.changed = threading.Condition()
        self.hold = threading.Event()
        self.hold.set()
        super().__init__(clock=clock)

    def _perform(self, sound, rest):
        with self.changed:
            self.started.append(sound)
            self.changed.notify_all()
        self.hold.wait(WAIT_S)
        cut = rest(sound.ms / 1000)
        with self.changed:
            self.performed.append((sound, cut))
            self.changed.notify_all()

    def wait_started(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.started) >= count, WAIT_S)

    def wait_for(self, count: int) -> list[tuple[Sound, bool]]:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.performed) >= count, WAIT_S)
        return self.performed


@pytest.fixture
def recording():
    clock = FakeClock()
    speaker = Recording(clock)
    yield speaker, clock
    speaker.hold.set()
    speaker.close()


def test_play_returns_once_the_thread_has_taken_a_sound_it_can_start(recording):
    """The loop hands the GIL to the sound's thread for a sound it can start at once, and
    not for one that waits behind another (it would wait the whole hand-off for nothing)."""
    speaker, _ = recording
    speaker.hold.clear()  # each sound is held as long as the test says
    speaker.play(joined(1))  # nothing sounds: taken before play returns
    assert not speaker._queue
    speaker.wait_started(1)
    speaker.play(joined(2))  # waits behind joined(1), which it does not cut
    assert len(speaker._queue) == 1
    speaker.hold.set()
    assert [sound for sound, _ in speaker.wait_for(2)] == [joined(1), joined(2)]


def test_a_planned_sound_cuts_what_sounds_when_its_moment_comes(recording):
    speaker, clock = recording
    long = Sound(((988, 60_000),))
    speaker.play(long)
    speaker.plan(((clock.now + 3 * NS_PER_S, PIP), (clock.now + 10 * NS_PER_S, TIME_UP)))
    speaker.wait_started(1)
    clock.now += 3 * NS_PER_S
    speaker.plan(((clock.now, PIP), (clock.now + 7 * NS_PER_S, TIME_UP)))  # wakes the thread
    assert speaker.wait_for(2) == [(long, True), (PIP, False)]


def test_a_sound_that_cannot_start_in_time_is_dropped_not_queued(recording):
    speaker, clock = recording
    speaker.hold.clear()  # the first sound is held, as a slow device would
    speaker.play(TICK)
    speaker.wait_started(1)
    speaker.play(joined(2))  # waits behind it...
    clock.now += STALE_NS + 1  # ...past its moment
    speaker.play(VALID)
    speaker.hold.set()
    assert [sound for sound, _ in speaker.wait_for(2)] == [TICK, VALID]
    assert speaker.wait_quiet(WAIT_S) and speaker.dropped == 1


def test_a_plan_drops_what_is_already_past_and_a_late_wake_drops_its_sound(recording):
    speaker, clock = recording
    speaker.plan(((clock.now - 1, PIP), (clock.now + 10 * NS_PER_MS, TIME_UP)))
    clock.now += NS_PER_S  # the thread woke a second late for the time-up tone
    speaker.play(TICK)
    assert speaker.wait_for(1) == [(TICK, False)]
    assert speaker.wait_quiet(WAIT_S) and speaker.dropped == 1
    speaker.plan(())
    assert_asleep(thread_named("referee-sound"))


# --- the sound card ----------------------------------------------------------------------------


def test_render_sine_notes_with_soft_edges():
    samples = render(Sound(((1000, 10), (0, 5))), rate=8000, channels=2, volume=0.5)
    assert len(samples) == (80 + 40) * 2
    left_, right = samples[0::2], samples[1::2]
    assert left_ == right
    assert max(abs(x) for x in left_) <= 0.5 * 32767
    assert max(abs(x) for x in left_) > 0.4 * 32767
    assert abs(left_[79]) < 0.1 * 32767  # faded out: no click
    assert not any(left_[80:])


@pytest.fixture
def sound_card(monkeypatch):
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    try:
        speaker = SoundCardSpeaker(volume=0.3)
    except pygame.error as e:
        pytest.skip(f"SDL's dummy audio driver does not open here: {e}")
    yield speaker, pygame.mixer
    speaker.close()


def test_the_sound_card_opens_on_the_first_sound_and_closes(sound_card):
    speaker, mixer = sound_card
    assert mixer.get_init() is None  # checked at start, then closed: no idle audio thread
    speaker.play(Sound(((880, 20), (0, 10), (1320, 20))))
    assert speaker.wait_quiet(WAIT_S)
    assert mixer.get_init() is not None
    speaker.close()
    assert mixer.get_init() is None


def test_the_sound_card_refuses_a_volume_out_of_range():
    with pytest.raises(ValueError, match="volume"):
        SoundCardSpeaker(volume=1.5)


def test_only_the_sound_card_brings_in_pygame():
    probe = "import sys, referee.outputs.sound; print('pygame' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
