"""The X server's connection under SDL's x11 driver: a descriptor the main loop waits on.

SDL gives no descriptor for its events, and pygame's event.wait naps 1 ms at a time in C.
Under X11, though, every event comes through the X server's connection, a socket: the
loop sleeps on it like on any source and takes SDL's events when it is readable, instead
of waking a hundred times a second to look. The socket is the one Xlib holds for SDL's
display (from `pygame.display.get_wm_info()`, through libX11 itself).

Xlib reads events into a queue of its own whenever it reads the socket, a drawing's round
trip to the server included: events can wait there with the socket read empty. `queued`
says so, without touching the socket, and the loop does not sleep on them.
"""

import ctypes
import logging
from collections.abc import Mapping

log = logging.getLogger(__name__)

# XEventsQueued's mode that only counts what Xlib already holds (X11/Xlib.h).
_QUEUED_ALREADY = 0


class XConnection:
    """SDL's display connection: its descriptor, and whether Xlib holds unread events."""

    def __init__(self, xlib: ctypes.CDLL, display: int) -> None:
        self._display = ctypes.c_void_p(display)
        self._events_queued = xlib.XEventsQueued
        self._events_queued.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self._events_queued.restype = ctypes.c_int
        connection_number = xlib.XConnectionNumber
        connection_number.argtypes = [ctypes.c_void_p]
        connection_number.restype = ctypes.c_int
        self.fd: int = connection_number(self._display)

    def queued(self) -> bool:
        """Events Xlib has read from the socket and SDL has not taken yet."""
        return bool(self._events_queued(self._display, _QUEUED_ALREADY))


def x_connection(wm_info: Mapping[str, object]) -> XConnection | None:
    """The connection of SDL's x11 window described by `pygame.display.get_wm_info()`, or
    None when it cannot be had (then the loop looks for events now and then)."""
    capsule = wm_info.get("display")
    if capsule is None:
        return None
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    get_pointer.restype = ctypes.c_void_p
    try:
        display = get_pointer(capsule, b"display")
        # The library SDL itself loaded: the same Xlib, and the same Display.
        xlib = ctypes.CDLL("libX11.so.6")
    except (OSError, ValueError) as err:
        log.info("the X server's connection cannot be waited on (%s): keys are polled", err)
        return None
    return XConnection(xlib, display) if display else None
