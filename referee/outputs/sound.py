"""What the box says out loud, and the speakers that say it.

The tone set: seat n has the n-th note of the G major pentatonic scale from G5 to B6
(784 to 1976 Hz), where a piezo is loud and a speaker still pleasant. The scale has no
semitone steps: neighbours are a whole tone or more apart and any two seats' notes sound
well together, as a tie plays them one after the other.

| when                         | sound                                             |
|------------------------------|---------------------------------------------------|
| a call opens                 | the caller's note, 300 ms; it cuts stale sounds   |
| a co-caller (a tie)          | the co-caller's note twice                        |
| a co-caller's turn starts    | their note, 150 ms                                |
| a join / a leave             | the player's note / their note falling a fourth   |
| the game starts              | every joined player's note, rising                |
| a valid SET, a claim upheld  | a rising chirp: E6 G6 C7                          |
| no SET, too late             | a low E4, 400 ms                                  |
| SUPER, the solo no-SET claim | a two-tone call: D6 G6 D6 G6                      |
| the flip / countdown resumes | a bright C7, 200 ms / 80 ms                       |
| 3, 2 and 1 s left            | a pip, A6 60 ms, planned: it cuts what sounds     |
| time is up                   | falling: G6 D6 G5, planned for the deadline       |
| undo, a cancelled round      | a quick falling E6 B5                             |
| shared cards (official tie)  | a level D6 twice: nobody scores                   |
| a deal over / the next dealt | a short rising G5 D6 G6 / the new dealer's note   |
| solitaire: three more cards  | the two-tone call of SUPER                        |
| game over                    | a fanfare: G5 B5 D6 G6                            |
| an ignored input             | a 10 ms tick                                      |

Photo-finish presses, locks, unlocks and the end of a round are silent: the screen says
them, and a table that hears a sound for everything stops listening.

Sounds follow the engine's decisions and never take part in them. They are timed in
event time (docs/design.md, "Event time"): the sound of a decision is played at once and
dropped if it cannot start within STALE_NS (a queue of old beeps misleads more than
silence); the countdown's pips and its end are planned ahead for the flip's stamp plus
7, 8, 9 and 10 s (`countdown_plan`) and cut whatever sounds at that moment. So the end
is heard at the deadline, not when the watermark lets the engine decide it; a press
stamped before the deadline still pauses the countdown, whatever was heard.

Speakers play on a thread of their own, so `play` never waits for a sound: only, for at
most HANDOFF_S, for the thread to take one it can start at once (the GIL goes to it then,
not after the loop's next frame). The thread sleeps on a condition with no timeout while
nothing sounds or is planned.
"""

import logging
import math
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from gpiozero import TonalBuzzer
from gpiozero.tones import Tone

from referee.rules import Phase
from referee.rules.effects import (
    CallOpened,
    ClaimJudged,
    CoCaller,
    CountdownResumed,
    CountdownStarted,
    DealOver,
    DealStarted,
    GameOver,
    GameStarted,
    Ignored,
    Joined,
    Judged,
    Left,
    NoSetClaimed,
    NoSetDealt,
    SharedCards,
    SuperCancelled,
    SuperOpened,
    TurnStarted,
    Undone,
)
from referee.rules.state import Judgement
from referee.units import NS_PER_S
from referee.view import View

log = logging.getLogger(__name__)

Note = tuple[int, int]  # (hz, ms); 0 hz is a rest


@dataclass(frozen=True)
class Sound:
    notes: tuple[Note, ...]
    cuts: bool = False  # news that makes whatever is still queued or sounding stale

    @property
    def ms(self) -> int:
        return sum(ms for _, ms in self.notes)


PLAYER_HZ = (784, 880, 988, 1175, 1319, 1568, 1760, 1976)  # G5 A5 B5 D6 E6 G6 A6 B6

VALID = Sound(((1319, 60), (1568, 60), (2093, 140)))
INVALID = Sound(((330, 400),))
SUPER = Sound(((1175, 100), (1568, 100), (1175, 100), (1568, 100)))
FLIP = Sound(((2093, 200),))
RESUME = Sound(((2093, 80),))
PIP = Sound(((1760, 60),))
TIME_UP = Sound(((1568, 150), (1175, 150), (784, 300)))
UNDO = Sound(((1319, 60), (988, 90)))
FANFARE = Sound(((784, 120), (988, 120), (1175, 120), (1568, 400)))
SHARED = Sound(((1175, 90), (0, 60), (1175, 90)))
DEAL_OVER = Sound(((784, 90), (1175, 90), (1568, 200)))
TICK = Sound(((1500, 10),))
# A hint asked (VALID while UNDO is held, or the page): heard; the answer is on the screen.
HINT_HEARD = Sound(((1760, 60), (0, 60), (1760, 60)))

