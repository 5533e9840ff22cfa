"""Sound: the microphone's capture on the monotonic clock (capture.py, clock.py, pcm.py), the
voice onsets in a recording (onsets.py) and reading WAV files (wav.py)."""

import os

# Every module here imports numpy, after this. OpenBLAS (numpy's linear algebra) starts a
# thread per further core at its load, idle but for a matrix product, which the sound
# never makes large enough to share out; one such thread would keep the daemon from
# forking the clips' cutter (referee/linux/children.py: a fork with no other thread), and would
# cost each process its stack and buffers. Set by the environment, it is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
