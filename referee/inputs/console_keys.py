"""The keyboards of a console without a desktop, as the box's buttons (referee/keys.py),
read from the kernel's input devices (evdev, /dev/input/event*) by the main loop itself.

Unlike a terminal's or a window's keys, these come with the kernel's stamp of each key,
taken on CLOCK_MONOTONIC (EVIOCSCLOCKID) as the keyboard's report is handed to evdev and
queued for the referee in the same step: after the devices are read empty at time R,
every key stamped before R minus QUEUE_BOUND_NS has been read, and that is the watermark
(docs/design.md, "Event time"). Two keys within the keyboard's polling interval (8 ms on
USB) are still reported in the same report: the resolution stays the keyboard's.

Every keyboard is grabbed (EVIOCGRAB): its keys go to the referee alone, not to the
console's tty underneath (no echo on the console's text, no switch to another VT). All
of them sit in one epoll set, whose descriptor is the one the loop waits on. Keys are
read by their place on the keyboard (the kernel's key codes are a US layout's): the
console's keymap is not applied.
"""

import errno
import fcntl
import logging
import os
import select
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.edges import BUTTONS, Edge, LostTrack, Quit, SourceStatus
from referee.inputs import SourceItem
from referee.inputs.keyboard import KEYBOARD_RESOLUTION_NS
from referee.keys import KEYMAP, QUIT_KEY
from referee.linux_ioctl import READ, WRITE, ioc
from referee.units import NS_PER_S

log = logging.getLogger(__name__)

INPUT = Path("/dev/input")
DEVICES = f"{INPUT}/event*"  # as messages name them
# Between the kernel's stamp of a key and the key in our queue: one function call under
# one lock (evdev_events), microseconds; a millisecond, as for GPIO's interrupt thread.
QUEUE_BOUND_NS = 1_000_000
# struct input_event: the time as two native longs (seconds, microseconds), type, code, value.
EVENT = struct.Struct("@LLHHi")
EV_SYN, EV_KEY = 0x00, 0x01
SYN_DROPPED = 3  # the queue overflowed: events were lost
KEY_UP, KEY_DOWN = 0, 1  # and 2, the keyboard repeating a held key
KEY_ESC = 1
KEY_BYTES = 0x2FF // 8 + 1  # KEY_MAX's bits
EVIOCGBIT_KEY = ioc(READ, "E", 0x20 + EV_KEY, KEY_BYTES)
EVIOCGNAME = ioc(READ, "E", 0x06, 256)
EVIOCGRAB = ioc(WRITE, "E", 0x90, 4)
EVIOCSCLOCKID = ioc(WRITE, "E", 0xA0, 4)
# <linux/input-event-codes.h>: the rows of a keyboard, each from its first key's code.
_ROWS = ((2, "1234567890"), (16, "qwertyuiop"), (30, "asdfghjkl"), (44, "zxcvbnm"))
KEY_NAMES = {first + n: key for first, row in _ROWS for n, key in enumerate(row)}
KEY_NAMES[KEY_ESC] = "escape"
QUITS = (QUIT_KEY, "escape")

Ioctl = Callable[[int, int, bytes | int], bytes | int]


def _ioctl(fd: int, request: int, arg: bytes | int) -> bytes | int:
    return fcntl.ioctl(fd, request, arg)


class NoKeyboard(Exception):
    """No keyboard can be read; the message says why, in one line."""


@dataclass
class Keyboard:
    fd: int
    name: str  # the device's own name: "Logitech USB Keyboard"
    path: str


