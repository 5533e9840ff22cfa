"""Each call's clip, cut from the microphone's ring once its window has closed, by a thread
of its own and a process of its own: a clip never delays a decision, a beep or a frame
(issue 17).

The main loop tells it of every decided press of a call (`press`: the call is named by its
game and the game time of its first press, as the ledger keeps it). A clip runs from
`before_ns` ahead of the first press to `after_ns` after it; once the ring has samples past
its end (event time: the microphone's own stamps, not the clock on the wall), the thread
copies the window out of the ring and hands it to the clips' cutter (cutter.py), a
process that finds the voice onsets, places each press on its sample and saves the clip:
its numpy work holds a GIL of its own, not the main loop's. A microphone that stalls does
not hold a clip for ever: STALL_NS after its end, the clip is cut from what the ring holds;
a call it did not hear at all (lost or stalled then) has no clip.

The first cutter is the one forked at the daemon's start, when there is one (it shares
the daemon's pages: cutter_process.py). A cutter that dies loses the clip it was given
(told, as a full disk's lost clip is) and another is started for the next, anew (`python
-m`: the daemon runs threads by then, and is not forked again); one that dies at its start
twice in a row is given up, told in one line: the ring and REPLAY go on without clips.
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from referee.units import NS_PER_S

from .clips import ClipStore, ClipWindow
from .cutter import Window
from .cutter_process import CutterProcess
from .samples import Sound

log = logging.getLogger(__name__)

STALL_NS = 3 * NS_PER_S  # past a window's end with no sample after it: cut what there is
# A cutter's start: a fresh Python importing numpy and warming the detector, on a busy Pi
# reading an SD card; a clip: a second of CPU on a Pi, and a slow card's syncs.
START_S = 60.0
CUT_S = 30.0
STOP_S = 2.0  # at the daemon's stop, for the clip under way
STARTS = 2  # a cutter that dies at its start this many times in a row is given up


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
        cutter: CutterProcess | None = None,
    ) -> None:
        """told(text): a clip was lost (the disk refused it, the cutter died), or the
        cutter was given up: for the screen, from the writer's thread. cutter: one forked
        at the daemon's start, taken over (stopped with the writer); else one is started."""
        self._recording = recording
        self._clips = clips
        self._window = window
        self._told = told
        self._clock = clock
        self._calls: dict[tuple[int, int], _Call] = {}  # oldest first
        self._news = threading.Condition()
        self._stopping = False
        self._cutting = False
        self._cutter: CutterProcess | None = None
        self._forked = cutter  # the first to be used, if any
        self._starting = threading.Lock()  # a cutter is started or killed, not both at once
        self.saved = 0
        self.lost = 0
        self.unheard = 0  # calls made while the microphone did not listen: no clip
        self.given_up = False  # the cutter died at its start STARTS times in a row
        self.warm = threading.Event()  # a cutter has run its detector once
        self._thread = threading.Thread(target=self._run, name="clips", daemon=True)
        self._thread.start()

    @property
    def cutter_pid(self) -> int | None:
        """The cutter's process (the latest started)."""
        cutter = self._cutter
        return None if cutter is None else cutter.pid

    def press(self, game: int, call_ns: int, origin_ns: int, player: int, t_ns: int) -> None:
        """A decided press of a call (t_ns: its monotonic stamp), from the main loop."""
        with self._news:
            if self.given_up:
                return
            call = self._calls.setdefault(
                (game, call_ns), _Call(game, call_ns, origin_ns, origin_ns + call_ns)
            )
            call.presses.append((player, t_ns))
            self._news.notify_all()  # the writer's thread, not only a wait_cut

    def close(self) -> None:
        """Stop once the clip under way is saved, or after STOP_S (its cutter killed); the
        calls whose window is still open are not cut (the daemon is stopping)."""
        with self._news:
            self._stopping = True
            self._news.notify_all()
        self._thread.join(STOP_S)
        if self._thread.is_alive():
            with self._starting:
                if self._cutter is not None:
                    self._cutter.kill()  # what the thread waits on ends
            self._thread.join()

    def wait_cut(self, timeout_s: float) -> bool:
        """Until no call waits for its clip and none is being cut; False at timeout_s."""
        with self._news:
            return self._news.wait_for(lambda: not self._calls and not self._cutting, timeout_s)

    def _run(self) -> None:
        try:
            if not self._start():
                return
            while True:
                with self._news:
                    call = self._next_due()
                    if self._stopping:
                        return
                    if call is None:
                        continue
                    self._cutting = True
                try:
                    if not self._cut(call):
                        return
                finally:
                    with self._news:
                        self._cutting = False
                        self._news.notify_all()
        finally:
            for cutter in (self._cutter, self._forked):  # the forked one, if never used
                if cutter is not None:
                    cutter.stop(STOP_S)

    def _start(self) -> bool:
        """A cutter, its detector warm (its first run, about 100 ms of numpy's first FFTs
        and medians, is nobody's clip's); False when stopping or given up."""
        why = ""
        for _ in range(STARTS):
            with self._starting:
                if self._stopping:
                    return False
                try:
                    self._cutter = self._forked or CutterProcess.spawned()
                except OSError as err:
                    self._cutter = None
                    why = f"not started: {err.strerror or err}"
                    log.warning("the clips' cutter was %s", why)
                    continue
                finally:
                    self._forked = None
            clips, rate = self._clips, self._recording.sample_rate
            if self._cutter.ready(clips.folder, clips.max_bytes, rate, START_S):
                log.info("the clips' cutter: process %d, %s", self._cutter.pid, self._cutter.how)
                self.warm.set()
                return True
            if self._stopping:
                return False
            why = self._cutter.ended()
            log.warning("the clips' cutter died at its start: %s", why)
        said = f"their cutter failed twice at its start: {why}"
        log.error("the calls' clips are given up: %s", said)
        self._told(f"clips: off ({said}); the ledger is whole")
        with self._news:
            self.given_up = True
            self._calls.clear()
            self._news.notify_all()
        return False

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

    def _cut(self, call: _Call) -> bool:
        """The call's window to the cutter; False when no cutter is left to cut the next.
        A call the microphone did not hear (lost, or stalled, then) has no clip: cut, it
        was silence of no length, or a gap, with its presses' markers outside the sound."""
        sound = self._recording.sound(*self._window.around(call.first_ns))
        if not sound.heard(call.first_ns):
            self.unheard += 1
            log.info("game %d's call: no clip, the microphone did not hear it", call.game)
            return True
        window = Window(call.game, call.call_ns, call.origin_ns, tuple(call.presses), sound)
        cutter = self._cutter
        assert cutter is not None
        said = cutter.cut(window, CUT_S)
        if said is None:
            if self._stopping:
                return False
            self._lose(call, f"their cutter died: {cutter.ended()}")
            return self._start()
        if "lost" in said:
            self._lose(call, said["lost"])
        else:
            self.saved += 1
            log.info(
                "clip %s: %d presses, %d voice onsets",
                said["saved"],
                len(call.presses),
                said["onsets"],
            )
        return True

    def _lose(self, call: _Call, why: str) -> None:
        self.lost += 1
        log.warning("the clip of game %d's call was lost: %s", call.game, why)
        self._told(f"clips: {self.lost} lost ({why}); the ledger is whole")
