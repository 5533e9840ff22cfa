"""Sound: the microphone's capture on the monotonic clock (capture.py, clock.py, pcm.py), the
voice onsets in a recording (onsets.py) and reading WAV files (wav.py)."""
