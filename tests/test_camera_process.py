"""The camera's process as the daemon keeps it (camera/process.py): its readings reach the
inbox, what it writes that is not the wire's is dropped with a line in the log, one that
dies is told and started again, and it dies with the daemon."""

import logging
import os
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from referee.camera.process import CameraProcess
from referee.camera.wire import MAX_LINE, reading_line, status_line
from referee.inbox import Inbox, InboxItem, Seen, SourceStatus

from .camera_frames import set_table, show

WAIT_S = 30.0  # the process's start (Python, OpenCV, the model) on a loaded machine


def _until(inbox: Inbox, want, what: str, timeout_s: float = WAIT_S) -> list[InboxItem]:
    """The inbox's items until one for which want(item) holds: waited for on its pipe."""
    items: list[InboxItem] = []
    deadline = time.monotonic() + timeout_s
    while not any(want(i) for i in items):
        left = deadline - time.monotonic()
        assert left > 0, f"not within {timeout_s} s: {what}; got {items}"
        if select.select([inbox.fileno()], [], [], left)[0]:
            items += inbox.drain()
    return items


@pytest.fixture
def inbox():
    box = Inbox()
    yield box
    box.close()


def test_a_folder_camera_is_read_and_a_killed_process_is_told_and_started_again(tmp_path, inbox):
    show(tmp_path, "sets.jpg", set_table())
    camera = CameraProcess(str(tmp_path), inbox.put, restart_s=0.05)
    try:
        items = _until(inbox, lambda i: isinstance(i, Seen), "a reading")
        seen = next(i for i in items if isinstance(i, Seen))
        assert len(seen.cards) == 12 and len(seen.sets) == 3
        assert seen.t_ns <= time.monotonic_ns()
        assert camera.watching
        first = camera.process.pid
        os.kill(first, signal.SIGKILL)
        died = _until(inbox, lambda i: isinstance(i, SourceStatus) and not i.ok, "its death")
        said = next(i for i in died if isinstance(i, SourceStatus))
        assert said.text.startswith(f"the camera's process {first} ended (killed by SIGKILL)")
        again = _until(inbox, lambda i: isinstance(i, Seen), "a reading of the new process")
        assert SourceStatus("camera", "the camera's process started again", True, "process") in (
            died + again
        )
        assert camera.process.pid != first and camera.watching
    finally:
        camera.close()
    assert camera.process.poll() is not None


HOSTILE = (
    b"x" * (MAX_LINE + 10) + b"\n",  # too long, ended
    b"not json\n",
    b'{"t": 1, "cards": [[9,9,9,9,1,0,0,1,1]], "sets": []}\n',
    status_line("camera lost (it says): waiting for it", ok=False),
    reading_line(5, [((0, 0, 0, 0), True, (1, 2, 3, 4))], []),
    b"y" * (3 * MAX_LINE),  # too long, and never ended
)


def test_what_the_process_writes_that_is_not_the_wire_is_dropped_and_said(tmp_path, inbox, caplog):
    script = tmp_path / "hostile.py"
    script.write_text(
        "import signal, sys\n"
        f"sys.stdout.buffer.write({b''.join(HOSTILE)!r})\n"
        "sys.stdout.buffer.flush()\n"
        "signal.pause()\n"  # until the daemon ends it
    )
    with caplog.at_level(logging.WARNING, "referee.camera.process"):
        camera = CameraProcess("x", inbox.put, command=[sys.executable, str(script)])
        try:
            items = _until(inbox, lambda i: isinstance(i, Seen), "the one good reading")
        finally:
            camera.close()
    assert items == [
        SourceStatus("camera", "camera lost (it says): waiting for it", False),
        Seen(5, (items[-1].cards[0],), ()),
    ]
    said = [r.getMessage() for r in caplog.records]
    refused = "camera: a line from its process refused:"
    assert said == [
        f"{refused} a line over {MAX_LINE} bytes",
        f"{refused} not JSON",
        f"{refused} a card's attribute out of range",
        f"{refused} a line over {MAX_LINE} bytes",  # the last, never ended, the moment it is
    ]


