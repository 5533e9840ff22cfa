"""The microphone's work for the main loop: each call's clip, and REPLAY (docs/design.md,
"The microphone").

The loop hands it the presses it has decided and each REPLAY; the clips are cut by the
cutter's process (audio/clip_writer.py) and a replay's clip is read on a thread of its own
(audio/replays.py), whose news comes back through the inbox (inbox.Finished). numpy is
imported only once a microphone listens or a REPLAY is pressed.

A box with no microphone at its start (one plugged in late) looks for one on a thread of
its own (`_Search`), at the times a lost one is looked for again (audio/source.py):
a look is the cards listed and one opened, never on the loop.
The one found is handed to the loop through the inbox, and from then on it is as if it
had been there at the start, but for the calls made before it listened, which have no
clip. Lost afterwards, its own reader looks for it again (capture.py).
"""

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from referee.audio.source import MICROPHONE, RETRY_MAX_S, RETRY_S
from referee.config import AudioConfig
from referee.inbox import Finished, Inbox, SourceStatus
from referee.linux.children import Backoff
from referee.store.paths import clips_folder
from referee.view import ReplayView

from .session import Session

if TYPE_CHECKING:
    from referee.audio.capture import Capture
    from referee.audio.clip_writer import ClipWriter
    from referee.audio.clips import ClipStore
    from referee.audio.cutter_process import CutterProcess
    from referee.audio.replays import Replays

log = logging.getLogger(__name__)

FOUND = "open"  # the condition of the SourceStatus that says one was found: the start's


