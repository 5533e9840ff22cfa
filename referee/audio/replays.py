"""REPLAY pressed: which sound the table hears again, and what the screen shows of it.

- During a call, or after one while the microphone's ring still holds it: that call.
- With no call: the last NO_CALL_NS before REPLAY was pressed (a table that shouts instead
  of pressing still gets its photo finish).
- REPLAY again while it plays stops it; pressed again within BACK_NS after a replay
  stopped or ended, it plays the call before the one just heard, and so back through the
  game's calls (docs/rules.md, "Replay").

A call's sound comes from its clip when it has been cut (with the voice onsets found in
it), else from the ring. Nothing here is an input of the rules, nor goes into the ledger.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from referee.errors import AudioFileError
from referee.rules import Call
from referee.units import NS_PER_S
from referee.view import ReplayView

from .capture import Capture
from .clips import Clip, ClipStore, ClipWindow, clip_of
from .replay import Replay, waveform
from .replay_player import ReplayPlayer
from .samples import Sound
from .wav import read_mono

log = logging.getLogger(__name__)

NO_CALL_NS = 3 * NS_PER_S
BACK_NS = 5 * NS_PER_S
COLUMNS = 600  # the waveform's resolution, enough for a TV's width
# The waveform shows from this long before the first press or voice to this long after the
# last: presses milliseconds apart stand apart.
SPAN_BEFORE_S = 0.15
SPAN_AFTER_S = 0.35


@dataclass(frozen=True, slots=True)
class _Playing:
    replay: Replay
    index: int | None  # the call's, in the game's calls; None: the seconds before a press
    view: ReplayView  # with the cursor at 0


class Replays:
    def __init__(
        self,
        capture: Capture | None,
        clips: ClipStore | None,
        player: ReplayPlayer,
        *,
        window: ClipWindow,
        slowdown: float,
    ) -> None:
        self._capture = capture
        self._clips = clips
        self._player = player
        self._window = window
        self._slowdown = slowdown
        self._playing: _Playing | None = None
        self._last_index: int | None = None  # the call heard last
        self._ended_ns = 0  # when that replay stopped or ended

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
        first_ns = origin_ns + call.first_ns
        kept = self._kept(game, call.first_ns)
        if kept is not None:
            clip, samples = kept
        else:
            sound = self._from_ring(*self._window.around(first_ns))
            if sound is None or self._capture is None or not sound.heard(first_ns):
                if self._deaf_at(first_ns, now_ns):
                    return f"the microphone was not listening at call {index + 1}"
                return f"the sound of call {index + 1} is not kept"
            samples = sound.floats()
            clip = clip_of(
                sound,
                game=game,
                call_ns=call.first_ns,
                origin_ns=origin_ns,
                sample_rate=self._capture.sample_rate,
                presses=[(player, origin_ns + t) for player, t in call.presses],
            )
        caller = call.presses[0][0]
        minutes, seconds = divmod(call.first_ns / NS_PER_S, 60)
        title = f"P{caller}'s call at {minutes:.0f}:{seconds:04.1f}"
        return self._start(clip, samples, index, title, now_ns)

    def _start_seconds_before(self, t_ns: int, now_ns: int) -> str:
        sound = self._from_ring(t_ns - NO_CALL_NS, t_ns)
        if self._capture is not None and not self._capture.listening:
            return "the microphone is not listening: nothing to replay"
        if sound is None or self._capture is None:
            return "no microphone: nothing to replay"
        samples = sound.floats()
        # No call: its game and time are none, and the clip's clock is the box's.
        clip = clip_of(sound, game=0, call_ns=0, origin_ns=0, sample_rate=self._capture.sample_rate)
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

    def _kept(self, game: int, call_ns: int) -> tuple[Clip, np.ndarray] | None:
        """The call's clip, if it has been cut and is still kept."""
        if self._clips is None:
            return None
        for kept in self._clips.clips(game):
            if kept.clip.call_ns == call_ns:
                try:
                    samples, _ = read_mono(kept.sound)
                except AudioFileError as err:  # damaged: the ring may hold it still
                    log.warning("%s", err)
                    return None
                return kept.clip, samples
        return None

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
