"""What the box shows and says: the screens, the terminal, the LEDs, the sound."""

import os

# Every module here that imports pygame sits in this package: its greeting on import is
# not for the journal.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
