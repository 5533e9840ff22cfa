"""How far from the box's screen a phone reads the lobby's QR code (issue 19, "Join").

    .venv/bin/python bench/qr.py [--frames 5]

No phone here, so the phone's camera is simulated, and every assumption is printed with
the table. The lobby is drawn as the box draws it (the gallery's lobby, SDL's dummy
driver, the address a home Wi-Fi gives: http://192.168.1.23:8080/) at each screen's size;
the panel's width in mm gives a pixel's size. A phone's main camera (a 26 mm equivalent
lens: 69 degrees across) held square to the screen at a distance d sees a pixel of the
screen on `FRAME_PX / (2 d tan(34.7 degrees))` of its pixels a mm. Scanning apps decode
the camera's preview, not a photo: frames 1280 and 1920 pixels across. Each frame is the
screen's picture area-averaged onto the camera's pixels (smoothscale, as a sensor's
pixels sum the light on them), blurred by a Gaussian of BLUR_PX (the lens and a focus a
little off), with sensor noise (NOISE of full scale, a seed a frame), then decoded by
zbar (`zbarimg`, Debian's zbar-tools: the reader of many Linux and Android scanners).

A distance is read when every one of --frames noisy frames decodes to the address; the
table gives the farthest, in 5 % steps, and the code's module on the screen (mm).
Left out, and each makes a real phone's reach shorter or longer: the screen seen at an
angle, its glare, the room's light, a phone's sharper decoder and its zoom.

zbar wants about 3 of the camera's pixels a module here; Google's ML Kit, the reader of
many Android scanners, asks for 2 (its "Input image guidelines"): the table also gives
the distance at which a module covers 2 pixels of a 1280-pixel frame, the geometry alone.

Target, read by zbar in the 1280-pixel frame: a 3.5" screen from 25 cm (the phone held
over the box in the middle of the table, as over a menu's code), a 7" panel from 50 cm
and a TV from 2 m (from the table). The exit status is 1 when a screen misses it.
"""

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import numpy as np
import pygame

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import header, load  # noqa: E402

from referee.outputs import qr  # noqa: E402
from referee.outputs.display import render  # noqa: E402
from tools.gallery import JOIN, views  # noqa: E402

HFOV_DEG = 69.4  # a 26 mm-equivalent lens across a 36 mm frame
FRAMES_PX = (1280, 1920)
BLUR_PX = 0.7
NOISE = 0.02
STEP = 1.05  # each distance 5 % farther than the one before
GREY = 60  # the table and the box around the screen, as the camera sees them


@dataclass(frozen=True)
class Screen:
    name: str
    size: tuple[int, int]
    width_mm: float  # the panel's active area, across
    target_cm: float


SCREENS = (
    Screen('3.5" SPI panel', (480, 320), 73.4, 25),
    Screen('7" panel', (1280, 720), 154.2, 50),
    Screen('32" TV', (1280, 720), 698.4, 200),
)


# A distance's field of view: 2 d TAN_HALF across.
TAN_HALF = math.tan(math.radians(HFOV_DEG / 2))
MODULES = len(qr.modules(JOIN.url or "")) + 2 * qr.QUIET  # across the code, its quiet zone too


@dataclass(frozen=True)
class Lobby:
    """The lobby as the box draws it on a screen, and where its code is."""

    screen: Screen
    picture: np.ndarray  # grey levels, rows by columns
    code_x: int  # the code's centre, in the screen's pixels
    code_y: int
    module_mm: float  # a module of the code on the screen

    @classmethod
    def drawn(cls, screen: Screen) -> "Lobby":
        surface = pygame.Surface(screen.size)
        render(surface, views()["lobby"])
        rgb = pygame.surfarray.array3d(surface).astype(np.float32)
        picture = (rgb @ np.array([0.299, 0.587, 0.114], np.float32)).T
        # Found in the picture, as a camera would: the only white on the box's dark screens.
        light = picture > 250
        rows = np.flatnonzero(light.sum(axis=1) > 0)
        cols = np.flatnonzero(light.sum(axis=0) > 0)
        side = min(rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1)
        return cls(
            screen,
            picture,
            (cols[0] + cols[-1]) // 2,
            (rows[0] + rows[-1]) // 2,
            side / MODULES * screen.width_mm / screen.size[0],
        )

    def geometric_cm(self, frame_px: int, px_a_module: float) -> float:
        """The distance at which a module covers px_a_module of the frame's pixels."""
        return frame_px * self.module_mm / (px_a_module * 2 * TAN_HALF) / 10


