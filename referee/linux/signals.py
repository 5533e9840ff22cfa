"""The daemon's signals: caught from its first instruction, taken by the main loop.

`referee run` takes a while to start (its imports, a long game's replay, a rescue file
put back), and a signal then would end it as the default does: SIGUSR1 kills, SIGINT
is a traceback, SIGTERM loses what waits for the disk. So `catch` is the first thing
it does, before anything else is imported: from then on a signal is held until the main
loop takes it (`handed_to`), at once for those that came while it started; a signal
after the loop changes nothing while the box closes.

SIGTERM, SIGINT, SIGHUP (the terminal went away, or `kill -HUP`) and SIGQUIT end the box
cleanly: the LEDs go dark and what waits for the disk is kept. SIGUSR1 asks for a status
line in the log.
"""

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

QUIT_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
HANDLED = (*QUIT_SIGNALS, signal.SIGUSR1)

_held: dict[int, None] = {}  # the signals that came with nobody to take them, in order
_taker: list[Callable[[int], None]] = []  # the main loop's, while it runs


def _caught(signum: int, frame: FrameType | None) -> None:
    if _taker:
        _taker[-1](signum)
    else:
        _held[signum] = None  # once is enough: a second SIGTERM says no more


def catch() -> None:
    """Hold every signal the daemon handles until the main loop takes them."""
    for sig in HANDLED:
        signal.signal(sig, _caught)


@contextmanager
def handed_to(take: Callable[[int], None]) -> Iterator[None]:
    """Each signal to `take` for the block, first those held since `catch`; then the
    handlers there were before (the daemon's: held again)."""
    previous = {sig: signal.signal(sig, _caught) for sig in HANDLED}
    _taker.append(take)
    try:
        while _held:
            signum = next(iter(_held))
            del _held[signum]
            take(signum)
        yield
    finally:
        _taker.pop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
