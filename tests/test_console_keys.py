"""The console's keyboards from evdev (referee/inputs/console_keys.py): each key with the
kernel's stamp, in the main loop's one wait. A keyboard here is a pipe the test writes
struct input_event records into; the device's ioctls are played by a fake."""

import errno
import logging
import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.edges import Edge, Inbox, LostTrack, Quit, SourceStatus
from referee.inputs import console_keys
from referee.inputs.console_keys import (
    EV_KEY,
    EV_SYN,
    EVENT,
    QUEUE_BOUND_NS,
    SYN_DROPPED,
    ConsoleKeys,
    Keyboard,
    NoKeyboard,
    open_keyboards,
)
from referee.inputs.mux import Inputs

CODES = {"1": 2, "2": 3, "q": 16, "s": 31, "v": 47, "escape": 1}


class Clock:
    def __init__(self, now: int = 1_000 * 10**9) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def key(name: str, value: int, t_ns: int) -> bytes:
    return EVENT.pack(t_ns // 10**9, t_ns % 10**9 // 1000, EV_KEY, CODES[name], value)


@pytest.fixture
def keyboard() -> Iterator[tuple[Keyboard, int]]:
    """A keyboard (the read end) and where its events are written."""
    read, write = os.pipe()
    os.set_blocking(read, False)
    yield Keyboard(read, "Test Keyboard", "/dev/input/event3"), write
    os.close(write)


def test_keys_are_edges_at_the_kernels_stamps_and_a_repeat_is_no_press(keyboard):
    board, write = keyboard
    clock = Clock()
    keys = ConsoleKeys([board], clock)
    t = clock.now - 50_000_000
    os.write(write, key("2", 1, t) + key("2", 2, t + 500) + key("1", 1, t + 1_000_000))
    os.write(write, key("2", 0, t + 80_000_000) + key("1", 0, t + 90_000_000))
    clock.now += 100_000_000
    assert keys.read() == [
        Edge("P2", t, True),
        Edge("P1", t + 1_000_000, True),
        Edge("P2", t + 80_000_000, False),
        Edge("P1", t + 90_000_000, False),
    ]
    assert keys.watermark_ns == clock.now - QUEUE_BOUND_NS
    assert keys.wake_ns(None) is None and keys.wake_ns(5) == 5 + QUEUE_BOUND_NS
    keys.close()


def test_q_and_escape_quit_and_other_keys_are_nothing(keyboard):
    board, write = keyboard
    keys = ConsoleKeys([board], Clock())
    t = 10**9
    os.write(write, key("q", 1, t) + key("q", 0, t) + key("escape", 1, t))
    os.write(write, EVENT.pack(1, 0, EV_KEY, 57, 1))  # space: no button
    os.write(write, EVENT.pack(1, 0, EV_SYN, 0, 0))  # a report's end
    assert keys.read() == [Quit("q pressed"), Quit("escape pressed")]
    keys.close()


def test_lost_events_release_the_keys_held(keyboard, caplog):
    board, write = keyboard
    clock = Clock()
    keys = ConsoleKeys([board], clock)
    os.write(write, key("v", 1, 10**9) + key("s", 1, 10**9))
    os.write(write, EVENT.pack(2, 0, EV_SYN, SYN_DROPPED, 0))
    with caplog.at_level(logging.WARNING):
        items = keys.read()
    assert items[2:] == [LostTrack("SUPER", clock.now), LostTrack("VALID", clock.now)]
    assert "keys were lost" in caplog.text
    os.write(write, key("v", 1, 3 * 10**9))  # down again: a press, not a repeat
    assert keys.read() == [Edge("VALID", 3 * 10**9, True)]
    keys.close()


def test_a_keyboard_unplugged_is_said_and_no_longer_waited_on(keyboard):
    board, write = keyboard
    read2, write2 = os.pipe()
    os.set_blocking(read2, False)
    keys = ConsoleKeys([board, Keyboard(read2, "Other", "/dev/input/event4")], Clock())
    os.close(write2)  # end of file, as a read of an unplugged device fails with ENODEV
    assert keys.read() == [
        SourceStatus("keyboard", "the keyboard Other went away (1 left)", ok=True, condition="gone")
    ]
    os.write(write, key("1", 1, 10**9))
    assert keys.read() == [Edge("P1", 10**9, True)]
    keys.close()


def test_the_main_loop_wakes_when_a_key_comes(keyboard):
    board, write = keyboard
    inbox = Inbox()
    inputs = Inputs([ConsoleKeys([board], Clock())], inbox, clock=Clock())
    assert inputs.wait(0) == []
    os.write(write, key("1", 1, 10**9))
    assert inputs.wait(5) == [Edge("P1", 10**9, True)]  # woken at once, not after 5 s
    inputs.close()
    inbox.close()


# --- opening the devices -----------------------------------------------------------------


class Devices:
    """The input devices' ioctls: which of the files (by path) is a keyboard, named what,
    and which one another program has grabbed."""

    def __init__(self, keyboards: dict[str, str], grabbed: tuple[str, ...] = ()) -> None:
        self.keyboards = keyboards
        self.grabbed = grabbed
        self.calls: list[tuple[str, int]] = []

    def __call__(self, fd: int, request: int, arg: bytes | int) -> bytes | int:
        path = str(Path(f"/proc/self/fd/{fd}").readlink())
        self.calls.append((Path(path).name, request))
        if request == console_keys.EVIOCGBIT_KEY:
            bits = bytearray(len(arg) if isinstance(arg, bytes) else 0)
            if path in self.keyboards:
                for code in range(1, 58):
                    bits[code // 8] |= 1 << code % 8
            return bytes(bits)
        if request == console_keys.EVIOCGNAME:
            return self.keyboards[path].encode() + b"\0" * 10
        if request == console_keys.EVIOCGRAB and path in self.grabbed:
            raise OSError(errno.EBUSY, "Device or resource busy")
        return 0


@pytest.fixture
def events(tmp_path) -> list[str]:
    paths = [tmp_path / f"event{n}" for n in range(3)]
    for path in paths:
        path.write_bytes(b"")
    return [str(p) for p in paths]


def test_only_keyboards_are_opened_grabbed_and_set_to_the_monotonic_clock(events):
    devices = Devices({events[0]: "USB Keyboard"})  # the others: a mouse, a power button
    opened = open_keyboards(events, devices)
    try:
        assert [(k.name, k.path) for k in opened] == [("USB Keyboard", events[0])]
        asked = [request for name, request in devices.calls if name == "event0"]
        assert console_keys.EVIOCSCLOCKID in asked and asked[-1] == console_keys.EVIOCGRAB
    finally:
        for k in opened:
            os.close(k.fd)


def test_a_keyboard_another_program_has_grabbed_is_left_to_it(events):
    devices = Devices({events[0]: "Taken", events[1]: "Free"}, grabbed=(events[0],))
    opened = open_keyboards(events, devices)
    assert [k.name for k in opened] == ["Free"]
    os.close(opened[0].fd)


def test_no_keyboard_says_why_in_one_line(events):
    with pytest.raises(NoKeyboard, match=r"^no keyboard among the input devices"):
        open_keyboards(events, Devices({}))
    with pytest.raises(NoKeyboard, match=r"^no keyboard among the input devices"):
        open_keyboards([], Devices({}))


def test_no_permission_names_the_group(events, monkeypatch):
    def refused(path, flags):
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(console_keys.os, "open", refused)  # as /dev/input's 0660 root:input
    with pytest.raises(NoKeyboard) as raised:
        open_keyboards(events[:1], Devices({}))
    assert str(raised.value) == (
        f"{events[0]}: permission denied: the user must be in the `input` group"
    )


def test_the_event_record_is_the_kernels():
    # Two native longs (the time), two shorts and an int: 24 bytes on a 64-bit kernel.
    assert EVENT.size == 2 * struct.calcsize("@L") + 8
    assert console_keys.EVIOCGRAB == 0x40044590 and console_keys.EVIOCSCLOCKID == 0x400445A0
