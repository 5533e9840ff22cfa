"""How right the camera's eyes are on real photos held out of the training.

    .venv/bin/python -m tools.vision.evaluate [--photos DIR] [--show DIR] [--model ONNX]
        [--as PERTURBATION | --as all]

Each board photo named in tools/vision/labels/SOURCE/NAME.txt (every card's middle and
face, written by hand) is read as `referee look` reads it, from
PHOTOS/SOURCE/boards/NAME.{jpg,png} (tools/vision/set_photos.py; PHOTOS by default where
set_photos.prepared() finds them). A card read is matched to the labelled card whose
middle is nearest its own, within a third of a card; a card read with no labelled card there is
*invented*. For each attribute: right (read right), wrong and sure (read wrong on a card
read surely), unsure (the card unsure, or not found); for whole cards the same, and the
cards missed, by board, by source, and for the finder's tuning boards (TUNING) and the
boards held out of its tuning apart. --show writes each photo with what was read drawn on
it; --model reads with another classifier than referee/vision/cards.onnx (one trained anew,
measured beside the one it would replace); --as reads each photo as another camera or
light would have taken it (tools/vision/perturb.py: turned, shrunk, recompressed, noisy,
exposed more or less, a warmer or cooler white), `all` one line for each.

The photos, and which deck, camera and person each is, are in set_photos.py.
"""

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from referee.vision import classify
from referee.vision.card import Face
from referee.vision.decode import read_photo
from referee.vision.layout import read_frame

from .perturb import PERTURBATIONS
from .set_photos import prepared

LABELS = Path(__file__).with_name("labels")
ATTRIBUTES = ("number", "color", "shading", "shape")
# The boards the finder (referee/vision/find_cards.py) was tuned on (referee/vision/MODEL.md);
# every other board is held out of that tuning, and is reported apart.
TUNING = frozenset(
    {
        "pclewis/shadow1",
        "pclewis/shadow2",
        "pclewis/shadow3",
        "pclewis/finger1",
        "pclewis/test1",
        "pclewis/test2",
        "pclewis/test3",
        "pclewis/line",
        "pclewis/angle",
        "pclewis/scramble",
        "pclewis/trick",
    }
)


def labels(path: Path) -> list[tuple[float, float, Face]]:
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        x, y, n, color, shading, shape = line.split()
        out.append((float(x), float(y), Face(int(n), color, shading, shape)))
    return out


