"""Input devices played at their boundary: a device node is a FIFO in a folder of the
test's own (its write end the keyboard's events), and the evdev ioctls a fake that knows
which node is a keyboard (referee/inputs/console_keys.py)."""

import errno
import os
from pathlib import Path

from referee.inputs import console_keys
from referee.inputs.console_keys import EV_KEY, EVENT

# <linux/input-event-codes.h>: the codes of the keys the tests press.
CODES = {"1": 2, "2": 3, "q": 16, "s": 31, "v": 47, "escape": 1}


def key(name: str, value: int, t_ns: int) -> bytes:
    return EVENT.pack(t_ns // 10**9, t_ns % 10**9 // 1000, EV_KEY, CODES[name], value)


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


def plug(folder: Path, name: str) -> int:
    """A device node appearing in the folder, as the kernel makes one: a FIFO, and the end
    the test writes its events into (held open: a FIFO without a writer reads as gone)."""
    os.mkfifo(folder / name)
    return os.open(folder / name, os.O_RDWR | os.O_NONBLOCK)
