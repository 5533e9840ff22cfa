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
| 3, 2 and 1 s left            | a pip, A6 60 ms; it cuts stale sounds             |
| time is up                   | falling: G6 D6 G5                                 |
| undo, a cancelled round      | a quick falling E6 B5                             |
| game over                    | a fanfare: G5 B5 D6 G6                            |
| an ignored input             | a 10 ms tick                                      |

Photo-finish presses, locks, unlocks and the end of a round are silent: the screen says
them, and a table that hears a sound for everything stops listening.

Sounds follow the engine's decisions and never take part in them: the time-up tone is
the engine's `TimeUp` effect, which the main loop already wakes for (the state's
deadline). Only the pips are driven by time: `next_pip_ns` tells the loop when to wake,
`pips_due` what to play then.

Speakers play one sound after another on a thread of their own, so `play` never
blocks; the thread sleeps on a condition with no timeout while nothing sounds.
"""

import logging
import math
import threading
from array import array
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from gpiozero import TonalBuzzer
from gpiozero.tones import Tone

from referee.rules import NS_PER_S, Phase
from referee.rules.effects import (
    CallOpened,
    ClaimJudged,
    CoCaller,
    CountdownResumed,
    CountdownStarted,
    Effect,
    GameOver,
    GameStarted,
    Ignored,
    Joined,
    Judged,
    Left,
    NoSetClaimed,
    SuperCancelled,
    SuperOpened,
    TimeUp,
    TurnStarted,
    Undone,
)
from referee.rules.state import Judgement
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
PIP = Sound(((1760, 60),), cuts=True)
TIME_UP = Sound(((1568, 150), (1175, 150), (784, 300)))
UNDO = Sound(((1319, 60), (988, 90)))
FANFARE = Sound(((784, 120), (988, 120), (1175, 120), (1568, 400)))
TICK = Sound(((1500, 10),))

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


def sounds_for(effects: Iterable[Effect]) -> list[Sound]:
    """The sounds of one step's effects, in order."""
    return [sound for effect in effects if (sound := _sound_for(effect)) is not None]


def _sound_for(effect: Effect) -> Sound | None:
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
        case SuperOpened() | NoSetClaimed():
            return SUPER
        case CountdownStarted():
            return FLIP
        case CountdownResumed():
            return RESUME
        case TimeUp():
            return TIME_UP
        case Undone() | SuperCancelled():
            return UNDO
        case GameOver():
            return FANFARE
        case Ignored():
            return TICK
    return None  # PhotoFinish, Locked, Unlocked, RoundEnded: the screen says them


# --- the countdown's pips ----------------------------------------------------------------


def _deadline(view: View) -> int | None:
    """The super countdown's deadline, while it runs."""
    sr = view.state.super_round
    if view.state.phase is not Phase.SUPER_COUNTDOWN or sr is None:
        return None
    return sr.countdown_deadline


def next_pip_ns(view: View) -> int | None:
    """The game-clock time of the next pip, or None if none is coming."""
    deadline = _deadline(view)
    if deadline is None:
        return None
    ahead = [deadline - k * NS_PER_S for k in PIP_S if deadline - k * NS_PER_S > view.now_ns]
    return min(ahead, default=None)


def pips_due(previous: View | None, view: View) -> list[Sound]:
    """The pip to play now: one whose time came since the `previous` look, at most one.

    A countdown that restarted (a flip, an undo) or resumed (after a super-call paused
    it) since the previous look is measured from where it started again, so pips that
    belong before that point are never played late. A late look plays only the last pip.
    """
    deadline = _deadline(view)
    if previous is None or deadline is None or deadline <= view.now_ns:
        return []
    remaining = deadline - view.now_ns
    before = _remaining_before(previous, deadline, view.settings.super_ns)
    return [PIP] if any(remaining <= k * NS_PER_S < before for k in PIP_S) else []


def _remaining_before(previous: View, deadline: int, super_ns: int) -> int:
    """The time this countdown had left at the previous look, or when it (re)started since."""
    then = previous.state.super_round
    if then is not None and then.countdown_deadline == deadline:
        return deadline - previous.now_ns
    if then is not None and then.countdown_left_ns is not None:
        return then.countdown_left_ns  # paused then, resumed since
    return super_ns  # flipped or restarted by undo since


# --- speakers ----------------------------------------------------------------------------


class Speaker(Protocol):
    def play(self, sound: Sound) -> None: ...

    def close(self) -> None: ...


class QueuedSpeaker:
    """Plays sounds in order on its own thread: `play` only queues.

    A sound that `cuts` drops the sounds still queued and stops the one sounding. A
    speaker that holds a device open may rest it after `rest_after_s` of silence.
    """

    rest_after_s: float | None = None

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[Sound] = deque()
        self._cut = threading.Event()
        self._sounding = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="referee-sound", daemon=True)
        self._thread.start()

    def play(self, sound: Sound) -> None:
        with self._cond:
            if self._closed:
                return
            if sound.cuts:
                self._queue.clear()
                self._cut.set()
            self._queue.append(sound)
            self._cond.notify_all()

    def wait_quiet(self, timeout_s: float | None = None) -> bool:
        """Wait until every sound played so far has finished; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._sounding, timeout_s)

    def close(self) -> None:
        """Stop at once, whatever is sounding, and free the device."""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cut.set()
            self._cond.notify_all()
        self._thread.join()
        self._release()

    def _perform(self, sound: Sound, cut: threading.Event) -> None:
        """Sound it; return when it is over, or as soon as `cut` is set."""
        raise NotImplementedError

    def _rest(self) -> None:
        """Free what a silence does not need (see rest_after_s)."""

    def _release(self) -> None:
        """Free the device for good."""

    def _run(self) -> None:
        awake = False
        while True:
            with self._cond:
                self._sounding = False
                self._cond.notify_all()
                timeout = self.rest_after_s if awake else None
                woken = self._cond.wait_for(lambda: self._queue or self._closed, timeout)
                if self._closed:
                    return
                sound = self._queue.popleft() if woken else None
                self._sounding = sound is not None
                self._cut.clear()
            try:
                if sound is None:
                    self._rest()
                else:
                    self._perform(sound, self._cut)
            except Exception:
                # A speaker that fails (an unplugged board, a busy sound card) must not
                # take the referee down with it: the screen still says everything.
                log.exception("the speaker failed")
            awake = sound is not None


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

    def _perform(self, sound: Sound, cut: threading.Event) -> None:
        try:
            for hz, ms in sound.notes:
                if hz:
                    # A bare number would be read as a MIDI note: say it is a frequency.
                    hz_in_range = min(max(float(hz), self._lowest), self._highest)
                    self._buzzer.play(Tone.from_frequency(hz_in_range))
                else:
                    self._buzzer.stop()
                if cut.wait(ms / 1000):
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

    def _perform(self, sound: Sound, cut: threading.Event) -> None:
        for hz, ms in sound.notes:
            if hz:
                self._board.beep(hz, ms)
            if cut.wait(ms / 1000):
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

    def _perform(self, sound: Sound, cut: threading.Event) -> None:
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
        if cut.wait(sound.ms / 1000):
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

    def close(self) -> None:
        pass
