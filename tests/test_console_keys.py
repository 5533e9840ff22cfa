"""The console's keyboards from evdev (referee/inputs/console_keys.py): each key with the
kernel's stamp, in the main loop's one wait. A keyboard here is a pipe the test writes
struct input_event records into; the device's ioctls are played by a fake."""

import errno
import logging
import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.buttons import KEYMAP, QUIT_KEY
from referee.daemon.mux import Inputs
from referee.inbox import Inbox, Quit, SourceStatus
from referee.inputs import console_keys
from referee.inputs.console_keys import (
    EV_KEY,
    EV_SYN,
    EVENT,
    KEY_NAMES,
    QUEUE_BOUND_NS,
    SYN_DROPPED,
    ConsoleKeys,
    Keyboard,
    NoKeyboard,
    open_console_keys,
)
from referee.inputs.edges import Edge, LostTrack
from referee.linux import inotify

from .conftest import ROOT
from .fake_evdev import Devices, key, plug


class Clock:
    def __init__(self, now: int = 1_000 * 10**9) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


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


@pytest.fixture
def folder(tmp_path) -> Iterator[Path]:
    """A /dev/input of our own: three devices, none a keyboard unless a test says so."""
    made = tmp_path / "input"
    made.mkdir()
    writers = [plug(made, f"event{n}") for n in range(3)]
    (made / "mice").write_bytes(b"")
    yield made
    for fd in writers:
        os.close(fd)


def test_only_keyboards_are_opened_grabbed_and_set_to_the_monotonic_clock(folder):
    devices = Devices({f"{folder}/event0": "USB Keyboard"})  # the others: a mouse, a button
    keys = open_console_keys(folder, Clock(), devices)
    try:
        assert [(k.name, k.path) for k in keys.keyboards] == [("USB Keyboard", f"{folder}/event0")]
        asked = [request for name, request in devices.calls if name == "event0"]
        assert console_keys.EVIOCSCLOCKID in asked and asked[-1] == console_keys.EVIOCGRAB
        assert {name for name, _ in devices.calls} == {"event0", "event1", "event2"}
    finally:
        keys.close()


def test_a_keyboard_another_program_has_grabbed_is_left_to_it(folder):
    taken, free = f"{folder}/event0", f"{folder}/event1"
    devices = Devices({taken: "Taken", free: "Free"}, grabbed=(taken,))
    keys = open_console_keys(folder, Clock(), devices)
    assert [k.name for k in keys.keyboards] == ["Free"]
    keys.close()


def test_no_keyboard_says_why_in_one_line(folder, tmp_path):
    with pytest.raises(NoKeyboard, match=r"^no keyboard among the input devices \(.*/event\*\)$"):
        open_console_keys(folder, Clock(), Devices({}))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NoKeyboard, match=r"^no keyboard among the input devices"):
        open_console_keys(empty, Clock(), Devices({}))


def test_no_permission_names_the_group(folder, monkeypatch):
    def refused(path, flags):
        raise PermissionError(errno.EACCES, "Permission denied", path)

    for n in (1, 2):
        (folder / f"event{n}").unlink()
    monkeypatch.setattr(console_keys.os, "open", refused)  # as /dev/input's 0660 root:input
    with pytest.raises(NoKeyboard) as raised:
        open_console_keys(folder, Clock(), Devices({}))
    assert str(raised.value) == (
        f"{folder}/event0: permission denied: the user must be in the `input` group"
    )


# --- keyboards plugged in and pulled out while the box runs --------------------------------


def test_a_keyboard_plugged_in_later_wakes_the_loop_and_is_read(folder, caplog):
    first = f"{folder}/event0"
    devices = Devices({first: "Old Keyboard", f"{folder}/event7": "New Keyboard"})
    inbox = Inbox()
    keys = open_console_keys(folder, Clock(), devices)
    inputs = Inputs([keys], inbox, clock=Clock())
    try:
        assert inputs.wait(0) == []
        with caplog.at_level(logging.INFO):
            write = plug(folder, "event7")
            said = inputs.wait(5)  # woken at once by the new device, not after 5 s
        assert said == [
            SourceStatus(
                "keyboard", "the keyboard New Keyboard is plugged in (2 in all)", ok=True,
                condition="gone",
            )
        ]  # fmt: skip
        assert [r.getMessage() for r in caplog.records] == [
            f"keyboard on the console: New Keyboard ({folder}/event7)"
        ]
        os.write(write, key("1", 1, 10**9))
        assert inputs.wait(5) == [Edge("P1", 10**9, True)]
        os.close(write)
    finally:
        inputs.close()
        inbox.close()


