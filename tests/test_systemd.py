"""sd_notify: messages reach systemd's socket; outside systemd nothing happens."""

import os
import socket

from referee.daemon.systemd import Notifier


def listener(tmp_path):
    path = str(tmp_path / "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(2)
    return sock, path


def test_ready_watchdog_and_stopping_reach_the_socket(tmp_path):
    sock, path = listener(tmp_path)
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000000"})
    notifier.ready("4 players")
    notifier.watchdog()
    notifier.stopping()
    got = [sock.recv(100).decode() for _ in range(3)]
    assert got == ["READY=1\nSTATUS=4 players", "WATCHDOG=1", "STOPPING=1"]
    assert notifier.watchdog_interval_ns == 10_000_000_000
    notifier.close()
    sock.close()


def test_abstract_socket_addresses():
    name = f"referee-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2)
    Notifier({"NOTIFY_SOCKET": "@" + name}).ready()
    assert sock.recv(100) == b"READY=1"
    sock.close()


def test_outside_systemd_it_does_nothing():
    notifier = Notifier({})
    notifier.ready()
    notifier.watchdog()
    assert notifier.watchdog_interval_ns is None


def test_a_watchdog_meant_for_another_process_is_not_ours(tmp_path):
    notifier = Notifier({"WATCHDOG_USEC": "1000", "WATCHDOG_PID": str(os.getpid() + 1)})
    assert notifier.watchdog_interval_ns is None


def test_a_vanished_socket_is_not_fatal(tmp_path):
    Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")}).ready()
