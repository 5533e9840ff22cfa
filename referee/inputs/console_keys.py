"""The keyboards of a console without a desktop, as the box's buttons (referee/buttons.py),
read from the kernel's input devices (evdev, /dev/input/event*) by the main loop itself.

Unlike a terminal's or a window's keys, these come with the kernel's stamp of each key,
taken on CLOCK_MONOTONIC (EVIOCSCLOCKID) as the keyboard's report is handed to evdev and
queued for the referee in the same step: after the devices are read empty at time R,
every key stamped before R minus QUEUE_BOUND_NS has been read, and that is the watermark
(docs/design.md, "Event time"). Two keys within the keyboard's polling interval (8 ms on
USB) are still reported in the same report: the resolution stays the keyboard's.

Every keyboard is grabbed (EVIOCGRAB): its keys go to the referee alone, not to the
console's tty underneath (no echo on the console's text, no switch to another VT). All
of them sit in one epoll set, whose descriptor is the one the loop waits on, with an
inotify watch on /dev/input: a keyboard plugged in while the box runs is read from then
on, one pulled out is closed, each said in one line. Keys are read by their place on the
keyboard (the kernel's key codes are a US layout's): the console's keymap is not applied.
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

from referee.buttons import BUTTONS, KEYMAP, QUIT_KEY
from referee.inbox import Quit, SourceStatus
from referee.inputs import SourceItem
from referee.inputs.keyboard import KEYBOARD_RESOLUTION_NS
from referee.linux.inotify import IN_ATTRIB, IN_CREATE, IN_Q_OVERFLOW, Inotify
from referee.linux.ioctl import READ, WRITE, ioc
from referee.units import NS_PER_S

from .edges import Edge, LostTrack

log = logging.getLogger(__name__)

INPUT = Path("/dev/input")
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
# A device plugged in: its node is made by the kernel, root's alone (IN_CREATE), then given
# to the `input` group by udev (IN_ATTRIB); it is tried at each until it opens.
PLUGGED = IN_CREATE | IN_ATTRIB

Ioctl = Callable[[int, int, bytes | int], bytes | int]


def _ioctl(fd: int, request: int, arg: bytes | int) -> bytes | int:
    return fcntl.ioctl(fd, request, arg)


class NoKeyboard(Exception):
    """No keyboard can be read; the message says why, in one line."""


class _Denied(Exception):
    """A device the user may not open (yet)."""


@dataclass
class Keyboard:
    fd: int
    name: str  # the device's own name: "Logitech USB Keyboard"
    path: str


def is_keyboard(key_bits: bytes) -> bool:
    """A device with the digits and the letters (not a power button, a mouse, a remote)."""
    return all(key_bits[code // 8] & (1 << code % 8) for code in (2, 9, 16, 47))


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


def _node(info: os.stat_result) -> tuple[int, int]:
    """A device node's identity: its inode, which a node made anew does not share."""
    return info.st_dev, info.st_ino


def open_console_keys(
    folder: Path = INPUT, clock: Callable[[], int] = time.monotonic_ns, ioctl: Ioctl = _ioctl
) -> "ConsoleKeys":
    """Every keyboard among the input devices, and every one plugged in later; NoKeyboard,
    in one line, if there is none to read now."""
    keys = ConsoleKeys((), clock, ioctl)
    denied = keys.watch(folder)
    if keys.keyboards:
        return keys
    keys.close()
    if denied:
        raise NoKeyboard(
            f"{', '.join(denied)}: permission denied: the user must be in the `input` group"
        )
    raise NoKeyboard(f"no keyboard among the input devices ({folder}/event*)")