def test_a_reading_then_a_loss_in_one_read_leaves_the_camera_lost(tmp_path, inbox):
    """A frame's reading, then the source lost, written together: one read of the daemon's
    brings both. The reading goes on first, the loss after it, and the camera is lost: the
    reading handed on last said it watched, and `● cam` stayed on a lost camera."""
    lines = reading_line(5, [((1, 1, 1, 1), True, (0, 0, 10, 10))], []) + status_line(
        "camera lost (unplugged): waiting for it", ok=False
    )
    script = tmp_path / "lost.py"
    script.write_text(
        "import signal, sys\n"
        f"sys.stdout.buffer.write({lines!r})\n"
        "sys.stdout.buffer.flush()\n"
        "signal.pause()\n"
    )
    camera = CameraProcess("x", inbox.put, command=[sys.executable, str(script)])
    try:
        items = _until(inbox, lambda i: isinstance(i, SourceStatus), "the loss")
        assert [type(i) for i in items] == [Seen, SourceStatus]
        assert not camera.watching
    finally:
        camera.close()


def test_a_process_that_closes_its_output_is_ended_and_started_again(tmp_path, inbox):
    script = tmp_path / "mute.py"
    script.write_text("import os, signal\nos.close(1)\nsignal.pause()\n")
    camera = CameraProcess("x", inbox.put, command=[sys.executable, str(script)], restart_s=60)
    try:
        items = _until(inbox, lambda i: isinstance(i, SourceStatus), "its end")
        assert "ended (killed by SIGKILL): started again in 60 s" in items[0].text
    finally:
        camera.close()  # while it waits to start it again: no wait


def test_with_the_camera_off_the_daemon_imports_nothing_of_it():
    """No process, and neither the camera's modules nor OpenCV in the daemon's memory."""
    import subprocess

    code = (
        "import sys\n"
        "from referee.config import default_config\n"
        "from referee.daemon import app\n"
        "from referee.daemon.watching import Watching\n"
        "from referee.inbox import Inbox\n"
        "w = Watching(default_config().camera, Inbox())\n"
        "assert not w.watching and w.pid is None\n"
        "names = ('referee.camera', 'referee.vision', 'cv2', 'numpy')\n"
        "print(sorted(m for m in sys.modules if m.startswith(names)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


def test_the_backoff_doubles_up_to_its_most_and_starts_again_after_a_settled_run():
    from referee.linux.children import Backoff

    backoff = Backoff(1.0, 6.0, settled_s=60.0)
    assert [backoff.after(0.5) for _ in range(5)] == [1.0, 2.0, 4.0, 6.0, 6.0]
    assert backoff.after(60.0) == 1.0  # it ran long enough: an accident, not a loop
    backoff.reset()
    assert backoff.after() == 1.0


def test_a_process_that_cannot_be_started_is_told_and_never_ends_the_daemon(tmp_path, inbox):
    missing = str(tmp_path / "no-such-python")
    camera = CameraProcess("x", inbox.put, command=[missing], restart_s=60)
    try:
        items = _until(inbox, lambda i: isinstance(i, SourceStatus), "the trouble told")
        assert items[0].text.startswith("the camera's process cannot be started (")
        assert not items[0].ok and camera.process is None and not camera.watching
    finally:
        camera.close()  # while it waits to try again: no wait


def test_the_cameras_process_runs_on_one_thread(tmp_path, inbox):
    """One core at most: neither OpenCV's threads nor OpenBLAS's."""
    show(tmp_path, "sets.jpg", set_table())
    camera = CameraProcess(str(tmp_path), inbox.put)
    try:
        _until(inbox, lambda i: isinstance(i, Seen), "a reading")
        assert camera.process is not None
        assert len(list(Path(f"/proc/{camera.process.pid}/task").iterdir())) == 1
    finally:
        camera.close()