PIP_S = (3, 2, 1)  # seconds left in the super countdown at which a pip sounds


def call_out(player: int) -> Sound:
    return Sound(((_hz(player), 300),), cuts=True)


def co_caller(player: int) -> Sound:
    return Sound(((_hz(player), 90), (0, 50), (_hz(player), 90)))


def turn(player: int) -> Sound:
    return Sound(((_hz(player), 150),))


def joined(player: int) -> Sound:
    return Sound(((_hz(player), 120),))


def left(player: int) -> Sound:
    return Sound(((_hz(player), 70), (_hz(player) * 3 // 4, 110)))


def game_on(players: Iterable[int]) -> Sound:
    return Sound(tuple((_hz(p), 90) for p in sorted(players)))


def _hz(player: int) -> int:
    return PLAYER_HZ[player - 1]


def sounds_for(effects: Iterable[object]) -> list[Sound]:
    """The sounds of one step's effects, in order (anything else is silent)."""
    return [sound for effect in effects if (sound := _sound_for(effect)) is not None]


def _sound_for(effect: object) -> Sound | None:
    match effect:
        case CallOpened(player=p):
            return call_out(p)
        case CoCaller(player=p):
            return co_caller(p)
        case TurnStarted(player=p):
            return turn(p)
        case Joined(player=p):
            return joined(p)
        case Left(player=p):
            return left(p)
        case GameStarted(players=players):
            return game_on(players)
        case Judged(judgement=Judgement.VALID) | ClaimJudged(upheld=True):
            return VALID
        case Judged() | ClaimJudged():
            return INVALID
        case SuperOpened() | NoSetClaimed() | NoSetDealt():
            return SUPER
        case SharedCards():
            return SHARED
        case DealOver():
            return DEAL_OVER
        case DealStarted(dealer=p):
            return turn(p)
        case CountdownStarted():
            return FLIP
        case CountdownResumed():
            return RESUME
        case Undone() | SuperCancelled():
            return UNDO
        case GameOver():
            return FANFARE
        case Ignored():
            return TICK
    # PhotoFinish, Locked, Unlocked, RoundEnded, DebtPaid (its SET chirped), CameraSaw (a
    # camera's verdict sounds as its Judged): the screen says them. TimeUp: the end was
    # heard at the deadline (countdown_plan).
    return None


# --- the countdown's pips and its end --------------------------------------------------

Plan = tuple[tuple[int, Sound], ...]  # timed sounds: (time, sound), in time order


def countdown_plan(view: View) -> Plan:
    """The running super countdown's pips at 3, 2 and 1 s left and its end, on the game
    clock; none while no countdown runs (paused by a call, ended, undone). A countdown
    too short for a pip has only the pips after its start."""
    state = view.state
    sr = state.super_round
    if state.phase is not Phase.SUPER_COUNTDOWN or sr is None or sr.countdown_deadline is None:
        return ()
    deadline = sr.countdown_deadline
    pips = tuple(
        (deadline - k * NS_PER_S, PIP) for k in PIP_S if k * NS_PER_S < view.settings.super_ns
    )
    return (*pips, (deadline, TIME_UP))


# --- speakers ----------------------------------------------------------------------------


# A sound that cannot start this soon after its moment is dropped: late, it would tell
# the table something that is no longer so.
STALE_NS = 250_000_000
# A planned sound's thread may wake this late for it and still play it.
PLAN_SLACK_NS = 20_000_000
# How long `play` waits for the sound's thread to take a sound it can start at once.
HANDOFF_S = 0.005


class Speaker(Protocol):
    def play(self, sound: Sound) -> None:
        """Sound it now, after what is sounding (or cutting it, if it `cuts`)."""
        ...

    def plan(self, plan: Plan) -> None:
        """The timed sounds ahead, on the monotonic clock; replaces the plan before."""
        ...

    def close(self) -> None: ...

    @property
    def thread_id(self) -> int | None:
        """The native id of the thread that sounds it (referee/daemon/realtime.py), if any."""
        ...


class QueuedSpeaker:
    """Plays sounds on its own thread: `play` only queues, `plan` only notes the times.

    A sound that `cuts` drops the sounds still queued and stops the one sounding; a
    planned sound cuts whatever sounds when its moment comes. A speaker that holds a
    device open may rest it after `rest_after_s` of silence.
    """

    rest_after_s: float | None = None

    def __init__(self, *, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, Sound]] = deque()  # (asked at, sound)
        self._plan: deque[tuple[int, Sound]] = deque()
        self._cut = False  # stop the sound sounding now
        self._sounding = False
        self._closed = False
        self.dropped = 0  # sounds whose moment had passed
        self._thread = threading.Thread(target=self._run, name="referee-sound", daemon=True)
        self._thread.start()

    def play(self, sound: Sound) -> None:
        with self._cond:
            if self._closed:
                return
            if sound.cuts:
                self._queue.clear()
                self._cut = True
            self._queue.append((self._clock(), sound))
            self._cond.notify_all()
            if sound.cuts or not self._sounding:
                # Hand the GIL over until the thread has taken it. A loop that draws lets
                # go of the GIL and takes it back around each blit, and every let-go wakes
                # the waiting thread's wait for it anew, so CPython would not make the
                # loop yield: the beep then waited 45 to 240 ms for a frame-drawing loop.
                self._cond.wait_for(lambda: not self._queue or self._closed, HANDOFF_S)

    def plan(self, plan: Plan) -> None:
        with self._cond:
            now = self._clock()
            self._plan = deque(item for item in plan if item[0] >= now)
            self._cond.notify_all()

    @property
    def thread_id(self) -> int | None:
        return self._thread.native_id

    def wait_quiet(self, timeout_s: float | None = None) -> bool:
        """Wait until every sound played so far has finished; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._sounding, timeout_s)

    def close(self) -> None:
        """Stop at once, whatever is sounding, and free the device."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._plan.clear()
            self._cut = True
            self._cond.notify_all()
        self._thread.join()
        self._release()

    def _perform(self, sound: Sound, rest: Callable[[float], bool]) -> None:
        """Sound it; return when it is over, or as soon as `rest(seconds)` (which waits
        up to that long) says a newer sound must take over."""
        raise NotImplementedError

    def _rest(self) -> None:
        """Free what a silence does not need (see rest_after_s)."""

    def _release(self) -> None:
        """Free the device for good."""

    def _due_s(self, now: int) -> float | None:
        """Seconds until the next planned sound; call with the condition held."""
        return max(0.0, (self._plan[0][0] - now) / 1e9) if self._plan else None

    def _next(self) -> Sound | None:
        """The sound to play now, dropping those whose moment passed; with the condition held."""
        now = self._clock()
        while self._plan and self._plan[0][0] <= now:
            at, sound = self._plan.popleft()
            if now - at <= PLAN_SLACK_NS:
                self._queue.clear()  # the planned moment's news makes the rest stale
                return sound
            self._drop(sound, now - at)
        while self._queue:
            asked, sound = self._queue.popleft()
            if now - asked <= STALE_NS:
                return sound
            self._drop(sound, now - asked)
        return None

    def _drop(self, sound: Sound, late_ns: int) -> None:
        self.dropped += 1
        log.info("a sound %.0f ms past its moment was dropped: %s", late_ns / 1e6, sound.notes)

    def _interrupted(self, seconds: float) -> bool:
        """Wait up to `seconds` (a note's length, on the real clock); True as soon as a
        cut, a planned sound or close comes."""
        end = time.monotonic() + seconds
        with self._cond:
            while True:
                due = self._due_s(self._clock())
                if self._cut or self._closed or due == 0.0:
                    return True
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left if due is None else min(due, left))

    def _run(self) -> None:
        awake = False  # the device was used since it last rested
        quiet_since = 0
        while True:
            with self._cond:
                self._sounding = False
                self._cond.notify_all()
                sound = self._wait_for_sound(quiet_since if awake else None)
                if self._closed:
                    return
                self._sounding = sound is not None
                self._cut = False
                self._cond.notify_all()  # taken: `play` may go on
            try:
                if sound is None:
                    self._rest()
                else:
                    self._perform(sound, self._interrupted)
            except Exception:
                # A speaker that fails (an unplugged board, a busy sound card) must not
                # take the referee down with it: the screen still says everything.
                log.exception("the speaker failed")
            awake = sound is not None
            quiet_since = self._clock()

    def _wait_for_sound(self, quiet_since: int | None) -> Sound | None:
        """The next sound to play, once it is due; None when the device should rest
        (quiet for rest_after_s since `quiet_since`) or the speaker closes. With the
        condition held."""
        while not self._closed:
            if (sound := self._next()) is not None:
                return sound
            now = self._clock()
            timeout = self._due_s(now)
            if quiet_since is not None and self.rest_after_s is not None:
                rest_in = self.rest_after_s - (now - quiet_since) / 1e9
                if rest_in <= 0:
                    return None
                timeout = rest_in if timeout is None else min(timeout, rest_in)
            self._cond.wait(timeout)
        return None


class BeeperSpeaker(QueuedSpeaker):
    """A passive piezo driven by gpiozero's TonalBuzzer (square wave, 50 % duty).

    TonalBuzzer plays only within `octaves` of `mid_tone`: A3 to A7 (220 to 3520 Hz)
    here, which holds the whole tone set; a note outside is brought to the nearest end.
    """

    def __init__(self, pin: str, *, pin_factory: Any = None) -> None:
        self._buzzer = TonalBuzzer(pin, mid_tone="A5", octaves=2, pin_factory=pin_factory)
        self._lowest = self._buzzer.min_tone.frequency
        self._highest = self._buzzer.max_tone.frequency
        super().__init__()

    def _perform(self, sound: Sound, rest: Callable[[float], bool]) -> None:
        try:
            for hz, ms in sound.notes:
                if hz:
                    # A bare number would be read as a MIDI note: say it is a frequency.
                    hz_in_range = min(max(float(hz), self._lowest), self._highest)
                    self._buzzer.play(Tone.from_frequency(hz_in_range))
                else:
                    self._buzzer.stop()
                if rest(ms / 1000):
                    return
        finally:
            self._buzzer.stop()

    def _release(self) -> None:
        self._buzzer.close()


class Beeper(Protocol):
    """The serial button board's beeper: it sounds `hz` for `ms` by itself (`B hz ms`)."""

    def beep(self, hz: int, ms: int) -> None: ...


class BoardSpeaker(QueuedSpeaker):
    """The serial board's beeper. A cut takes effect after the note the board is playing."""

    def __init__(self, board: Beeper) -> None:
        self._board = board
        super().__init__()

    def _perform(self, sound: Sound, rest: Callable[[float], bool]) -> None:
        for hz, ms in sound.notes:
            if hz:
                self._board.beep(hz, ms)
            if rest(ms / 1000):
                return


MIXER_RATE = 44_100
FADE_MS = 5  # ramps each note in and out: a sine cut off mid-swing clicks


def render(sound: Sound, rate: int, channels: int, volume: float) -> "array[int]":
    """The sound as signed 16-bit samples, sine waves, channels interleaved."""
    samples: array[int] = array("h")
    peak = volume * 32767
    for hz, ms in sound.notes:
        n = rate * ms // 1000
        if hz:
            fade = max(1, min(n // 2, rate * FADE_MS // 1000))
            step = 2 * math.pi * hz / rate
            envelope = (min(1, (i + 1) / fade, (n - i) / fade) for i in range(n))
            mono = array(
                "h", (round(peak * e * math.sin(step * i)) for i, e in enumerate(envelope))
            )
        else:
            mono = array("h", bytes(2 * n))  # a rest
        frames = array("h", bytes(2 * n * channels))
        for channel in range(channels):
            frames[channel::channels] = mono
        samples.extend(frames)
    return samples


class SoundCardSpeaker(QueuedSpeaker):
    """The sound card through pygame's mixer, at `volume` 0 to 1.

    The mixer is opened on the first sound and closed after `rest_after_s` of silence:
    while open, SDL's audio thread wakes for every buffer (about 86 times a second)
    even when all is silent. It is this speaker's alone: the screen must not open it
    (pygame.display.init and pygame.font.init, not pygame.init).
    """

    rest_after_s = 30.0

    def __init__(self, volume: float) -> None:
        if not 0 <= volume <= 1:
            raise ValueError(f"volume must be 0 to 1, not {volume}")
        import pygame.mixer  # only this speaker needs pygame

        self._mixer = pygame.mixer
        # Fail here, where the app can fall back to silence, if there is no sound card.
        self._open()
        self._mixer.quit()
        self._volume = volume
        self._clips: dict[Sound, Any] = {}  # rendered once per mixer opening
        super().__init__()

    def _perform(self, sound: Sound, rest: Callable[[float], bool]) -> None:
        opened = self._mixer.get_init()
        if opened is None:
            self._open()
            opened = self._mixer.get_init()
            assert opened is not None  # init raises pygame.error when it cannot open
        rate, size, channels = opened
        if size != -16:
            raise RuntimeError(f"the mixer was opened for {size}-bit samples, not signed 16")
        clip = self._clips.get(sound)
        if clip is None:
            clip = self._mixer.Sound(buffer=render(sound, rate, channels, self._volume))
            self._clips[sound] = clip
        channel = clip.play()
        # The mixer plays it on its own; waiting here keeps the next sound in its place.
        if rest(sound.ms / 1000):
            channel.stop()

    def _open(self) -> None:
        self._mixer.init(frequency=MIXER_RATE, size=-16, channels=1, buffer=512)

    def _rest(self) -> None:
        self._clips.clear()  # a clip dies with the mixer that made it
        self._mixer.quit()

    def _release(self) -> None:
        if self._mixer.get_init() is not None:
            self._rest()


class Silence:
    """No speaker at all."""

    def play(self, sound: Sound) -> None:
        pass

    def plan(self, plan: Plan) -> None:
        pass

    def close(self) -> None:
        pass

    @property
    def thread_id(self) -> int | None:
        return None
