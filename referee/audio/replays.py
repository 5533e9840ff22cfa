"""REPLAY pressed: which sound the table hears again, and what the screen shows of it.

- During a call, or after one while the microphone's ring still holds it: that call.
- With no call: the last NO_CALL_NS before REPLAY was pressed (a table that shouts instead
  of pressing still gets its photo finish).
- REPLAY again while it plays stops it; pressed again within BACK_NS after a replay
  stopped or ended, it plays the call before the one just heard, and so back through the
  game's calls (docs/rules.md, "Replay").

A call's sound comes from its clip when it has been cut (with the voice onsets found in
it), else from the ring. Nothing here is an input of the rules, nor goes into the ledger.

The main loop never waits for the disk (docs/design.md, "The microphone"): a clip is read
by a thread of its own (ClipReader), found by its name, and what it read comes back to
the loop through its inbox (`hand`), where `loaded` starts the replay. Meanwhile the
table is told at once that it is loading, and REPLAY again stops it as it stops a replay.
"""

import itertools
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from referee.rules import Call
from referee.units import NS_PER_S
from referee.view import ReplayView

from .capture import Capture
from .clips import Clip, ClipStore, ClipWindow, Damaged, clip_name, clip_of
from .replay import Replay, waveform
from .replay_player import ReplayPlayer
from .samples import Sound

NO_CALL_NS = 3 * NS_PER_S
BACK_NS = 5 * NS_PER_S
COLUMNS = 600  # the waveform's resolution, enough for a TV's width
# The waveform shows from this long before the first press or voice to this long after the
# last: presses milliseconds apart stand apart.
SPAN_BEFORE_S = 0.15
SPAN_AFTER_S = 0.35


# What the clips' reader found for a call: its clip and samples (full scale +-1), why it
# cannot be read, or None (not kept).
Read = tuple[Clip, np.ndarray] | Damaged | None
# Something for the main loop to take up (inbox.Finished's): run there with the time,
# it says what to tell the table, if anything.
Take = Callable[[int], str | None]


@dataclass(frozen=True, slots=True)
class _Playing:
    replay: Replay
    index: int | None  # the call's, in the game's calls; None: the seconds before a press
    view: ReplayView  # with the cursor at 0


@dataclass(frozen=True, slots=True)
class _Loading:
    """A call's clip asked of the reader: what the replay needs once it comes."""

    token: int
    index: int
    game: int
    origin_ns: int
    call: Call
    title: str


