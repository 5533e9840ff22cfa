"""Each call's clip, cut from the microphone's ring once its window has closed, by a thread
of its own: a clip never delays a decision, a beep or a frame (issue 17).

The main loop tells it of every decided press of a call (`press`: the call is named by its
game and the game time of its first press, as the ledger keeps it). A clip runs from
`before_ns` ahead of the first press to `after_ns` after it; once the ring has samples past
its end (event time: the microphone's own stamps, not the clock on the wall), the thread
takes the window, finds the voice onsets in it, places each press on its sample and saves
the clip. A microphone that stalls does not hold a clip for ever: STALL_NS after its end,
the clip is cut from what the ring holds.
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from referee.units import NS_PER_S

from .capture import Sound
from .clips import ClipStore, ClipWindow, clip_of
from .onsets import find_onsets

log = logging.getLogger(__name__)

STALL_NS = 3 * NS_PER_S  # past a window's end with no sample after it: cut what there is
WARM_S = 0.25  # of sound with a click in it: every path of the detector runs once


class Recording(Protocol):
    """The microphone's ring, as a clip needs it (capture.py's Capture)."""

    @property
    def sample_rate(self) -> int: ...

    @property
    def heard_ns(self) -> int | None: ...

    def sound(self, from_ns: int, to_ns: int) -> Sound: ...


@dataclass
class _Call:
    game: int
    call_ns: int  # the game time of its first press
    origin_ns: int  # the monotonic time at the game clock's 0
    first_ns: int  # the monotonic time of its first press
    presses: list[tuple[int, int]] = field(default_factory=list)  # (player, monotonic ns)


class ClipWriter:
    def __init__(
        self,
        recording: Recording,
        clips: ClipStore,
        *,
        window: ClipWindow,
        told: Callable[[str], None],
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        """told(text): a clip was lost (the disk refused it): for the screen, from the
        writer's thread."""
        self._recording = recording
        self._clips = clips
        self._window = window
        self._told = told
        self._clock = clock
        self._calls: dict[tuple[int, int], _Call] = {}  # oldest first
        self._news = threading.Condition()
        self._stopping = False
        self._cutting = False
        self.saved = 0
        self.lost = 0
        self.warm = threading.Event()  # the detector has run once
        self._thread = threading.Thread(target=self._run, name="clips", daemon=True)
        self._thread.start()

    def press(self, game: int, call_ns: int, origin_ns: int, player: int, t_ns: int) -> None:
        """A decided press of a call (t_ns: its monotonic stamp), from the main loop."""
        with self._news:
            call = self._calls.setdefault(
                (game, call_ns), _Call(game, call_ns, origin_ns, origin_ns + call_ns)
            )
            call.presses.append((player, t_ns))
            self._news.notify_all()  # the writer's thread, not only a wait_cut

    def close(self) -> None:
        """Stop once the clip being written is; the calls whose window is still open are
        not cut (the daemon is stopping)."""
        with self._news:
            self._stopping = True
            self._news.notify_all()
        self._thread.join()

    def wait_cut(self, timeout_s: float) -> bool:
        """Until no call waits for its clip and none is being cut; False at timeout_s."""
        with self._news:
            return self._news.wait_for(lambda: not self._calls and not self._cutting, timeout_s)

    def _run(self) -> None:
        # numpy's first FFTs and medians in a process hold the GIL for about 100 ms at once
        # (docs/PERFORMANCE.md, "The loop's latency, the microphone on and off"): done now, at
        # the start, that wait is not the first call's beep's and frame's.
        warm = np.zeros(round(WARM_S * self._recording.sample_rate))
        warm[len(warm) // 2] = 0.5
        find_onsets(warm, self._recording.sample_rate)
        self.warm.set()
        while True:
            with self._news:
                call = self._next_due()
                if self._stopping:
                    return
                if call is None:
                    continue
                self._cutting = True
            try:
                self._cut(call)
            finally:
                with self._news:
                    self._cutting = False
                    self._news.notify_all()

    def _next_due(self) -> _Call | None:
        """The oldest call once its window is in the ring (or the microphone stalled past
        it), taken out of the waiting ones; else None after waiting a while, or at once
        when stopping. Called with the lock held."""
        # Stopping is looked at under the lock before any wait: a close() that came while
        # a clip was being cut is not missed.
        self._news.wait_for(lambda: self._stopping or bool(self._calls))
        if self._stopping:
            return None
        key, call = next(iter(self._calls.items()))
        _, end_ns = self._window.around(call.first_ns)
        heard = self._recording.heard_ns
        if (heard is not None and heard >= end_ns) or self._clock() >= end_ns + STALL_NS:
            del self._calls[key]
            return call
        # The ring grows a period at a time: look again soon, or when a press comes.
        self._news.wait(0.05)
        return None

    def _cut(self, call: _Call) -> None:
        sound = self._recording.sound(*self._window.around(call.first_ns))
        samples = sound.floats()
        rate = self._recording.sample_rate
        onsets = find_onsets(samples, rate) if len(samples) else []
        clip = clip_of(
            sound,
            game=call.game,
            call_ns=call.call_ns,
            origin_ns=call.origin_ns,
            sample_rate=rate,
            presses=call.presses,
            onsets=[o.sample for o in onsets],
        )
        try:
            path = self._clips.save(clip, samples)
        except OSError as err:
            self.lost += 1
            log.warning("the clip of game %d's call was lost: %s", call.game, err)
            self._told(f"clips: {self.lost} lost ({err.strerror or err}); the ledger is whole")
            return
        self.saved += 1
        log.info("clip %s: %d presses, %d voice onsets", path.name, len(call.presses), len(onsets))
