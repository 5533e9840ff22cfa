"""Telling systemd how the daemon is doing (sd_notify), and nothing at all outside systemd.

Type=notify units wait for READY=1; with WatchdogSec= they restart a daemon whose
main loop stops sending WATCHDOG=1 (systemd.service(5), sd_notify(3)).
"""

import contextlib
import os
import socket

NS_PER_US = 1_000


class Notifier:
    def __init__(self, environ: dict[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        # An address starting with "@" is in Linux's abstract namespace.
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self._socket: socket.socket | None = None
        if self._address:
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        watched = usec.isdigit() and (not pid or pid == str(os.getpid()))
        # Ping at half the timeout, as sd_watchdog_enabled(3) recommends.
        self.watchdog_interval_ns: int | None = int(usec) * NS_PER_US // 2 if watched else None

    def notify(self, message: str) -> None:
        if self._socket is None:
            return
        # systemd went away (or never listened): there is nobody to tell.
        with contextlib.suppress(OSError):
            self._socket.sendto(message.encode(), self._address)

    def ready(self, status: str = "") -> None:
        self.notify("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def watchdog(self) -> None:
        self.notify("WATCHDOG=1")

    def stopping(self) -> None:
        self.notify("STOPPING=1")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