def blurred(image: np.ndarray, sigma: float) -> np.ndarray:
    radius = max(1, math.ceil(3 * sigma))
    x = np.arange(-radius, radius + 1)
    kernel = np.exp(-(x**2) / (2 * sigma**2))
    kernel /= kernel.sum()
    for axis in (0, 1):  # separable: along the rows, then the columns
        padded = np.pad(image, [(radius, radius) if a == axis else (0, 0) for a in (0, 1)], "edge")
        n = image.shape[axis]
        image = sum(w * padded.take(range(i, i + n), axis=axis) for i, w in enumerate(kernel))
    return image


def camera_frame(lobby: Lobby, d_mm: float, frame_px: int, seed: int) -> np.ndarray:
    """What a phone frame_px across sees of the screen at d_mm, aimed at the code: the
    code's centre in the frame's middle, the rest of the screen around it as far as the
    frame goes."""
    screen, picture = lobby.screen, lobby.picture
    scale = frame_px / (2 * d_mm * TAN_HALF) * screen.width_mm / screen.size[0]
    h, w = picture.shape
    seen = (max(1, round(w * scale)), max(1, round(h * scale)))
    surface = pygame.surfarray.make_surface(np.repeat(picture.T[:, :, None], 3, axis=2))
    small = pygame.surfarray.array3d(pygame.transform.smoothscale(surface, seen))[:, :, 0].T
    frame = np.full((frame_px * 9 // 16, frame_px), GREY, np.float32)
    fh, fw = frame.shape
    left, top = fw // 2 - round(lobby.code_x * scale), fh // 2 - round(lobby.code_y * scale)
    f0, f1 = max(0, top), min(fh, top + small.shape[0])
    g0, g1 = max(0, left), min(fw, left + small.shape[1])
    frame[f0:f1, g0:g1] = small[f0 - top : f1 - top, g0 - left : g1 - left]
    frame = blurred(frame, BLUR_PX)
    frame += np.random.default_rng(seed).normal(0, NOISE * 255, frame.shape)
    return np.clip(frame, 0, 255).astype(np.uint8)


def decodes(frame: np.ndarray, folder: Path, zbarimg: str) -> bool:
    path = folder / "frame.pgm"
    h, w = frame.shape
    path.write_bytes(f"P5 {w} {h} 255\n".encode() + frame.tobytes())
    done = subprocess.run([zbarimg, "-q", "--raw", "-Sdisable", "-Sqrcode.enable", str(path)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.stdout.strip() == JOIN.url


def farthest_cm(lobby: Lobby, frame_px: int, frames: int, folder: Path, zbarimg: str) -> float:
    """The farthest distance read in every frame, in steps of STEP of the distance from
    where the code is half the frame across (10 cm at the nearest: a phone's focus) to
    where a module is a pixel and a half; 0 if none is."""
    cm = max(10.0, lobby.module_mm * MODULES / TAN_HALF / 10)
    farthest = lobby.geometric_cm(frame_px, 1.5)
    best = 0.0
    while cm <= farthest:
        if all(
            decodes(camera_frame(lobby, cm * 10, frame_px, seed), folder, zbarimg)
            for seed in range(frames)
        ):
            best = cm
        cm *= STEP
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=5, help="noisy frames a distance")
    args = parser.parse_args()
    zbarimg = shutil.which("zbarimg")
    if zbarimg is None:
        print("bench/qr.py needs zbarimg (Debian: apt install zbar-tools)")
        return 2
    header("bench/qr.py: how far a phone reads the lobby's QR code")
    print(f"the camera: {HFOV_DEG:g} degrees across, frames {' and '.join(map(str, FRAMES_PX))}"
          f" px across, blur {BLUR_PX:g} px, noise {NOISE:.0%}, {args.frames} frames a"
          f" distance, held square to the screen; the address {JOIN.url}")  # fmt: skip
    pygame.display.init()
    pygame.font.init()
    print()
    print("| screen | pixels | module mm | zbar reads to: 1280 px frame | 1920 px |"
          " 2 px a module, 1280 px | target | met? |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---|")
    missed = []
    with tempfile.TemporaryDirectory(prefix="referee-bench-qr-") as folder:
        for screen in SCREENS:
            lobby = Lobby.drawn(screen)
            reach = [farthest_cm(lobby, px, args.frames, Path(folder), zbarimg)
                     for px in FRAMES_PX]  # fmt: skip
            met = reach[0] >= screen.target_cm
            if not met:
                missed.append(screen.name)
            w, h = screen.size
            said = "yes" if met else "NO"
            print(f"| {screen.name} | {w}x{h} | {lobby.module_mm:.2f} | {reach[0]:.0f} cm |"
                  f" {reach[1]:.0f} cm | {lobby.geometric_cm(FRAMES_PX[0], 2):.0f} cm |"
                  f" {screen.target_cm:g} cm | {said} |")  # fmt: skip
    print(f"\nat the end: {load()}")
    print("target met" if not missed else f"target NOT met: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
