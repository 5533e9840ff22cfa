"""The camera's sources (camera/sources.py) and its process's loop (camera/watch.py), on
a folder of frames: the newest image is what is seen; what is not a photo it can read
(damaged, half-written, huge, a FIFO, a link) is skipped with one log line, at once,
never an error; a folder removed is the camera lost, told once, and found again."""

import io
import itertools
import json
import logging
import os
import time

import cv2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.camera import sources, watch
from referee.camera.sources import FolderSource, SourceLost
from referee.camera.watch import Watch
from referee.camera.wire import parse
from referee.inbox import Unread
from referee.photo_header import photo_size
from referee.vision.decode import MAX_FILE_BYTES
from referee.vision.layout import read_frame

from .camera_frames import damaged_inside, no_set_table, set_table, show
from .conftest import also_suppressed

T0 = 1_700_000_000 * 10**9  # a file's modification time, in ns


@pytest.mark.parametrize(("table", "sets"), [(set_table, 3), (no_set_table, 0)])
def test_the_fake_cameras_tables_are_twelve_cards_read_surely(tmp_path, table, sets):
    show(tmp_path, "table.jpg", table())
    frame = FolderSource(tmp_path).read()
    assert frame is not None
    layout = read_frame(frame.image)
    assert (len(layout.cards), sum(c.sure for c in layout.cards), len(layout.sets)) == (
        12,
        12,
        sets,
    )


def test_the_newest_image_is_what_the_camera_sees_once(tmp_path):
    show(tmp_path, "b.jpg", no_set_table(), mtime_ns=T0)
    show(tmp_path, "a.jpg", set_table(), mtime_ns=T0 + 1)
    (tmp_path / "notes.txt").write_text("newer, and no image")
    source = FolderSource(tmp_path)
    first = source.read()
    assert first is not None and first.image.shape[:2] == (768, 1024)  # a, not b
    assert source.read() is None  # nothing new
    show(tmp_path, "b.jpg", no_set_table(), mtime_ns=T0 + 2)
    second = source.read()
    assert second is not None and second.image.shape[:2] == (720, 960)
    assert second.t_ns > first.t_ns


def _damaged(kind: str, cut: int, tmp_path) -> str:
    """A newest file of a kind the camera cannot read; its name."""
    path = tmp_path / "new.jpg"
    match kind:
        case "cut":  # half-written: a writer that has not finished
            path.write_bytes(set_table()[: cut % len(set_table())])
        case "noise":
            path.write_bytes(bytes((cut * 7 + i) % 256 for i in range(cut % 5000)))
        case "huge":
            with path.open("wb") as f:
                f.truncate(MAX_FILE_BYTES + 1 + cut)  # sparse: costs no disk
        case "fifo":
            os.mkfifo(path)
        case "link":
            path.symlink_to(tmp_path / "old.jpg")
        case "folder":
            path.mkdir()
    os.utime(path, ns=(T0 + 10, T0 + 10), follow_symlinks=False)
    return path.name


@settings(
    max_examples=30, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)
@given(st.sampled_from(["cut", "noise", "huge", "fifo", "link", "folder"]), st.integers(0, 10**6))
def test_a_newest_file_it_cannot_read_is_skipped_at_once_and_said_once(tmp_path, caplog, kind, cut):
    for old in tmp_path.iterdir():
        if old.is_dir() and not old.is_symlink():
            old.rmdir()
        else:
            old.unlink()
    show(tmp_path, "old.jpg", set_table(), mtime_ns=T0)
    source = FolderSource(tmp_path)
    assert source.read() is not None
    name = _damaged(kind, cut, tmp_path)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        started = time.monotonic()
        assert source.read() is None
        assert source.read() is None
        assert time.monotonic() - started < 1.0  # never a wait: a FIFO is not opened
    said = [r.getMessage() for r in caplog.records]
    if kind in ("cut", "noise", "huge"):
        assert len(said) == 1 and name in said[0], said
    else:  # not a regular file: not an image the folder holds at all
        assert said == []


