"""A replay heard on the box's speaker, played by a thread of its own a tenth of a second at a
time, so that REPLAY pressed again silences it within that (and the device's 100 ms of
latency) and the main loop never waits on it. Only that thread touches the device: ALSA's
handles are not for two threads at once.

The device is opened for each replay and closed after it: at rest the speaker is free and
nothing wakes for it.
"""

import logging
import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from referee.config import ReplayPitch

from .alsa import alsa_quiet
from .pcm import AlsaPlayback, CaptureError
from .replay import slowed_pieces
from .stretch import stretched_blocks

log = logging.getLogger(__name__)

CHUNK_S = 0.1


class ReplayPlayer:
    def __init__(
        self,
        open_device: Callable[[int], AlsaPlayback],
        pitch: ReplayPitch = ReplayPitch.VARISPEED,
    ) -> None:
        """open_device(rate): the speaker, opened (AlsaPlayback("default"), or a test's);
        pitch: slowed as a tape (varispeed), or stretched at its own pitch (kept)."""
        self._open = open_device
        self._pitch = pitch
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def play(
        self, samples: np.ndarray, rate: int, slowdown: float, anchors: Sequence[int] = ()
    ) -> str | None:
        """Play the samples (full scale +-1) `slowdown` times slower, after stopping what
        plays; what is wrong with the speaker if it cannot (the replay is then seen and
        not heard), else None. anchors: the samples a stretch pins to their place (the
        presses and the voice onsets the screen marks)."""
        self.stop()
        try:
            with alsa_quiet():  # libasound says on stderr what the error says
                device = self._open(rate)
        except CaptureError as err:
            log.warning("the replay is not heard: %s", err)
            return str(err)
        self._stop.clear()
        # Slowed in the thread, not on the main loop: 4x of a 3 s clip is half a million
        # samples; the stretch is made as it plays, so the sound starts at once.
        if self._pitch is ReplayPitch.KEPT:
            pieces: Iterable[np.ndarray] = stretched_blocks(samples, slowdown, rate, anchors)
        else:
            pieces = slowed_pieces(samples, slowdown, max(1, round(rate * CHUNK_S)))
        self._thread = threading.Thread(
            target=self._run, args=(device, pieces, max(1, round(rate * CHUNK_S))), daemon=True
        )
        self._thread.start()
        return None

    @property
    def playing(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Silence, and wait until the device is closed."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self, device: AlsaPlayback, pieces: Iterable[np.ndarray], chunk: int) -> None:
        try:
            for piece in pieces:
                pcm = (np.clip(piece, -1.0, 1.0) * 32767).round().astype(np.int16)
                for start in range(0, len(pcm), chunk):
                    if self._stop.is_set():
                        device.stop()
                        return
                    device.write(pcm[start : start + chunk])
            device.drain()
        except CaptureError as err:
            log.warning("the replay stopped: %s", err)
        finally:
            device.close()