class ClipReader:
    """Reads calls' clips on a thread of its own, one at a time, in the order asked; each
    result is handed to `done` from that thread. At normal priority: a thread the loop
    starts is not real-time (daemon/realtime.py, SCHED_RESET_ON_FORK)."""

    def __init__(self, clips: ClipStore, done: Callable[[int, Read], None]) -> None:
        self._clips = clips
        self._done = done
        self._asked: queue.SimpleQueue[tuple[int, str] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def read(self, token: int, name: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="replay clips", daemon=True)
            self._thread.start()
        self._asked.put((token, name))

    def close(self) -> None:
        """Once what it reads now is read: not waited for (a disk may hang for ever)."""
        self._asked.put(None)

    def _run(self) -> None:
        while (asked := self._asked.get()) is not None:
            token, name = asked
            found = self._clips.load(name)  # never raises: a bad clip is Damaged
            if isinstance(found, tuple):
                kept, pcm = found
                samples = np.frombuffer(pcm, "<i2").astype(np.float64) / 32768
                self._done(token, (kept.clip, samples))
            else:
                self._done(token, found)


class Replays:
    def __init__(
        self,
        capture: Capture | None,
        clips: ClipStore | None,
        player: ReplayPlayer,
        *,
        window: ClipWindow,
        slowdown: float,
        hand: Callable[[Take], None],
    ) -> None:
        """hand(take): give the main loop something to take up (App: its inbox), from
        the clips' reader's thread."""
        self._capture = capture
        self._player = player
        self._window = window
        self._slowdown = slowdown
        self._playing: _Playing | None = None
        self._loading: _Loading | None = None  # a clip being read for a replay
        self._tokens = itertools.count(1)
        self._last_index: int | None = None  # the call heard last
        self._ended_ns = 0  # when that replay stopped or ended
        self._reader = None
        if clips is not None:
            self._reader = ClipReader(
                clips, lambda token, read: hand(lambda now_ns: self.loaded(token, read, now_ns))
            )

    @property
    def loading(self) -> bool:
        """A call's clip is being read for a replay."""
        return self._loading is not None

    def hear(self, capture: Capture) -> None:
        """A microphone found after the box started: its ring is replayed from now on."""
        self._capture = capture

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()

    def pressed(
        self,
        t_ns: int,
        game: int,
        origin_ns: int,
        calls: Sequence[Call],
        now_ns: int,
        under_way: bool = False,
    ) -> str:
        """REPLAY at t_ns (monotonic): start, stop or step back; what to tell the table."""
        if (loading := self._loading) is not None:  # stopped before it was heard
            self._loading = None
            self._last_index, self._ended_ns = loading.index, now_ns
            return "replay stopped: REPLAY again for the call before"
        playing = self._playing
        if playing is not None and not playing.replay.over(now_ns):
            self.stop(now_ns)
            return "replay stopped: REPLAY again for the call before"
        if playing is not None:
            self._ended(playing, playing.replay.started_ns + playing.replay.length_ns)
        index = self._choose(t_ns, origin_ns, calls, under_way)
        if index is None:
            return self._start_seconds_before(t_ns, now_ns)
        if index < 0:
            return "no earlier call to replay"
        return self._start_call(index, game, origin_ns, calls[index], now_ns)

    def stop(self, now_ns: int) -> None:
        if self._playing is not None:
            self._player.stop()
            self._ended(self._playing, now_ns)

    def view(self, now_ns: int) -> ReplayView | None:
        """What the screen shows now; None once the replay is over."""
        playing = self._playing
        if playing is None:
            return None
        replay = playing.replay
        if replay.over(now_ns):
            self._ended(playing, replay.started_ns + replay.length_ns)
            return None
        return replace(playing.view, cursor=replay.sample_at(now_ns) / max(1, replay.samples))

    def _ended(self, playing: _Playing, at_ns: int) -> None:
        self._playing = None
        self._last_index = playing.index
        self._ended_ns = at_ns

    def _choose(
        self, t_ns: int, origin_ns: int, calls: Sequence[Call], under_way: bool
    ) -> int | None:
        """The call to replay: the one before the last heard, if pressed soon after it; the
        game's last call, if it is under way (however long ago it was made: a point-out
        time of 0 has no limit) or the ring holds it; else None."""
        if self._last_index is not None and t_ns - self._ended_ns <= BACK_NS:
            return self._last_index - 1
        if not calls:
            return None
        if under_way:
            return len(calls) - 1
        last = calls[-1]
        first_ns = origin_ns + last.first_ns
        in_ring = self._capture is not None and t_ns - first_ns <= self._capture.seconds * NS_PER_S
        return len(calls) - 1 if in_ring else None

    def _start_call(self, index: int, game: int, origin_ns: int, call: Call, now_ns: int) -> str:
        caller = call.presses[0][0]
        minutes, seconds = divmod(call.first_ns / NS_PER_S, 60)
        title = f"P{caller}'s call at {minutes:.0f}:{seconds:04.1f}"
        loading = _Loading(next(self._tokens), index, game, origin_ns, call, title)
        if self._reader is None:
            return self._from_ring_or_not(loading, None, now_ns)
        self._loading = loading
        self._reader.read(loading.token, clip_name(game, call.first_ns))
        return f"replay: loading {title}"

    def loaded(self, token: int, read: Read, now_ns: int) -> str | None:
        """The reader's answer for a clip asked (on the main loop): the replay starts, from
        the clip, else from the ring; None if it was stopped meanwhile."""
        loading = self._loading
        if loading is None or loading.token != token:
            return None
        self._loading = None
        if isinstance(read, tuple):
            clip, samples = read
            return self._start(clip, samples, loading.index, loading.title, now_ns)
        return self._from_ring_or_not(loading, read, now_ns)

    def _from_ring_or_not(self, loading: _Loading, damaged: Damaged | None, now_ns: int) -> str:
        """The call's sound from the ring, while it holds it; else why it is not heard."""
        call, origin_ns = loading.call, loading.origin_ns
        first_ns = origin_ns + call.first_ns
        sound = self._from_ring(*self._window.around(first_ns))
        if sound is None or self._capture is None or not sound.heard(first_ns):
            if damaged is not None:
                return f"the clip of call {loading.index + 1} is damaged: see `referee clips`"
            if self._deaf_at(first_ns, now_ns):
                return f"the microphone was not listening at call {loading.index + 1}"
            return f"the sound of call {loading.index + 1} is not kept"
        clip = clip_of(
            sound,
            game=loading.game,
            call_ns=call.first_ns,
            origin_ns=origin_ns,
            presses=[(player, origin_ns + t) for player, t in call.presses],
        )
        return self._start(clip, sound.floats(), loading.index, loading.title, now_ns)

    def _start_seconds_before(self, t_ns: int, now_ns: int) -> str:
        sound = self._from_ring(t_ns - NO_CALL_NS, t_ns)
        if self._capture is not None and not self._capture.listening:
            return "the microphone is not listening: nothing to replay"
        if sound is None or self._capture is None:
            return "no microphone: nothing to replay"
        samples = sound.floats()
        # No call: its game and time are none, and the clip's clock is the box's.
        clip = clip_of(sound, game=0, call_ns=0, origin_ns=0)
        return self._start(clip, samples, None, "the last 3 s", now_ns)

    def _start(
        self, clip: Clip, samples: np.ndarray, index: int | None, title: str, now_ns: int
    ) -> str:
        slower = f"{self._slowdown:g}x slower"
        marked = [m.sample for m in clip.presses] + list(clip.onsets)
        problem = self._player.play(samples, clip.sample_rate, self._slowdown, marked)
        replay = Replay(clip, len(samples), now_ns, self._slowdown)
        n = max(1, len(samples))
        # Where the argument is: from a little before the first press or voice to a little
        # after the last, wide enough to see the shouts begin (the whole clip if none).
        rate = clip.sample_rate
        lo = max(0, min(marked) - round(SPAN_BEFORE_S * rate)) if marked else 0
        hi = min(n, max(marked) + round(SPAN_AFTER_S * rate)) if marked else n
        lows, highs = waveform(samples[lo:hi], COLUMNS)
        view = ReplayView(
            title=f"{title}, {slower}",
            lows=tuple(float(x) for x in lows),
            highs=tuple(float(x) for x in highs),
            presses=tuple((m.player, m.sample / n) for m in clip.presses),
            onsets=tuple(s / n for s in clip.onsets),
            soft=tuple(s / n for s in clip.soft),
            gaps=tuple(at / n for at, _ in clip.gaps),
            cursor=0.0,
            span=(lo / n, hi / n),
            heard=problem is None,
        )
        self._playing = _Playing(replay, index, view)
        said = f"replay: {title}, {slower}"
        return said if problem is None else f"{said}, not heard: {problem}"

    def _deaf_at(self, t_ns: int, now_ns: int) -> bool:
        """A moment the ring would still hold, had the microphone heard it (it was lost,
        or stalled, then): not a call too old to be kept."""
        capture = self._capture
        return capture is not None and now_ns - t_ns <= capture.seconds * NS_PER_S

    def _from_ring(self, from_ns: int, to_ns: int) -> Sound | None:
        """The ring's samples from from_ns to to_ns, or as far as it has heard; None if it
        holds none of them (or there is no microphone)."""
        capture = self._capture
        if capture is None or (heard := capture.heard_ns) is None:
            return None
        sound = capture.sound(from_ns, min(to_ns, heard))
        return sound if len(sound.samples) else None
