"""Where the camera's frames come from: a folder, a V4L2 device, a Raspberry Pi camera.

Each source gives the frame it sees now (`read`), or None when there is nothing new to
read; SourceLost (in one line) when it cannot go on: a folder removed, a device unplugged
or failing. The camera's process (watch.py) opens it again later. Frames are BGR images
of a bounded size (vision/decode.py's), stamped on CLOCK_MONOTONIC as they are taken.

A folder means "the newest image file in it is what the camera sees now": the tests'
camera, and a box fed from elsewhere. Nothing in it is trusted: only regular files (no
link, FIFO or device), each read as `referee look` reads a photo (non-blocking, its size
checked first, a damaged, half-written or huge file refused); a file refused is skipped
with one line in the log, and read again only once it changed (a half-written one
finished).

The phones' photos (docs/web.md, "Photo") are such a folder, where a frame's time is when
its file was written (`arrived`): the page writes it as the photo arrives, and a phone's
clock is not trusted.
"""

import importlib
import logging
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from referee.errors import PhotoFileError
from referee.vision.decode import bounded
from referee.vision.look import read_undamaged

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
DEV = Path("/dev")
VIDEO_DEVICES = "video*"
# What a camera is asked for: enough for 21 cards some 200 px across, no more (decoding
# and finding cost grow with the pixels).
WANTED_SIZE = (1280, 960)
PICAMERA_HELP = (
    "picamera2 is not available here (Raspberry Pi OS: sudo apt install python3-picamera2)"
)


class SourceLost(Exception):
    """The source gives no frames: why, in a few words."""


@dataclass(frozen=True)
class Frame:
    image: np.ndarray  # BGR, its long side at most decode.DECODE_PX
    t_ns: int  # CLOCK_MONOTONIC when it was taken (read)


class Source(Protocol):
    name: str

    def read(self) -> Frame | None: ...

    def close(self) -> None: ...


class FolderSource:
    """The newest image file in a folder; `arrived`: each frame stamped with the time its
    file was last written, not when it is read."""

    def __init__(self, folder: Path, *, arrived: bool = False) -> None:
        self.folder, self.arrived = folder, arrived
        self.name = str(folder)
        if not folder.is_dir():
            raise SourceLost(f"{folder}: no such folder")
        self._read: tuple[str, int, int, int] | None = None  # the file last tried, as it was
        self._refused: str | None = None  # the name last refused: said once
        self._unread: tuple[int, str] | None = None  # refused now: its time, why

    def read(self) -> Frame | None:
        newest = self._newest()
        if newest is None or newest == self._read:
            return None
        self._read = newest
        path = self.folder / newest[0]
        try:
            image = read_undamaged(path).image
        except PhotoFileError as err:
            if self._refused != newest[0]:
                log.warning("camera: %s: skipped", err)
                self._refused = newest[0]
                self._unread = self._stamp(newest[3]), str(err).removeprefix(f"{path}: ")
            return None
        self._refused = None
        return Frame(bounded(image), self._stamp(newest[3]))

    def _stamp(self, mtime_ns: int) -> int:
        """A frame's time: now, or with `arrived` when its file was written (mtime_ns)."""
        now_ns = time.monotonic_ns()
        if self.arrived:  # the file's time is the wall clock's: as long ago on this one
            now_ns -= max(0, time.time_ns() - mtime_ns)
        return now_ns

    def unread(self) -> tuple[int, str] | None:
        """The file the last read refused, said once: its time and why (no path), for the
        daemon to tell the phone that sent it; then None until another is refused."""
        unread, self._unread = self._unread, None
        return unread

    def _newest(self) -> tuple[str, int, int, int] | None:
        """The newest image file's name, inode, size and modification time."""
        newest: tuple[int, str, int, int] | None = None
        try:
            with os.scandir(self.folder) as entries:
                for entry in entries:
                    if not entry.name.lower().endswith(IMAGE_SUFFIXES):
                        continue
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:  # gone since it was listed
                        continue
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    key = (info.st_mtime_ns, entry.name, info.st_ino, info.st_size)
                    if newest is None or key[:2] > newest[:2]:
                        newest = key
        except OSError as err:
            raise SourceLost(f"{self.folder}: {err.strerror or err}") from None
        if newest is None:
            return None
        mtime, name, inode, size = newest
        return name, inode, size, mtime

    def close(self) -> None:
        pass


class DeviceSource:
    """A V4L2 camera (a USB webcam), through OpenCV."""

    def __init__(self, device: str) -> None:
        self.name = device
        self._capture = cv2.VideoCapture(device, cv2.CAP_V4L2)
        if not self._capture.isOpened():
            self._capture.release()
            raise SourceLost(f"{device}: cannot be opened as a camera")
        self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, WANTED_SIZE[0])
        self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, WANTED_SIZE[1])
        # One buffer: the frame read is the latest, not one queued while the last was read.
        self._capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)

    def read(self) -> Frame:
        ok, image = self._capture.read()
        if not ok or image is None:
            raise SourceLost(f"{self.name}: no frame")
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise SourceLost(f"{self.name}: frames that are not 8-bit colour ({image.shape})")
        return Frame(bounded(image), time.monotonic_ns())

    def close(self) -> None:
        self._capture.release()


class PiCamera:
    """A Raspberry Pi camera through libcamera's picamera2, where the system has it."""

    def __init__(self) -> None:
        self.name = "picamera"
        try:
            picamera2: Any = importlib.import_module("picamera2")
        except ImportError:
            raise SourceLost(PICAMERA_HELP) from None
        try:
            self._camera = picamera2.Picamera2()
            # RGB888 is libcamera's name for blue, green, red bytes: OpenCV's order.
            main = {"size": WANTED_SIZE, "format": "RGB888"}
            self._camera.configure(self._camera.create_video_configuration(main=main))
            self._camera.start()
        except Exception as err:  # picamera2 raises what libcamera says, of any kind
            raise SourceLost(f"picamera: {err}") from None

    def read(self) -> Frame:
        try:
            image = self._camera.capture_array("main")
        except Exception as err:
            raise SourceLost(f"picamera: {err}") from None
        return Frame(bounded(np.ascontiguousarray(image[:, :, :3])), time.monotonic_ns())

    def close(self) -> None:
        try:
            self._camera.close()
        except Exception as err:
            log.warning("camera: picamera could not be closed: %s", err)


def video_devices() -> list[str]:
    """/dev/video0, /dev/video1, ... in their numbers' order."""
    number = re.compile(r"\d+$")
    found = [str(device) for device in DEV.glob(VIDEO_DEVICES)]
    return sorted(found, key=lambda d: int(m[0]) if (m := number.search(d)) else -1)


class _First:
    """`auto`: the first V4L2 device that gives a frame, with that frame read first."""

    def __init__(self) -> None:
        for device in video_devices():
            try:
                source = DeviceSource(device)
            except SourceLost:
                continue
            try:
                self._first: Frame | None = source.read()
            except SourceLost:
                source.close()
                continue
            self._source, self.name = source, device
            return
        raise SourceLost(f"no camera here gives frames ({DEV / VIDEO_DEVICES})")

    def read(self) -> Frame | None:
        first, self._first = self._first, None
        return first if first is not None else self._source.read()

    def close(self) -> None:
        self._source.close()


def open_source(spec: str) -> Source:
    """The settings' [camera] source, opened: "auto", "picamera", a /dev/ device, else a
    folder; SourceLost when it cannot be now."""
    if spec == "auto":
        return _First()
    if spec == "picamera":
        return PiCamera()
    if spec.startswith("/dev/"):
        return DeviceSource(spec)
    return FolderSource(Path(spec))
