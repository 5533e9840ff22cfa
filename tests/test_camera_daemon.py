"""The daemon with a camera (issue 32): a folder of frames as the fake camera, the real
loop (tests/daemon.py), the real camera's process. Its mark while it watches; the table
it sees, a new newest frame seen anew, and "deal three more" for twelve cards without a
SET; files it cannot read never in the loop's way; its process killed, started again; its
folder removed, told, and watched again once it is back."""

import os
import signal

import pytest

from referee.camera import process
from referee.store.store import Store
from referee.view import CAM_MARK, TableSeen
from referee.vision.decode import MAX_FILE_BYTES

from .camera_frames import WAIT_S, flat, no_set_table, set_table, show
from .daemon import Daemon

NO_SET = "no SET in these 12: deal three more"


@pytest.fixture
def watched(store, frames, monkeypatch):
    monkeypatch.setattr(process, "RESTART_S", 0.05)
    show(frames, "sets.jpg", set_table(), mtime_ns=10**18)
    running = Daemon(store, camera=str(frames))
    yield running
    running.stop()
    camera = running.app.watching._process
    assert camera is not None and camera.process.returncode is not None  # ended with the box


def _table(daemon: Daemon) -> TableSeen | None:
    return daemon.app.watching.view()


def test_the_daemon_shows_what_the_camera_sees_and_its_mark(watched, frames):
    watched.wait_for(lambda: _table(watched) == TableSeen(12, 12, 3), "the table, read", WAIT_S)
    watched.wait_for(lambda: CAM_MARK in watched.shown(), "the camera's mark")
    assert NO_SET not in flat(watched.shown())
    # A new newest frame: twelve cards, no SET among them.
    show(frames, "table.jpg", no_set_table(), mtime_ns=10**18 + 1)
    watched.wait_for(lambda: NO_SET in flat(watched.shown()), "deal three more", WAIT_S)
    assert _table(watched) == TableSeen(12, 12, 0)


def test_files_the_camera_cannot_read_never_stop_the_loop(watched, frames):
    watched.wait_for(lambda: _table(watched) == TableSeen(12, 12, 3), "the table, read", WAIT_S)
    pid = watched.app.watching.pid
    newer = 10**18
    for name, write in [
        ("cut.jpg", lambda p: p.write_bytes(set_table()[:5000])),
        ("huge.jpg", lambda p: (p.touch(), os.truncate(p, MAX_FILE_BYTES + 1))),
        ("noise.png", lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)),
        ("fifo.jpg", lambda p: os.mkfifo(p)),
    ]:
        newer += 1
        write(frames / name)
        os.utime(frames / name, ns=(newer, newer))
    # The loop goes on: a key pressed is played; the camera still sees the table.
    watched.press("P1")
    watched.wait_for(lambda: "P1" in flat(watched.shown()), "the press shown")
    show(frames, "table.jpg", no_set_table(), mtime_ns=newer + 1)
    watched.wait_for(lambda: _table(watched) == TableSeen(12, 12, 0), "the next good frame", WAIT_S)
    assert watched.app.watching.pid == pid  # the process read past them all


def test_the_cameras_process_killed_is_told_and_started_again(watched):
    watched.wait_for(lambda: watched.app.watching.watching, "watching", WAIT_S)
    first = watched.app.watching.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    ended = f"the camera's process {first} ended (killed by SIGKILL)"
    watched.wait_for(lambda: ended in flat(watched.screen.getvalue()), "its end told", WAIT_S)
    watched.wait_for(
        lambda: watched.app.watching.pid != first and _table(watched) == TableSeen(12, 12, 3),
        "a new process reading the table",
        WAIT_S,
    )
    watched.wait_for(lambda: f"! {ended}" not in flat(watched.shown()), "the notice gone")


def test_a_folder_removed_mid_game_is_told_and_watched_again_once_it_is_back(watched, frames):
    watched.wait_for(lambda: CAM_MARK in watched.shown(), "the camera's mark", WAIT_S)
    for file in frames.iterdir():
        file.unlink()
    frames.rmdir()
    watched.wait_for(lambda: "camera lost" in flat(watched.shown()), "the loss told", WAIT_S)
    assert CAM_MARK not in watched.shown() and _table(watched) is None
    frames.mkdir()
    show(frames, "table.jpg", no_set_table())
    watched.wait_for(lambda: NO_SET in flat(watched.shown()), "watched again", WAIT_S)
    assert CAM_MARK in watched.shown() and "! camera lost" not in flat(watched.shown())


def test_a_hint_says_whether_the_table_holds_a_set_and_changes_no_game(watched, frames, store):
    """The keyboard's `h` (on the buttons: VALID while UNDO is held, tests/test_arbiter.py)
    asks the camera (docs/rules.md, "Is there a SET?"): answered on the screen, no input of
    the rules."""
    watched.wait_for(lambda: _table(watched) == TableSeen(12, 12, 3), "the table, read", WAIT_S)
    session = watched.app.session
    state, kept = session.state, _kept(store, session.ledger.game_id)
    watched.press("HINT")
    watched.wait_for(lambda: "> there is a SET" in flat(watched.shown()), "the hint")
    show(frames, "table.jpg", no_set_table(), mtime_ns=10**18 + 1)
    watched.wait_for(lambda: _table(watched) == TableSeen(12, 12, 0), "no SET, read", WAIT_S)
    watched.press("HINT")
    none = "> there is no SET in these 12: deal three more"
    watched.wait_for(lambda: none in flat(watched.shown()), "the hint: none")
    assert session.state == state  # nothing played
    assert session.ledger.pending == 0 and _kept(store, session.ledger.game_id) == kept


def _kept(path, game: int) -> int:
    with Store.open_readonly(path) as read:
        return read.count_inputs(game)


def test_with_no_camera_a_hint_says_so(store):
    daemon = Daemon(store)
    try:
        daemon.press("HINT")
        said = "> no camera watches the table: no hint"
        daemon.wait_for(lambda: said in flat(daemon.shown()), "the hint")
    finally:
        daemon.stop()
