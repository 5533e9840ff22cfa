"""The main loop's one wait: every input source and the inbox, read together.

`wait` sleeps on every source's file descriptor and the inbox's pipe (the kernel wakes
it: no thread and no polling for the buttons), then reads every source until it is empty
and drains the inbox, whatever woke it, so that nothing is decided before everything
already there has been read (docs/design.md, "Event time"). The watermark is the smallest of
the sources' and never goes back.
"""

import selectors
import time
from collections.abc import Callable, Sequence

from referee.inbox import Inbox, InboxItem
from referee.inputs import InputSource, SourceItem
from referee.units import NS_PER_S

# What the wait hands the loop: the sources' items, then the inbox's.
Item = SourceItem | InboxItem


class Inputs:
    def __init__(
        self,
        sources: Sequence[InputSource],
        inbox: Inbox,
        *,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        if not sources:
            raise ValueError("no input source")
        self.sources = tuple(sources)
        self.inbox = inbox
        self._clock = clock
        # select(2): its timeout is in microseconds, where poll's and epoll's are whole
        # milliseconds, and a decision waits for a watermark a millisecond ahead. Like
        # poll and unlike epoll, it forgets nothing when a board that comes back reuses
        # the number of its closed descriptor. The box waits on a handful of them.
        self._selector = selectors.SelectSelector()
        self._selector.register(inbox.fileno(), selectors.EVENT_READ)
        self._watched: dict[int, InputSource] = {}
        self._watermark = min(s.watermark_ns for s in self.sources)

    @property
    def name(self) -> str:
        return " + ".join(s.name for s in self.sources)

    @property
    def resolution_ns(self) -> int:
        return max(s.resolution_ns for s in self.sources)

    @property
    def watermark_ns(self) -> int:
        """Every edge stamped before this has been read from every source."""
        return self._watermark

    def wake_on(self, fd: int) -> None:
        """Wake the wait also when this descriptor, no source's, is readable (the store's
        folder changed): its owner reads it."""
        self._selector.register(fd, selectors.EVENT_READ)

    def held_at_start(self) -> tuple[str, ...]:
        return tuple(b for s in self.sources for b in s.held_at_start())

    def wake_ns(self, wanted_ns: int | None) -> int | None:
        """When to read the sources again, for the watermark to pass wanted_ns and for
        their own upkeep; None when only their file descriptors can bring news."""
        times = [t for s in self.sources if (t := s.wake_ns(wanted_ns)) is not None]
        return min(times, default=None)

    def wait(self, timeout_s: float | None, *, awake: bool = False) -> list[Item]:
        """Sleep until a source or the inbox has news or the timeout ends; then return
        everything every source and the inbox hold, sources first, and move the
        watermark to where the sources now stand.

        `awake`: look for news again and again instead of sleeping, for a timeout of a
        millisecond or two. A CPU that sleeps can take milliseconds to wake (a deep idle
        state; a virtual machine's CPU, until its host runs it again), and the box waits
        so for the press it is about to decide."""
        self._watch()
        if awake and timeout_s is not None:
            end_ns = time.monotonic_ns() + round(timeout_s * NS_PER_S)
            while not self._selector.select(0) and time.monotonic_ns() < end_ns:
                pass
        else:
            self._selector.select(timeout_s)
        return self.read()

    def read(self) -> list[Item]:
        """Everything the sources and the inbox hold now, without waiting."""
        items: list[Item] = []
        for source in self.sources:
            items += source.read()
        items += self.inbox.drain()
        self._watermark = max(self._watermark, min(s.watermark_ns for s in self.sources))
        return items

    def _watch(self) -> None:
        """Wait on each source's current descriptor: a board's changes as it comes and goes."""
        wanted = {fd: s for s in self.sources if (fd := s.fileno()) is not None}
        for fd in self._watched.keys() - wanted.keys():
            self._selector.unregister(fd)
        for fd in wanted.keys() - self._watched.keys():
            self._selector.register(fd, selectors.EVENT_READ)
        self._watched = wanted

    def close(self) -> None:
        """Close every source (the inbox is its maker's)."""
        self._selector.close()
        for source in self.sources:
            source.close()
