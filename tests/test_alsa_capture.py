"""The real ctypes path to libasound (referee/audio/pcm.py): every call made as on the box.

ALSA's `null` device runs the whole path on any machine with libasound (it captures
silence, as fast as it is read, and stamps its status as a card's driver would); a real
capture card, where there is one, runs it at the card's pace with the kernel's stamps.
"""

import time

import numpy as np
import pytest

from referee.audio.capture import Capture
from referee.audio.pcm import AlsaCapture, CaptureError, find_capture_device, libasound

try:
    libasound()
except CaptureError as err:
    pytest.skip(str(err), allow_module_level=True)


def test_every_call_is_there_and_a_missing_device_is_named():
    with pytest.raises(CaptureError, match="hw:99"):
        AlsaCapture("hw:99")


def test_the_null_device_is_read_with_monotonic_stamps():
    pcm = AlsaCapture("null")
    try:
        assert (pcm.rate, pcm.period) == (48_000, 2_400)
        block = np.empty(4_800, np.int16)
        before = time.monotonic_ns()
        pcm.wait(100)
        assert pcm.read(block) == len(block)
        status = pcm.status()
        after = time.monotonic_ns()
    finally:
        pcm.close()
    assert status is not None and before <= status.stamp_ns <= after


def test_a_real_capture_card_fills_the_ring_at_its_pace():
    device = find_capture_device()
    if device is None:
        pytest.skip("no sound card that captures here (/proc/asound lists none)")
    capture = Capture(AlsaCapture(device), seconds=2)
    start = time.monotonic_ns()
    try:
        while time.monotonic_ns() - start < 500_000_000:
            capture.pump(100)
    finally:
        capture.close()
    sound = capture.sound(start, time.monotonic_ns())
    assert capture.overruns == 0
    # Half a second at the card's rate, placed within a few ms of when it was read.
    assert abs(len(sound.samples) * sound.period_ns - 0.5e9) < 0.1e9
    assert start - 50_000_000 < sound.first_ns < start + 100_000_000
