"""The camera's process: `python -m referee.camera.watch SOURCE`, started by the daemon.

It reads the table FRAMES_PER_S times a second (vision/layout.py) and writes each frame's
reading to its output, a line each (wire.py); a source lost is said once and opened again
RETRY_S later, twice as long each time it still cannot be, up to RETRY_MAX_S (the
microphone's figures). Reading a frame costs some 100 ms of a core and OpenCV's memory:
so it runs here, never in the daemon's process, at nice 10, OpenCV on one thread, and
it waits at least as long as a frame took before it reads the next (half a core at most,
on a Pi 4 too, where a frame takes three to five times as long). It dies with the daemon
(children.die_with_parent), and ends when the daemon stops reading its output.

Given the clips' folder and their budget, it keeps the last frames shrunk and writes each
call's snapshot when the daemon's line on its input says so (snapshot.py): the daemon's
loop never touches the disk, and the frames never leave this process but as those files.
"""

import logging
import os
import select
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import cv2
import numpy as np

from referee.audio.clips import ClipStore
from referee.errors import ModelDamaged
from referee.framing import LineFramer
from referee.linux.allocator import give_back_file_pages, give_back_free_memory
from referee.linux.children import Backoff, die_with_parent
from referee.units import NS_PER_S
from referee.vision.layout import read_frame

from .snapshot import LINE_MAX, Snapshots
from .sources import FolderSource, Source, SourceLost, open_source
from .wire import PHONE, reading_line, status_line, unread_line

log = logging.getLogger(__name__)

# Two frames a second: a card dealt or taken stays for seconds, a caller picks up three
# cards over a second or more, and the screen's "no SET" can wait half a second. More
# would cost the Pi's cores for nothing the table sees.
FRAMES_PER_S = 2
RETRY_S = 0.5
RETRY_MAX_S = 8.0
NICE = 10
MODEL_DAMAGED = "the camera's card model is damaged: no card read; reinstall referee"
# Where OpenCV's and numpy's libraries are (the wheels' bundled ones beside them): what of
# them loading and a first frame read, and the frames do not, goes back to the kernel.
LIBRARIES = tuple({Path(cv2.__file__).parents[1], Path(np.__file__).parents[1]})