class _Search:
    """A microphone looked for (`look`: one opened, or None) until one is found; `hand`
    gives it to the loop. `wait(s)`: s seconds, or until `close` (True then)."""

    def __init__(
        self,
        look: "Callable[[], Capture | None]",
        hand: "Callable[[Capture], None]",
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        self._look, self._hand = look, hand
        self._closed = threading.Event()
        self._wait = wait or self._closed.wait
        self.found: Capture | None = None
        self._thread = threading.Thread(target=self._run, name="microphone search", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        backoff = Backoff(RETRY_S, RETRY_MAX_S)
        while not self._wait(backoff.after()) and not self._closed.is_set():
            if (found := self._look()) is not None:
                self.found = found
                self._hand(found)
                return

    def close(self) -> None:
        """The search stopped; the microphone found closed too (whether or not the loop
        took it up: its clips are closed before)."""
        self._closed.set()
        # Bounded, as every wait at the daemon's stop: a look held in a sound card's open
        # (a USB device half gone) must not keep the daemon from ending.
        self._thread.join(RETRY_MAX_S)
        if self._thread.is_alive():
            log.warning("the microphone's search did not end: left to the daemon's exit")
        if self.found is not None:
            self.found.close()


class Listening:
    """What the microphone adds to the loop: `clips`, the calls' clips' writer while the
    microphone listens and clips may be kept; REPLAY's reader and player, made at the
    first REPLAY. `close` stops them (before the microphone is closed)."""

    def __init__(
        self,
        microphone: "Capture | None",
        audio: AudioConfig,
        store: Path,
        inbox: Inbox,
        clock: Callable[[], int],
        cutter: "CutterProcess | None",
        look: "Callable[[], Capture | None] | None" = None,
    ) -> None:
        """cutter: the clips' cutter forked at the daemon's start (early.fork_cutter), for
        the clips' writer; stopped at once if the microphone does not listen. look: with
        no microphone, one look for it (devices.look_for_microphone), made now and then
        until one is found."""
        self.microphone = microphone
        self._audio, self._store, self._inbox, self._clock = audio, store, inbox, clock
        self._closing = contextlib.ExitStack()
        self.clips = self._clip_writer(cutter)
        if self.clips is not None:
            self._closing.callback(self.clips.close)
        self._clipped: set[tuple[int, int, int]] = set()  # (game, player, t): sent
        # A call from before the microphone listened (a resumed game's, or one an UNDO
        # brings back) is not in its ring: cut, it would be silence, and it would take
        # the place of the clip an earlier run of the box cut when it was heard.
        self._listening_ns = clock()
        self._replays: Replays | None = None  # made at the first REPLAY
        self._search: _Search | None = None
        if microphone is None and look is not None:
            self._search = _Search(look, self._found)

    def _found(self, capture: "Capture") -> None:
        """From the search's thread: the microphone found, for the loop to take up; then
        the table told (and the start's notice that it could not be opened gone)."""
        self._inbox.put(Finished(lambda now_ns: self._listen(capture)))
        said = f"microphone {capture.name} listening"
        self._inbox.put(SourceStatus(MICROPHONE, said, ok=True, condition=FOUND))

    def _listen(self, capture: "Capture") -> None:
        """On the loop: the microphone found is the one listened to from now on."""
        self.microphone = capture
        capture.tell(self._inbox.put)  # lost and back: the notices
        self._listening_ns = self._clock()  # a call made before: not in its ring
        self.clips = self._clip_writer(None)
        if self.clips is not None:
            self._closing.callback(self.clips.close)
        if self._replays is not None:
            self._replays.hear(capture)

    def _clip_writer(self, cutter: "CutterProcess | None") -> "ClipWriter | None":
        """Each call's clip, while the microphone listens and clips may be kept."""
        if self.microphone is None or self._audio.clips_mb <= 0:
            if cutter is not None:  # forked for a microphone that did not open
                from referee.audio.clip_writer import STOP_S

                cutter.stop(STOP_S)
            return None
        # Imported here: numpy is for the microphone alone.
        from referee.audio.clip_writer import ClipWriter
        from referee.audio.clips import ClipWindow

        return ClipWriter(
            self.microphone,
            self.clip_store(),
            window=ClipWindow.of(self._audio),
            told=lambda text: self._inbox.put(
                SourceStatus("clips", text, ok=False, condition="cut")
            ),
            clock=self._clock,
            cutter=cutter,
        )

    def clip_store(self) -> "ClipStore":
        """The clips beside the store: the writer keeps them, REPLAY reads them, a phone
        deletes them."""
        from referee.audio.clips import ClipStore

        mb = self._audio.clips_mb
        return ClipStore(clips_folder(self._store), max_bytes=round(mb * 2**20))

    @property
    def listening(self) -> bool:
        """The microphone keeps the last seconds now: the screens show its mark."""
        return self.microphone is not None and self.microphone.listening

    def view(self, now_ns: int) -> ReplayView | None:
        """The call replayed now, as the screen draws it."""
        return None if self._replays is None else self._replays.view(now_ns)

    def replay(self, t_ns: int, now_ns: int, session: Session) -> str:
        """REPLAY: a call's sound again, slowed down (audio/replays.py); what to say."""
        if self._replays is None:
            # Imported here: numpy is for the microphone and its clips alone.
            from referee.audio.clips import ClipWindow
            from referee.audio.pcm import AlsaPlayback
            from referee.audio.replay_player import ReplayPlayer
            from referee.audio.replays import Replays

            audio = self._audio
            player = ReplayPlayer(
                lambda rate: AlsaPlayback("default", rate=rate), audio.replay_pitch
            )
            self._replays = Replays(
                self.microphone,
                self.clip_store(),
                player,
                window=ClipWindow.of(audio),
                slowdown=audio.replay_slowdown,
                hand=lambda take: self._inbox.put(Finished(take)),
            )
            self._closing.callback(player.stop)
            self._closing.callback(self._replays.close)
        state = session.state
        said = self._replays.pressed(
            t_ns,
            session.ledger.game_id,
            session.origin_ns,
            state.calls,
            now_ns,
            under_way=state.pending is not None,
        )
        log.info("%s", said)
        return said

    def presses(self, session: Session) -> None:
        """Every press of the call under way, or just judged, to the clips' writer, once."""
        if self.clips is None:
            return
        state, game = session.state, session.ledger.game_id
        for call in filter(None, (state.pending, state.calls[-1] if state.calls else None)):
            if session.mono_ns(call.first_ns) < self._listening_ns:
                continue
            for player, t_ns in call.presses:
                if (game, player, t_ns) not in self._clipped:
                    self._clipped.add((game, player, t_ns))
                    self.clips.press(
                        game, call.first_ns, session.origin_ns, player, session.mono_ns(t_ns)
                    )

    def close(self) -> None:
        """REPLAY's reader and player first, then the clips' writer; then a microphone
        found after the start (one there at the start is the App's)."""
        self._closing.close()
        if self._search is not None:
            self._search.close()
