"""Sound: the microphone's capture on the monotonic clock (capture.py, clock.py, pcm.py)."""
