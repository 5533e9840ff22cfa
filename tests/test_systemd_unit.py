"""systemd/*.service: systemd accepts each unit, each one's exposure stays at 2.0 or lower, and
the daemon's sandbox admits the devices its parts open."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNITS = sorted((Path(__file__).resolve().parent.parent / "systemd").glob("*.service"))
DAEMON = next(unit for unit in UNITS if unit.name == "referee.service")
ANALYZE = shutil.which("systemd-analyze")

needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def analyze(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    return subprocess.run(
        [ANALYZE, "--no-pager", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def runnable_copy(folder: Path, unit: Path, text: str) -> Path:
    """The unit with ExecStart's program swapped for one that exists on this machine.

    verify fails on a missing program, and /opt/referee is only there on an installed box
    (test_install.py checks that the install puts the program at that path). Every other
    line is the unit's own.
    """
    program = "/opt/referee/bin/referee"
    assert f"\nExecStart={program} " in text
    copy = folder / unit.name
    copy.write_text(text.replace(f"\nExecStart={program} ", f"\nExecStart={sys.executable} "))
    return copy


@needs_analyze
@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_verify_accepts_the_unit(tmp_path, unit):
    checked = analyze("verify", runnable_copy(tmp_path, unit, unit.read_text()))
    # verify exits 0 even for an unknown option, which it only prints: demand silence.
    assert (checked.returncode, checked.stdout + checked.stderr) == (0, "")


@needs_analyze
def test_verify_would_catch_a_misspelt_option(tmp_path):
    unit = UNITS[0]
    text = unit.read_text().replace("\nProtectHome=", "\nProtectHomes=")
    checked = analyze("verify", runnable_copy(tmp_path, unit, text))
    assert "ProtectHomes" in checked.stdout + checked.stderr


@needs_analyze
@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_exposure_is_two_or_lower(unit):
    # --threshold is on the 0-100 scale that the report prints divided by ten.
    rated = analyze("security", "--offline=yes", "--threshold=20", unit)
    found = re.search(
        rf"Overall exposure level for {re.escape(unit.name)}: (\d+\.\d+)", rated.stdout
    )
    assert found, rated.stdout + rated.stderr
    assert float(found[1]) <= 2.0
    assert rated.returncode == 0, rated.stderr


# What the camera's process opens, and the class of each in /proc/devices, which
# DeviceAllow=char-CLASS names: a USB webcam is a V4L2 device (drivers/media/v4l2-core/
# v4l2-dev.c registers video4linux); a Raspberry Pi camera is read through libcamera, which
# opens the media graphs (mc/mc-devnode.c: media), the sensor's subdevice and the ISP's
# video nodes (video4linux too), and allocates its buffers from a DMA heap (dma-buf/
# dma-heap.c: dma_heap), as picamera2's allocator does: libcamera's DmaBufAllocator and
# picamera2's dma_heap.py name the heaps below. Each is opened for reading and writing.
CAMERA_DEVICES = {
    "/dev/video0": "video4linux",
    "/dev/v4l-subdev0": "video4linux",
    "/dev/media0": "media",
    "/dev/dma_heap/linux,cma": "dma_heap",
    "/dev/dma_heap/vidbuf_cached": "dma_heap",
    "/dev/dma_heap/system": "dma_heap",
}


def unit_values(text: str, key: str) -> list[str]:
    return re.findall(rf"^{key}=(.*)$", text, re.MULTILINE)


@pytest.mark.parametrize("device", CAMERA_DEVICES)
def test_the_daemon_may_open_a_webcam_and_a_pi_camera(device):
    """The camera's process runs in referee.service's sandbox (DevicePolicy=closed): every
    node a camera needs is admitted by its class, read and written."""
    text = DAEMON.read_text()
    assert unit_values(text, "DevicePolicy") == ["closed"]
    allowed = dict(line.split() for line in unit_values(text, "DeviceAllow"))
    access = allowed.get(f"char-{CAMERA_DEVICES[device]}", "")
    assert set("rw") <= set(access), (device, allowed)


def test_the_camera_classes_are_registered_before_the_daemon_starts():
    """A class is admitted only if /proc/devices lists it when the unit starts: videodev
    registers video4linux and pulls in mc, which registers media (dma_heap is built in)."""
    text = DAEMON.read_text()
    for key in ("Wants", "After"):
        units = " ".join(unit_values(text, key)).split()
        assert "modprobe@videodev.service" in units, key
