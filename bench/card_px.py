"""How many pixels a card needs in the camera's frame: what wiring.md's heights rest on.

    .venv/bin/python bench/card_px.py [--px 120 100 90 80 70 60 50]

The held-out real boards (tools/vision/evaluate.py's, where tools/vision/set_photos.py
prepared them) are each shrunk so that their cards' median short side is N px, laid in
the middle of a 1280 x 960 frame (what the box asks a camera for: camera/sources.py) filled
with the board's own table colour, and read as the box reads a frame, each card matched to
its label as evaluate.py matches it. A board larger than the frame at N is left out of N's
row. Shrinking a sharp photo flatters it: a camera's own pixels at that size are softer, so
the least N that reads every card is a floor, not a goal.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from machine import header, load  # noqa: E402

from referee.vision.decode import read_photo  # noqa: E402
from referee.vision.layout import read_frame  # noqa: E402
from tools.vision.evaluate import LABELS, Tally, evaluate, labels, photo_of  # noqa: E402
from tools.vision.set_photos import prepared  # noqa: E402

FRAME_W, FRAME_H = 1280, 960


def in_a_frame(image: np.ndarray, scale: float) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """`image` shrunk by `scale` in the middle of a camera's frame of its edges' colour;
    where it lies (x, y, w, h)."""
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    h, w = small.shape[:2]
    edge = np.concatenate([small[0], small[-1], small[:, 0], small[:, -1]])
    frame = np.empty((FRAME_H, FRAME_W, 3), np.uint8)
    frame[:] = np.median(edge, axis=0)
    x, y = (FRAME_W - w) // 2, (FRAME_H - h) // 2
    frame[y : y + h, x : x + w] = small
    return frame, (x, y, w, h)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--px", type=int, nargs="+", default=[120, 100, 90, 80, 70, 60, 50])
    args = parser.parse_args()
    cv2.setNumThreads(1)
    header("bench/card_px.py: the pixels a card needs in a 1280 x 960 frame (issue 32)")
    boards = []
    for label in sorted(LABELS.glob("*/*.txt")):
        photo = photo_of(prepared(), label.parent.name, label.stem)
        if photo is None:
            print(f"{label.parent.name}/{label.stem}: no photo (tools/vision/set_photos.py)")
            continue
        image = read_photo(photo).image
        cards = read_frame(image).cards
        short = float(np.median([min(c.box[2], c.box[3]) for c in cards]))
        boards.append((image, labels(label), short))
        print(f"{label.parent.name}/{label.stem}: its cards {short:.0f} px across as photographed")
    if not boards:
        print(f"no prepared photos in {prepared()}")
        return 1
    print()
    for px in args.px:
        total = Tally()
        for image, truth, short in boards:
            if image.shape[1] * px / short > FRAME_W or image.shape[0] * px / short > FRAME_H:
                continue
            frame, (x, y, w, h) = in_a_frame(image, px / short)
            moved = [((u * w + x) / FRAME_W, (v * h + y) / FRAME_H, face) for u, v, face in truth]
            total.add(evaluate(frame, moved, None))
        print(total.lines(f"{px:>4} px")[0])
    print(f"at end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
