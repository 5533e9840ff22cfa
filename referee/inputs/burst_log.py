"""Warnings of one kind logged once a burst, so that a flood of bad lines cannot flood the log.

A board gone mad (noise on a UART, a firmware bug) can send thousands of bad lines a
second, each worth a warning. The first of a burst is logged as it is, with its detail;
the rest are counted, and when the burst is over (nothing of its kind for QUIET_NS) one
line says how many more came and what the last one was. The counts a source shows on
the screen are its own: this is only the log.
"""

import logging

QUIET_NS = 1_000_000_000


class BurstLog:
    """One kind of warning (`kind`, plural: "lines that do not parse") of one source."""

    def __init__(self, log: logging.Logger, source: str, kind: str) -> None:
        self._log = log
        self._source = source
        self._kind = kind
        self._first_ns: int | None = None  # when the burst began; None: no burst
        self._last_ns = 0
        self._untold = 0  # warnings of the burst not logged yet
        self._last = ""

    def warn(self, now_ns: int, text: str) -> None:
        """A warning at now_ns: logged if it begins a burst, else counted."""
        self.tick(now_ns)
        if self._first_ns is None:
            self._first_ns = now_ns
            self._log.warning("%s: %s", self._source, text)
        else:
            self._untold += 1
            self._last = text
        self._last_ns = now_ns

    def tick(self, now_ns: int) -> None:
        """Say how the burst went once it is over; call it as time passes."""
        if self._first_ns is None or now_ns - self._last_ns < QUIET_NS:
            return
        if self._untold:
            self._log.warning(
                "%s: %d more %s in %.3g s; the last: %s",
                self._source,
                self._untold,
                self._kind,
                (self._last_ns - self._first_ns) / 1e9,
                self._last,
            )
        self._first_ns = None
        self._untold = 0
