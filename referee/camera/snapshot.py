"""Each call's snapshot (issue 32): a small JPEG of the layout at its first press, written
by the camera's process beside the call's clip (audio/clips.py), at the daemon's word.

The daemon writes a line on this process's input at each call's first press:

    snap NAME T

NAME the call's, as its clip is named (clips.clip_name: its game and the game time of its
first press), T the press's CLOCK_MONOTONIC stamp, as the frames'. The snapshot is the
latest frame taken at or before T: the layout the caller was looking at when they
pressed, before a hand reaches in for the cards (a source gives a frame when it has a
new one, so the latest before T is what it saw at T, however old). A camera that had
none (opened since, or lost and back) gives the first frame after T, if one comes within
AFTER_NS; else the call has none. The frames are kept shrunk (SIDE_PX on their long
side, about the size of a phone's screen, where a card stays some 100 px across and
readable), the last KEPT of them; a camera lost drops them.

The file is encoded and written by a thread of its own, whole or not at all, and the
oldest calls' clips and snapshots make room for it (ClipStore.save_snapshot, the clips'
budget): a slow card's fsync never holds the next frame's reading (OpenCV's encoder and
the write release the GIL). A disk that refuses it loses the snapshot, said in the log.
"""

import logging
import queue
import threading
from collections import deque

import cv2
import numpy as np

from referee.audio.clips import ClipStore, is_clip_name
from referee.units import NS_PER_S

log = logging.getLogger(__name__)

SIDE_PX = 800
QUALITY = 80  # JPEG: some 30 to 50 kB for a table of 12 to 21 cards (bench/snapshot.py)
KEPT = 4  # frames: two seconds at two a second, the daemon's word comes within milliseconds
AFTER_NS = 2 * NS_PER_S  # a camera opened after the press: the next frames' reading
PENDING = 8  # calls waiting for a frame, or for the disk: more is a daemon gone wrong
LINE_MAX = 100  # bytes of a word from the daemon: "snap" and a name and a stamp


class Snapshots:
    """The frames kept and the calls waiting for theirs, for a ClipStore's folder."""

    def __init__(self, clips: ClipStore) -> None:
        self.clips = clips
        self._frames: deque[tuple[int, np.ndarray]] = deque(maxlen=KEPT)  # oldest first
        self._waiting: list[tuple[str, int]] = []  # (name, press), for a frame after it
        self._todo: queue.Queue[tuple[str, np.ndarray]] = queue.Queue(PENDING)
        self.written = 0
        self._writer: threading.Thread | None = None  # started at the first snapshot

    def frame(self, t_ns: int, image: np.ndarray) -> None:
        """A frame the camera took at t_ns, shrunk and kept; a call waiting for one after
        its press has it now."""
        height, width = image.shape[:2]
        scale = SIDE_PX / max(height, width)
        if scale < 1:
            size = (round(width * scale), round(height * scale))
            # Linear: some 2 ms a frame here, 1 % of its reading; INTER_AREA took 15 ms
            # (bench/snapshot.py), for a picture a judge sees no better.
            image = cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)
        else:
            image = image.copy()  # the source may reuse its buffer
        self._frames.append((t_ns, image))
        waiting, self._waiting = self._waiting, []
        for name, press_ns in waiting:
            if t_ns - press_ns <= AFTER_NS:
                self._write(name, image)
            else:
                log.info("snapshot %s: no frame within %g s of its press", name, AFTER_NS / 1e9)

    def lost(self) -> None:
        """The camera is lost: what it saw is no longer what the table shows."""
        self._frames.clear()

    def told(self, line: bytes) -> None:
        """A line from the daemon: `snap NAME T`; another is said in the log, skipped."""
        words = line.split()
        if (
            len(line) > LINE_MAX
            or len(words) != 3
            or words[0] != b"snap"
            or not words[2].isdigit()
            or not is_clip_name(name := words[1].decode("ascii", "replace"))
        ):
            log.warning("a word from the daemon refused: %r", line[:LINE_MAX])
            return
        press_ns = int(words[2])
        before = [image for t_ns, image in self._frames if t_ns <= press_ns]
        if before:
            self._write(name, before[-1])
        elif len(self._waiting) < PENDING:
            self._waiting.append((name, press_ns))

    def wait(self) -> None:
        """Until every snapshot handed to the writer is written, or lost."""
        self._todo.join()

    def _write(self, name: str, image: np.ndarray) -> None:
        """To the writer: the image is kept as it is (a frame kept is never changed)."""
        if self._writer is None:
            self._writer = threading.Thread(target=self._run, name="snapshots", daemon=True)
            self._writer.start()
        try:
            self._todo.put_nowait((name, image))
        except queue.Full:
            log.warning("snapshot %s: lost, %d others wait for the disk", name, PENDING)

    def _run(self) -> None:
        while True:
            name, image = self._todo.get()
            try:
                self._save(name, image)
            finally:
                self._todo.task_done()

    def _save(self, name: str, image: np.ndarray) -> None:
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, QUALITY])
        if not ok:  # OpenCV's JPEG encoder refuses no BGR image; said if it ever does
            log.warning("snapshot %s: not encoded", name)
            return
        try:
            path = self.clips.save_snapshot(name, jpeg.tobytes())
        except OSError as err:
            log.warning("snapshot %s: lost, the disk refused it: %s", name, err.strerror or err)
            return
        self.written += 1
        log.info("snapshot %s: %d bytes", path.name, len(jpeg))
