"""ALSA's library prints its errors on stderr itself: eight lines of "ALSA lib ... cannot
find card" where there is no sound card, though SDL says the same in one line, which
the referee logs. While the sound card is opened, stderr (the descriptor: libasound
writes to it from SDL's audio thread) goes nowhere.

A handler set with snd_lib_error_set_handler would be narrower, but it would have to be
C: a Python one deadlocks, called from SDL's audio thread while the main thread holds
the GIL and waits for that thread.
"""

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def alsa_quiet() -> Iterator[None]:
    """Standard error goes nowhere for the block (keep it short: opening the card)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    os.dup2(null, 2)
    os.close(null)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