def is_keyboard(key_bits: bytes) -> bool:
    """A device with the digits and the letters (not a power button, a mouse, a remote)."""
    return all(key_bits[code // 8] & (1 << code % 8) for code in (2, 9, 16, 47))


def open_keyboards(paths: Sequence[str] | None = None, ioctl: Ioctl = _ioctl) -> list[Keyboard]:
    """Every keyboard among the input devices, grabbed, stamping on CLOCK_MONOTONIC."""
    paths = sorted(str(p) for p in INPUT.glob("event*")) if paths is None else paths
    keyboards, denied = [], []
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except PermissionError:
            denied.append(path)
            continue
        except OSError:
            continue  # gone since it was listed
        try:
            keyboard = _keyboard(fd, path, ioctl)
        except OSError as err:
            log.warning("%s: not read (%s)", path, err.strerror)
            keyboard = None
        if keyboard is None:
            os.close(fd)
        else:
            keyboards.append(keyboard)
    if keyboards:
        return keyboards
    if denied:
        raise NoKeyboard(
            f"{', '.join(denied)}: permission denied: the user must be in the `input` group"
        )
    raise NoKeyboard(f"no keyboard among the input devices ({DEVICES})")


def _keyboard(fd: int, path: str, ioctl: Ioctl) -> Keyboard | None:
    bits = ioctl(fd, EVIOCGBIT_KEY, bytes(KEY_BYTES))
    assert isinstance(bits, bytes)
    if not is_keyboard(bits):
        return None
    named = ioctl(fd, EVIOCGNAME, bytes(256))
    assert isinstance(named, bytes)
    name = named.partition(b"\0")[0].decode(errors="replace") or path
    ioctl(fd, EVIOCSCLOCKID, struct.pack("i", time.CLOCK_MONOTONIC))
    try:
        ioctl(fd, EVIOCGRAB, 1)
    except OSError as err:
        if err.errno != errno.EBUSY:
            raise
        log.warning("%s (%s): another program has it to itself", path, name)
        return None
    log.info("keyboard on the console: %s (%s)", name, path)
    return Keyboard(fd, name, path)


class ConsoleKeys:
    """The console's keyboards as the input: each key stamped by the kernel."""

    name = "keyboard (console)"
    resolution_ns = KEYBOARD_RESOLUTION_NS
    buttons = BUTTONS

    def __init__(
        self, keyboards: Sequence[Keyboard], clock: Callable[[], int] = time.monotonic_ns
    ) -> None:
        self._clock = clock
        self._epoll = select.epoll()
        self._keyboards = list(keyboards)
        for keyboard in self._keyboards:
            self._epoll.register(keyboard.fd, select.EPOLLIN)
        self._held: set[str] = set()
        self._watermark = clock() - QUEUE_BOUND_NS

    def fileno(self) -> int | None:
        return self._epoll.fileno()

    @property
    def watermark_ns(self) -> int:
        return self._watermark

    def wake_ns(self, wanted_ns: int | None) -> int | None:
        return None if wanted_ns is None else wanted_ns + QUEUE_BOUND_NS

    def held_at_start(self) -> tuple[str, ...]:
        return ()

    def read(self) -> list[SourceItem]:
        read_ns = self._clock()
        items: list[SourceItem] = []
        for keyboard in list(self._keyboards):
            while True:
                try:
                    data = os.read(keyboard.fd, EVENT.size * 64)
                except BlockingIOError:
                    break
                except OSError:  # ENODEV: unplugged
                    data = b""
                if not data:
                    items.append(self._gone(keyboard))
                    break
                for offset in range(0, len(data) - EVENT.size + 1, EVENT.size):
                    seconds, micros, kind, code, value = EVENT.unpack_from(data, offset)
                    t_ns = seconds * NS_PER_S + micros * 1000
                    items += self._event(t_ns, kind, code, value, read_ns)
        self._watermark = max(self._watermark, read_ns - QUEUE_BOUND_NS)
        return items

    def _event(self, t_ns: int, kind: int, code: int, value: int, read_ns: int) -> list[SourceItem]:
        if kind == EV_SYN and code == SYN_DROPPED:
            log.warning("keys were lost (the keyboard's queue overflowed): keys held count as up")
            lost: list[SourceItem] = [LostTrack(button, read_ns) for button in sorted(self._held)]
            self._held.clear()
            return lost
        name = KEY_NAMES.get(code)
        if kind != EV_KEY or name is None or value not in (KEY_UP, KEY_DOWN):
            return []
        down = value == KEY_DOWN
        if name in QUITS:
            return [Quit(f"{name} pressed")] if down else []
        button = KEYMAP.get(name)
        if button is None or down == (button in self._held):
            return []
        if down:
            self._held.add(button)
        else:
            self._held.discard(button)
        return [Edge(button, t_ns, down)]

    def _gone(self, keyboard: Keyboard) -> SourceStatus:
        self._keyboards.remove(keyboard)
        self._epoll.unregister(keyboard.fd)
        os.close(keyboard.fd)
        left = len(self._keyboards)
        text = f"the keyboard {keyboard.name} went away ({left} left)"
        log.warning("%s", text)
        return SourceStatus("keyboard", text, ok=left > 0, condition="gone")

    def close(self) -> None:
        self._epoll.close()
        for keyboard in self._keyboards:
            os.close(keyboard.fd)  # the grab ends with it
        self._keyboards = []