def test_a_keyboard_pulled_out_and_another_plugged_in_at_its_place(folder, caplog):
    path = f"{folder}/event5"
    devices = Devices({path: "USB Keyboard"})
    write = plug(folder, "event5")
    keys = open_console_keys(folder, Clock(), devices)
    try:
        with caplog.at_level(logging.INFO):
            os.close(write)  # unplugged: its reads end (ENODEV on a real device)
            (folder / "event5").unlink()  # and its node goes
            write = plug(folder, "event5")  # plugged back in: a new node at the same path
            said = keys.read()
        gone = "the keyboard USB Keyboard went away (0 left)"
        back = "the keyboard USB Keyboard is plugged in (1 in all)"
        assert said == [
            SourceStatus("keyboard", gone, ok=False, condition="gone"),
            SourceStatus("keyboard", back, ok=True, condition="gone"),
        ]
        # One line each, and neither an error.
        assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
            ("WARNING", gone),
            ("INFO", f"keyboard on the console: USB Keyboard ({path})"),
        ]
        os.write(write, key("v", 1, 10**9))
        assert keys.read() == [Edge("VALID", 10**9, True)]
        os.close(write)
    finally:
        keys.close()


def test_a_device_is_opened_once_udev_has_given_it_to_the_input_group(folder, monkeypatch):
    """The kernel makes the node root's alone; udev then changes its group and mode."""
    path = f"{folder}/event4"
    devices = Devices({f"{folder}/event0": "Old", path: "New"})
    keys = open_console_keys(folder, Clock(), devices)
    real_open = os.open
    denied = {path}

    def open_as_user(name, flags, *args):
        if str(name) in denied:
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return real_open(name, flags, *args)

    write = plug(folder, "event4")
    monkeypatch.setattr(console_keys.os, "open", open_as_user)
    try:
        assert keys.read() == []  # not ours to open yet
        denied.clear()
        Path(path).chmod(0o660)  # udev: group input, 0660
        assert [item.text for item in keys.read()] == ["the keyboard New is plugged in (2 in all)"]
        os.close(write)
    finally:
        keys.close()


def test_a_device_that_is_no_keyboard_is_looked_at_once(folder):
    devices = Devices({f"{folder}/event0": "Keyboard"})
    keys = open_console_keys(folder, Clock(), devices)
    try:
        write = plug(folder, "event6")  # a mouse
        assert keys.read() == []
        looked = len(devices.calls)
        (folder / "event6").chmod(0o660)  # udev at work on it
        assert keys.read() == [] and len(devices.calls) == looked
        os.close(write)
    finally:
        keys.close()


def test_without_inotify_the_keyboards_there_are_read_and_the_log_says_so(
    folder, monkeypatch, caplog
):
    monkeypatch.setattr(inotify, "_libc", lambda: None)
    with caplog.at_level(logging.WARNING):
        keys = open_console_keys(folder, Clock(), Devices({f"{folder}/event0": "Keyboard"}))
    assert [k.name for k in keys.keyboards] == ["Keyboard"]
    assert keys.fileno() is not None
    assert f"{folder}: not watched: a keyboard plugged in is read from the next start" in (
        caplog.text
    )
    keys.close()


# <linux/input-event-codes.h>: KEY_1 to KEY_8, and the letters by their place on a US
# keyboard (KEY_Q is the key right of Tab, marked A on an AZERTY keyboard).
US_PLACES = {
    **{str(n): n + 1 for n in range(1, 9)},
    "q": 16, "e": 18, "r": 19, "u": 22, "s": 31, "x": 45, "v": 47, "escape": 1,
}  # fmt: skip


def test_keys_are_read_by_their_place_on_a_us_keyboard_as_the_readme_says():
    keys = (ROOT / "README.md").read_text().split("## Keys")[1].split("\n## ")[0]
    listed = set(re.findall(r"^\| `(\w)`", keys, re.MULTILINE)) | {str(n) for n in range(1, 9)}
    assert listed == {*KEYMAP, QUIT_KEY}  # the table lists every key the box reads
    assert {name: code for code, name in KEY_NAMES.items() if name in US_PLACES} == US_PLACES
    assert "by their place on the keyboard, the place each has on a US" in " ".join(keys.split())


def test_the_event_record_is_the_kernels():
    # Two native longs (the time), two shorts and an int: 24 bytes on a 64-bit kernel.
    assert EVENT.size == 2 * struct.calcsize("@L") + 8
    assert console_keys.EVIOCGRAB == 0x40044590 and console_keys.EVIOCSCLOCKID == 0x400445A0
