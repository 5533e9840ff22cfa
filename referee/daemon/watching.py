"""The camera's work for the main loop: what it sees, and whether it watches (docs/design.md,
"The camera's eyes").

The frames are read in a process of its own (camera/process.py); the loop takes each
reading (inbox.Seen) as counts, in O(cards), and shows them. With the camera off nothing
of it is imported and no process runs.
"""

import logging
from typing import TYPE_CHECKING

from referee.config import CameraConfig
from referee.inbox import Inbox, Seen
from referee.view import TableSeen

if TYPE_CHECKING:
    from referee.camera.process import CameraProcess

log = logging.getLogger(__name__)


class Watching:
    """The camera's process while [camera] source is not off, and its latest reading."""

    def __init__(self, camera: CameraConfig, inbox: Inbox) -> None:
        self._process: CameraProcess | None = None
        self._seen: Seen | None = None
        self._table: TableSeen | None = None
        if camera.source != "off":
            # Imported here: the camera's wire alone, neither OpenCV nor numpy.
            from referee.camera import process

            self._process = process.CameraProcess(camera.source, inbox.put)

    @property
    def watching(self) -> bool:
        """The camera gives frames now: the screens show its mark."""
        return self._process is not None and self._process.watching

    def seen(self, seen: Seen) -> None:
        """A frame's reading; one older than the last (a process started again) is not."""
        if self._seen is not None and seen.t_ns < self._seen.t_ns:
            return
        self._seen = seen
        sure = sum(card.sure for card in seen.cards)
        self._table = TableSeen(len(seen.cards), sure, len(seen.sets))

    def view(self) -> TableSeen | None:
        """What the camera sees, while it watches."""
        return self._table if self.watching else None

    @property
    def pid(self) -> int | None:
        """The camera's process now, if one runs (for the tests and the log)."""
        process = None if self._process is None else self._process.process
        return None if process is None else process.pid

    def close(self) -> None:
        if self._process is not None:
            self._process.close()