class ConsoleKeys:
    """The console's keyboards as the input: each key stamped by the kernel."""

    name = "keyboard (console)"
    resolution_ns = KEYBOARD_RESOLUTION_NS
    buttons = BUTTONS

    def __init__(
        self,
        keyboards: Sequence[Keyboard] = (),
        clock: Callable[[], int] = time.monotonic_ns,
        ioctl: Ioctl = _ioctl,
    ) -> None:
        self._clock = clock
        self._ioctl = ioctl
        self._epoll = select.epoll()
        self.keyboards: list[Keyboard] = []
        # Each device node looked at, by path: a keyboard read, or no keyboard (a mouse, a
        # power button), not looked at again at its next change of attributes. A node made
        # anew at the same path (plugged out and in) is another inode.
        self._seen: dict[str, tuple[int, int]] = {}
        for keyboard in keyboards:
            self._add(keyboard)
        self._folder: Path | None = None
        self._inotify: Inotify | None = None
        self._held: set[str] = set()
        self._watermark = clock() - QUEUE_BOUND_NS

    def watch(self, folder: Path) -> list[str]:
        """Read every keyboard in the folder, now and whenever one is plugged in; the
        devices that could not be opened for want of permission."""
        self._folder = folder
        inotify = Inotify.open()
        if inotify is not None and inotify.watch(folder, PLUGGED):
            self._inotify = inotify
            self._epoll.register(inotify.fileno(), select.EPOLLIN)
        else:
            if inotify is not None:
                inotify.close()
            log.warning(
                "%s: not watched: a keyboard plugged in is read from the next start", folder
            )
        # After the watch is set: a keyboard plugged in meanwhile is seen by one or the other.
        denied = []
        for path in sorted(str(p) for p in folder.glob("event*")):
            try:
                self._plug(path)
            except _Denied:
                denied.append(path)
        return denied

    def _plug(self, path: str) -> Keyboard | None:
        """The device at path, read if it is a keyboard not read yet; _Denied while it
        cannot be opened (udev has not given it to the `input` group yet)."""
        try:
            if self._seen.get(path) == _node(Path(path).stat()):
                return None
        except OSError:
            return None  # gone since it was named
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except PermissionError:
            raise _Denied(path) from None
        except OSError:
            return None  # gone since it was named
        try:
            keyboard = _keyboard(fd, path, self._ioctl)
        except OSError as err:
            log.warning("%s: not read (%s)", path, err.strerror)
            keyboard = None
        if keyboard is None:
            self._seen[path] = _node(os.fstat(fd))
            os.close(fd)
            return None
        self._add(keyboard)
        return keyboard

    def _add(self, keyboard: Keyboard) -> None:
        self._seen[keyboard.path] = _node(os.fstat(keyboard.fd))
        self.keyboards.append(keyboard)
        self._epoll.register(keyboard.fd, select.EPOLLIN)

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
        for keyboard in list(self.keyboards):
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
        # After the keyboards: one pulled out and plugged back in is closed before the new
        # one is opened, and the screen says so in that order.
        items += self._plugged_in()
        self._watermark = max(self._watermark, read_ns - QUEUE_BOUND_NS)
        return items

    def _plugged_in(self) -> list[SourceItem]:
        """The keyboards plugged in since the last read, read from now on."""
        if self._inotify is None or self._folder is None:
            return []
        folder = self._folder
        events = self._inotify.read()
        if any(mask & IN_Q_OVERFLOW for mask, _ in events):  # events lost: look at them all
            names = [p.name for p in folder.glob("event*")]
        else:
            names = [os.fsdecode(name) for _, name in events]
        items: list[SourceItem] = []
        for name in sorted(set(names)):
            if not name.startswith("event"):
                continue
            try:
                keyboard = self._plug(str(folder / name))
            except _Denied:
                continue  # udev gives it to the `input` group next: IN_ATTRIB
            if keyboard is not None:
                text = f"the keyboard {keyboard.name} is plugged in ({len(self.keyboards)} in all)"
                items.append(SourceStatus("keyboard", text, ok=True, condition="gone"))
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
        self.keyboards.remove(keyboard)
        self._epoll.unregister(keyboard.fd)
        os.close(keyboard.fd)
        left = len(self.keyboards)
        text = f"the keyboard {keyboard.name} went away ({left} left)"
        log.warning("%s", text)
        return SourceStatus("keyboard", text, ok=left > 0, condition="gone")

    def close(self) -> None:
        self._epoll.close()
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
        for keyboard in self.keyboards:
            os.close(keyboard.fd)  # the grab ends with it
        self.keyboards = []
