"""Sound: the voice onsets in a recording (onsets.py) and reading WAV files (wav.py)."""