@dataclass
class Tally:
    cards: int = 0
    missed: int = 0
    invented: int = 0
    sure_right: int = 0
    sure_wrong: int = 0
    unsure: int = 0
    right: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ATTRIBUTES, 0))
    wrong_sure: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ATTRIBUTES, 0))

    def add(self, other: "Tally") -> None:
        for k in ("cards", "missed", "invented", "sure_right", "sure_wrong", "unsure"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        for a in ATTRIBUTES:
            self.right[a] += other.right[a]
            self.wrong_sure[a] += other.wrong_sure[a]

    def lines(self, name: str) -> list[str]:
        n = max(self.cards, 1)
        out = [
            f"{name}: {self.cards} cards;"
            f" right and sure {self.sure_right} ({self.sure_right / n:.1%}),"
            f" wrong and sure {self.sure_wrong} ({self.sure_wrong / n:.1%}),"
            f" unsure {self.unsure} ({self.unsure / n:.1%}), of which missed {self.missed};"
            f" invented {self.invented}"
        ]
        for a in ATTRIBUTES:
            right, wrong = self.right[a] / n, self.wrong_sure[a] / n
            out.append(
                f"    {a:<8} right {right:6.1%}   wrong and sure {wrong:5.1%}"
                f"   unsure {self.unsure / n:5.1%}"
            )
        return out


def matched(
    corners: list[np.ndarray], truth: list[tuple[float, float, Face]], width: int, height: int
) -> list[int | None]:
    """Each card found (its corners in a `width` x `height` photo): the labelled card whose
    middle is nearest its own, within a third of a card (the cards' median short side);
    None where there is none, or an earlier card took it (the card is *invented*)."""
    # As layout.read_frame boxes a card: its corners' whole pixels, within the photo.
    sides = [
        np.minimum((width, height), np.ceil(c.max(axis=0))) - np.maximum(0, np.floor(c.min(axis=0)))
        for c in corners
    ]
    size = np.median([min(s) for s in sides]) if sides else 0
    taken: list[int | None] = []
    for quad in corners:
        middle = np.mean(quad, axis=0)
        distances = [np.hypot(x * width - middle[0], y * height - middle[1]) for x, y, _ in truth]
        best = int(np.argmin(distances)) if distances else -1
        taken.append(None if best < 0 or distances[best] > size / 3 or best in taken else best)
    return taken


def evaluate(image: np.ndarray, truth: list[tuple[float, float, Face]], show: Path | None) -> Tally:
    layout = read_frame(image)
    height, width = image.shape[:2]
    tally = Tally(cards=len(truth))
    taken = matched([np.array(c.corners) for c in layout.cards], truth, width, height)
    for card, best in zip(layout.cards, taken, strict=True):
        if best is None:
            tally.invented += 1
            continue
        face = truth[best][2]
        right = [getattr(card.face, a) == getattr(face, a) for a in ATTRIBUTES]
        for a, r in zip(ATTRIBUTES, right, strict=True):
            tally.right[a] += r
            tally.wrong_sure[a] += card.sure and not r
        if not card.sure:
            tally.unsure += 1
        elif all(right):
            tally.sure_right += 1
        else:
            tally.sure_wrong += 1
    tally.missed = len(truth) - sum(best is not None for best in taken)
    tally.unsure += tally.missed
    if show is not None:
        drawn = image.copy()
        for card in layout.cards:
            colour = (0, 200, 0) if card.sure else (0, 165, 255)
            cv2.polylines(drawn, [np.array(card.corners, np.int32)], True, colour, 3)
            x, y, _, _ = card.box
            cv2.putText(
                drawn, str(card.face), (x, y + 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, colour, 2
            )
        cv2.imwrite(str(show), drawn)
    return tally


def photo_of(photos: Path, source: str, name: str) -> Path | None:
    for ext in (".jpg", ".png"):
        if (photos / source / "boards" / f"{name}{ext}").exists():
            return photos / source / "boards" / f"{name}{ext}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=Path, default=prepared())
    parser.add_argument("--show", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--model", type=Path, help="the classifier (ONNX) to read with")
    parser.add_argument("--as", dest="perturbed", choices=[*PERTURBATIONS, "all"])
    args = parser.parse_args()
    if args.model is not None:
        classify.MODEL = args.model
    if args.perturbed == "all":
        for name in ("as taken", *PERTURBATIONS):
            perturbed = None if name == "as taken" else name
            total, _, _ = _read_boards(args.photos, perturbed, None, quiet=True)
            print(f"{name:<14} " + total.lines("")[0].removeprefix(": "))
        return
    total, tuning, held_by_source = _read_boards(
        args.photos, args.perturbed, args.show, quiet=False
    )
    held_out = Tally()
    for tally in held_by_source.values():
        held_out.add(tally)
    print()
    print(tuning.lines("the finder's tuning boards")[0])
    for source, tally in held_by_source.items():
        print(tally.lines(f"held out, {source}")[0])
    print(held_out.lines("held out")[0])
    if args.json:
        print(json.dumps(total.__dict__))


def _read_boards(
    photos: Path, perturbed: str | None, show_in: Path | None, *, quiet: bool
) -> tuple[Tally, Tally, dict[str, Tally]]:
    """Every labelled board read (as `perturbed` would have taken it), each board's and
    each source's lines printed unless `quiet`; the whole, the finder's tuning boards, and
    the boards held out of its tuning by source."""
    total, tuning = Tally(), Tally()
    by_source: dict[str, Tally] = {}
    held_by_source: dict[str, Tally] = {}
    for label in sorted(LABELS.glob("*/*.txt")):
        source, name = label.parent.name, label.stem
        photo = photo_of(photos, source, name)
        if photo is None:
            print(f"{source}/{name}: no photo (tools/vision/set_photos.py)")
            continue
        show = None
        if show_in:
            show_in.mkdir(parents=True, exist_ok=True)
            show = show_in / f"{source}-{name}.jpg"
        image, truth = read_photo(photo).image, labels(label)
        if perturbed is not None:
            image, where = PERTURBATIONS[perturbed](image)
            truth = [(*where(x, y), face) for x, y, face in truth]
        tally = evaluate(image, truth, show)
        if not quiet:
            print("\n".join(tally.lines(f"{source}/{name}")))
        by_source.setdefault(source, Tally()).add(tally)
        total.add(tally)
        if f"{source}/{name}" in TUNING:
            tuning.add(tally)
        else:
            held_by_source.setdefault(source, Tally()).add(tally)
    if not quiet:
        print()
        for source, tally in by_source.items():
            print("\n".join(tally.lines(source)))
        print("\n".join(total.lines("all")))
    return total, tuning, held_by_source


if __name__ == "__main__":
    main()