class Watch:
    """The loop of the camera's process: `out` the daemon's pipe, `clock` the time,
    `opener` the source's (the tests turn it a pass at a time: `step`)."""

    def __init__(
        self,
        spec: str,
        out: BinaryIO,
        *,
        period_ns: int = NS_PER_S // FRAMES_PER_S,
        clock: Callable[[], int] = time.monotonic_ns,
        opener: Callable[[str], Source] = open_source,
        snapshots: Snapshots | None = None,
    ) -> None:
        self.spec, self.out, self.period_ns = spec, out, period_ns
        self.clock, self.opener, self.snapshots = clock, opener, snapshots
        self.source: Source | None = None
        self.backoff = Backoff(RETRY_S, RETRY_MAX_S)
        self._said: tuple[str, bool] | None = None  # the last change told
        self._refused = False  # the last frame could not be read
        self._damaged = False  # the card model cannot be trusted: no frame is read
        # No frame read yet from the source opened: its first is said in the log, which
        # tells a camera that opens but gives nothing from one that is seen through.
        self._first = True

    def step(self) -> float:
        """One pass: the source opened if it is not, one frame read and told; how many
        seconds to wait before the next."""
        if self.source is None:
            try:
                self.source = self.opener(self.spec)
            except SourceLost as err:
                # `auto` finding none at first is a box without a camera: the log says
                # so, the screen does not (as with the microphone).
                quiet = self.spec == "auto" and self._said is None
                self._tell(f"camera {self.spec}: {err}: waiting for it", ok=False, quiet=quiet)
                return self.backoff.after()
            self.backoff.reset()
            self._first = True
            again = " again" if self._said is not None else ""
            if not self._damaged:  # back, it still reads no card
                self._tell(f"camera {self.source.name} watching{again}", ok=True)
        started = self.clock()
        try:
            frame = self.source.read()
        except SourceLost as err:
            self.source.close()
            self.source = None
            if self.snapshots is not None:
                self.snapshots.lost()
            self._tell(f"camera lost ({err}): waiting for it", ok=False)
            return self.backoff.after()
        unread = self.source.unread() if isinstance(self.source, FolderSource) else None
        if unread is not None:  # a frame refused: a phone may wait for its words
            self._send(unread_line(*unread))
        if frame is not None:
            if self.snapshots is not None:
                self.snapshots.frame(frame.t_ns, frame.image)
            if self._damaged:  # kept for the calls' snapshots, not read
                return self.period_ns / NS_PER_S
            try:
                layout = read_frame(frame.image)
            except ModelDamaged as err:
                # No reading can be trusted: none is sent, and the daemon counts the camera
                # as not watching (no hint, no judgement), as a camera lost. The frames are
                # no longer read; a call's snapshot still shows the table. The file's path
                # is the log's: on a 3.5" screen it hid what to do.
                self._damaged = True
                log.error("camera %s: %s", self.spec, err)
                self._tell(MODEL_DAMAGED, ok=False)
                return self.period_ns / NS_PER_S
            except cv2.error as err:  # a frame OpenCV cannot work on: skipped, said once
                if not self._refused:
                    log.warning("camera %s: a frame could not be read: %s", self.spec, err)
                self._refused = True
                return self.period_ns / NS_PER_S
            self._refused = False
            if self._first:
                self._first = False
                height, width = frame.image.shape[:2]
                log.info(
                    "camera %s: frames come, the first %dx%d with %d cards seen",
                    self.source.name,
                    width,
                    height,
                    len(layout.cards),
                )
                give_back_file_pages(LIBRARIES)
            cards = [(c.face.values(), c.sure, c.box) for c in layout.cards]
            self._send(reading_line(frame.t_ns, cards, layout.sets))
            del frame, layout
            # A frame's images are megabytes, freed at once: glibc would keep them.
            give_back_free_memory()
        took = self.clock() - started
        return max(self.period_ns - took, took) / NS_PER_S

    def _tell(self, text: str, *, ok: bool, quiet: bool = False) -> None:
        """A change of the camera, told once: a loss is not told again at every try that
        fails to open it again (whatever each says)."""
        if self._said is not None and self._said[1] == ok:
            log.debug("%s", text)
            return
        self._said = (text, ok)
        (log.info if ok else log.warning)("%s", text)
        if not quiet:
            self._send(status_line(text, ok=ok))

    def _send(self, line: bytes) -> None:
        self.out.write(line)
        self.out.flush()

    def run(self, words: int | None = None) -> None:
        """Step after step; between them, the daemon's words (snapshot.py) on the
        descriptor `words` (its input) while it is open."""
        lines, snapshots = LineFramer(LINE_MAX), self.snapshots
        while True:
            # From the step's end: a frame read slower than half the period is followed by
            # as long a wait, in which the daemon's words are read (counted from the step's
            # start, a Pi's or an emulated machine's slow frames left none).
            pause = self.step()
            until = time.monotonic() + pause
            while (left := until - time.monotonic()) > 0:
                if words is None or snapshots is None:
                    time.sleep(left)
                elif select.select([words], [], [], left)[0]:
                    data = os.read(words, 4096)
                    if not data:  # the daemon closed it: no more snapshots asked
                        words = None
                    for line in lines.feed(data):
                        snapshots.told(line)


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    args = sys.argv[1:] if argv is None else argv
    opener: Callable[[str], Source] = open_source
    if args[:1] == [PHONE]:  # the phones' photos: stamped when they arrived
        args = args[1:]
        opener = _phones
    if len(args) not in (1, 3) or (len(args) == 3 and not args[2].isdigit()):
        sys.stderr.write(
            f"usage: python -m referee.camera.watch [{PHONE}] SOURCE [CLIPS MAX_BYTES]\n"
        )
        return 2
    logging.basicConfig(level=logging.INFO, format="referee camera: %(message)s")
    os.nice(NICE)
    cv2.setNumThreads(1)
    snapshots = None if len(args) == 1 else Snapshots(ClipStore(Path(args[1]), int(args[2])))
    try:
        watch = Watch(args[0], sys.stdout.buffer, opener=opener, snapshots=snapshots)
        watch.run(sys.stdin.fileno())
    except (BrokenPipeError, KeyboardInterrupt):  # the daemon stopped reading: its end
        return 0
    return 0


def _phones(folder: str) -> Source:
    return FolderSource(Path(folder), arrived=True)


if __name__ == "__main__":
    sys.exit(main())