def test_a_half_written_frame_is_read_once_it_is_whole(tmp_path, caplog):
    path = tmp_path / "frame.jpg"
    path.write_bytes(set_table()[: len(set_table()) // 2])
    source = FolderSource(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert source.read() is None
    with path.open("ab") as f:
        f.write(set_table()[len(set_table()) // 2 :])
    assert source.read() is not None
    assert len(caplog.records) == 1 and "cut short" in caplog.records[0].getMessage()


def test_a_folder_removed_is_the_camera_lost(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    source = FolderSource(folder)
    folder.rmdir()
    with pytest.raises(SourceLost, match="No such file"):
        source.read()
    with pytest.raises(SourceLost, match="no such folder"):
        FolderSource(folder)


def test_picamera_without_picamera2_says_so_in_a_line(monkeypatch):
    real = sources.importlib.import_module

    def refuse(name: str):
        if name == "picamera2":
            raise ModuleNotFoundError("No module named 'picamera2'")
        return real(name)

    monkeypatch.setattr(sources.importlib, "import_module", refuse)
    with pytest.raises(SourceLost, match="picamera2 is not available here"):
        sources.open_source("picamera")


def test_auto_without_a_camera_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(sources, "DEV", tmp_path)
    with pytest.raises(SourceLost, match="no camera here gives frames"):
        sources.open_source("auto")


def _lines(out: io.BytesIO) -> list[dict]:
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    out.seek(0)
    out.truncate()
    return lines


def test_the_watch_tells_a_lost_folder_once_and_reads_it_again_when_it_is_back(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    show(folder, "table.jpg", no_set_table())
    out = io.BytesIO()
    # A still clock: the waits are the backoff's, whatever a frame took on a loaded machine
    # (0.5 s is the period, and a frame read slower than that waits as long as it took).
    watch = Watch(str(folder), out, clock=lambda: 0)
    assert watch.step() == 0.5
    said = _lines(out)
    assert said[0] == {"status": f"camera {folder} watching", "ok": True}
    assert len(said[1]["cards"]) == 12 and said[1]["sets"] == []
    (folder / "table.jpg").unlink()
    folder.rmdir()
    waits = [watch.step(), watch.step(), watch.step()]
    assert waits == [0.5, 1.0, 2.0]  # the microphone's backoff
    lost = _lines(out)
    assert [s["ok"] for s in lost] == [False]  # told once
    assert "No such file" in lost[0]["status"]
    folder.mkdir()
    show(folder, "sets.jpg", set_table())
    watch.step()
    back = _lines(out)
    assert back[0] == {"status": f"camera {folder} watching again", "ok": True}
    assert len(back[1]["cards"]) == 12 and len(back[1]["sets"]) == 3


def test_the_first_frame_of_each_opening_is_said_in_the_log(tmp_path, caplog):
    """A camera that opens and gives frames is told apart, in the log, from one that opens
    and gives none: its first frame is said once, and again once it is back."""
    folder = tmp_path / "frames"
    folder.mkdir()
    show(folder, "table.jpg", no_set_table())
    watch = Watch(str(folder), io.BytesIO())
    first = f"camera {folder}: frames come, the first "
    with caplog.at_level(logging.INFO, "referee.camera.watch"):
        watch.step()
        show(folder, "sets.jpg", set_table())
        watch.step()
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith(first)]
        assert len(said) == 1 and said[0].endswith(" with 12 cards seen"), said
        for name in ("table.jpg", "sets.jpg"):
            (folder / name).unlink()
        folder.rmdir()
        watch.step()
        folder.mkdir()
        show(folder, "table.jpg", no_set_table())
        watch.step()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith(first)]
    assert len(said) == 2, said


def test_frames_are_read_at_most_twice_a_second_whatever_each_takes(monkeypatch):
    """The wait a step asks for runs from its end: a frame that takes 0.1 s to read is
    followed by 0.4 s of rest, not 0.3 (2.5 frames a second), and one that takes 0.3 s
    by 0.3 s, not none (a core taken whole)."""
    now = [0.0]
    starts: list[float] = []

    class Stepped(Watch):
        def step(self) -> float:
            starts.append(now[0])
            if len(starts) == 5:
                raise KeyboardInterrupt
            took = 0.1 if len(starts) < 3 else 0.3
            now[0] += took  # the frame's reading
            return max(0.5 - took, took)

    def sleep(seconds: float) -> None:
        now[0] += seconds

    monkeypatch.setattr(watch.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(watch.time, "sleep", sleep)
    with pytest.raises(KeyboardInterrupt):
        Stepped("unused", io.BytesIO()).run()
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(starts)]
    assert gaps == [0.5, 0.5, 0.6, 0.6]


def test_the_libraries_pages_go_back_once_a_first_frame_is_read(tmp_path, monkeypatch):
    """OpenCV's and numpy's pages read while they loaded and for a first frame, and not
    for the next ones, go back to the kernel: at each opening's first frame, not at each
    frame (the pages the frames read would be read again from the disk each time)."""
    given: list[tuple] = []
    monkeypatch.setattr(watch, "give_back_file_pages", given.append)
    folder = tmp_path / "frames"
    folder.mkdir()
    watching = Watch(str(folder), io.BytesIO())
    watching.step()  # no frame yet
    assert given == []
    show(folder, "table.jpg", no_set_table())
    watching.step()
    assert given == [watch.LIBRARIES]
    show(folder, "sets.jpg", set_table())
    watching.step()
    assert len(given) == 1
    assert any(str(p) in cv2.__file__ for p in watch.LIBRARIES)


def test_auto_without_a_camera_is_said_in_the_log_once_not_on_the_screen(
    monkeypatch, tmp_path, caplog
):
    monkeypatch.setattr(sources, "DEV", tmp_path)
    out = io.BytesIO()
    watch = Watch("auto", out)
    with caplog.at_level(logging.INFO):
        assert [watch.step(), watch.step()] == [0.5, 1.0]
    assert out.getvalue() == b""
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert said == [f"camera auto: no camera here gives frames ({tmp_path}/video*): waiting for it"]


def test_a_device_that_is_no_camera_is_lost_in_one_line(monkeypatch, tmp_path):
    with pytest.raises(SourceLost, match="/dev/video99: cannot be opened as a camera"):
        sources.open_source("/dev/video99")
    (tmp_path / "video0").write_bytes(b"not a camera")  # auto tries it, and finds none
    (tmp_path / "video10").mkdir()
    (tmp_path / "video2").mkdir()
    monkeypatch.setattr(sources, "DEV", tmp_path)
    assert sources.video_devices() == [str(tmp_path / f"video{n}") for n in (0, 2, 10)]
    with pytest.raises(SourceLost, match="no camera here gives frames"):
        sources.open_source("auto")


def test_a_frame_opencv_cannot_work_on_is_skipped_and_said_once(caplog):
    import numpy as np

    from referee.camera.sources import Frame

    class Odd:
        name = "odd"

        def read(self):
            return Frame(np.zeros((40, 60, 3), np.uint16), time.monotonic_ns())

        def close(self):
            pass

    out = io.BytesIO()
    watch = Watch("odd", out, opener=lambda spec: Odd())
    with caplog.at_level(logging.WARNING):
        assert [watch.step(), watch.step()] == [0.5, 0.5]  # the process goes on
    assert [json.loads(line)["ok"] for line in out.getvalue().splitlines()] == [True]
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith("camera odd: a frame could not be read")


def test_a_camera_slower_than_half_its_period_still_reads_the_daemons_words(tmp_path):
    """A frame read in more than half the period (a Pi's core is 3 to 5 times slower than
    this machine's; an emulated one slower still) is followed by as long a wait, and in
    it the daemon's `snap` is read: each call still gets its snapshot."""
    import numpy as np

    from referee.audio.clips import SNAPSHOT, ClipStore, clip_name
    from referee.camera.snapshot import Snapshots
    from referee.camera.sources import Frame

    class Slow:  # a camera whose frames take 60 ms to come, of a 100 ms period
        name = "slow"

        def read(self):
            time.sleep(0.06)
            return Frame(np.full((60, 80, 3), 128, np.uint8), time.monotonic_ns())

        def close(self):
            pass

    class Readings(io.BytesIO):  # the daemon's end: it stops reading after six readings
        def write(self, line):
            if self.getvalue().count(b"\n") >= 7:
                raise BrokenPipeError
            return super().write(line)

    snapshots = Snapshots(ClipStore(tmp_path, max_bytes=10**7))
    watch = Watch(
        "slow", Readings(), period_ns=100_000_000, opener=lambda spec: Slow(), snapshots=snapshots
    )
    words, daemon = os.pipe()
    name = clip_name(1, 5 * 10**9)
    os.write(daemon, f"snap {name} {time.monotonic_ns() + 10**10}\n".encode())
    try:
        with pytest.raises(BrokenPipeError):
            watch.run(words)
    finally:
        os.close(words)
        os.close(daemon)
    snapshots.wait()
    assert (tmp_path / f"{name}{SNAPSHOT}").is_file()


def test_a_photo_whose_data_is_damaged_is_told_to_the_daemon_once_with_its_time(tmp_path):
    """A phone's JPEG whose markers are whole but whose data is not passed the page's
    header check, and the camera's process skipped it in its own log alone: the phone
    that sent it was told nothing but "read: false" ten seconds later. Told on the wire
    now, with when it arrived (the phones' folder's stamp) and why, without the path."""
    data = damaged_inside(set_table())
    assert photo_size(data, "the photo") == (1024, 768)  # the page takes it
    written_ns = time.time_ns() - 2_000_000_000
    show(tmp_path, "phone.jpg", data, mtime_ns=written_ns)
    out = io.BytesIO()
    watch = Watch(str(tmp_path), out, opener=lambda folder: FolderSource(tmp_path, arrived=True))
    before = time.monotonic_ns()
    watch.step()
    status, said = _lines(out)
    assert status["ok"] and said.keys() == {"unread", "t"}
    assert said["unread"].startswith("a damaged JPEG (Corrupt JPEG data")
    assert abs(said["t"] - (before - 2_000_000_000)) < 100_000_000
    assert parse(json.dumps(said).encode()) == Unread(said["t"], said["unread"])
    watch.step()
    assert _lines(out) == []  # once
