"""Prepare the real photos of SET cards that train and check the classifier.

    .venv/bin/python -m tools.vision.set_photos --tomwhite GIT_DIR --ivankeller GIT_DIR \
        [--pclewis GIT_DIR --vimalloc GIT_DIR --errcw GIT_DIR --peterjakubowski GIT_DIR] [--out DIR]

Each GIT_DIR is a clone (or a bare mirror) of the repository below; the files are taken
from the commit named, so that every run prepares the same photos. They are written under
DIR (default build/set-photos, outside what git tracks; or shared/set-photos beside the
clone, where tests/test_vision_photos.py also looks), each source with its licence; none
of them is committed: they are other people's photos, and the repository keeps only the
labels written here (tools/vision/labels/).

- tomwhite/set-game (Tom White, Apache License 2.0), commit bd047ec: data/train-v2/labelled,
  13,149 crops of one deck's 81 cards, photographed as boards of 27 under varying light
  with a phone (2017-03-11 to 18) and a Nikon D80 (DSC_*): the classifier's real training
  data, 15 % of its photos held out. Its test boards, with their cards' list: 20170106_205743.jpg
  (15 cards, the phone, before the training photos) and webcam/*.png (4 boards of 12, a
  webcam under two lamps: a camera the training never saw).
- ivankeller/setgame (Ivan Keller, MIT licence at commit 1795a8e; the repository is under
  the GPL since), tests/resource/test_board.jpg: 12 cards of another deck on a wooden
  table, a Nexus 5 (2017): another deck, camera, table and person, never trained on.

- pclewis/set-solver (Philip Lewis, Eclipse Public License 1.0), commit f3042b4, resources/:
  boards of 3 to 12 cards of a third deck on a black table, a dark glass table and a
  laptop's lid, from above and at a slant, under a lamp's shadows, with hands and a blur of
  motion in view, and a card held in a hand; three phones (a Galaxy S5, a Galaxy Note 4
  and a Google phone, 2015). The cards of its 11 boards the finder was tuned on
  (evaluate.TUNING) are trained on as well; the others are held out.
- vimalloc/set-solver (Landon GB, MIT), commit a0032d6, test_pictures/: a fourth deck
  (cream-white, a deep blue-purple) on a dark wooden table, among envelopes, torn paper
  discs and printed labels that are not cards, some cards tilted; a Nexus 6P (2017).
- errcw/set-solver (Eric Woroshow, MIT), commit 998431b, img/test/{a,b,c}.jpg: three boards
  of 12 on a light wooden table, a Nexus 5X (2021); its d, e and f are over the mirror's
  4 MiB and not taken.
- peterjakubowski/SET-Card-Game-Solver (Peter Jakubowski, Apache License 2.0), commit
  2b74472, images/sample/IMG_5254.JPG: 12 cards on a dark wooden table, an iPhone 7.

Looked at and left out: nicolashahn/set-solver's photos (no licence on its master: the MIT
licence is only in an unmerged pull request by someone else); piratefsh/set-solver and
tunabenson/SetCardRecognition (boards, no licence in any commit); pclewis's set2.jpg and
set3.jpg (no camera in their EXIF, one 800 pixels wide: perhaps not the author's own
photos), crazy.jpg and pcl-bad-set3.jpg (cards lying on each other, washed out by a
window: no sure face to label for some); and the other solvers' photos found without
a licence.

The cards' faces and places in the boards are in tools/vision/labels/ (written by hand,
from the photos and the repositories' lists).
"""

import argparse
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILT = ROOT / "build" / "set-photos"


def prepared() -> Path:
    """Where the prepared photos are read from: $REFEREE_SET_PHOTOS, else build/set-photos
    where it was made, else shared/set-photos beside the clone."""
    named = os.environ.get("REFEREE_SET_PHOTOS")
    if named:
        return Path(named)
    return BUILT if BUILT.is_dir() else ROOT.parent / "shared" / "set-photos"


TOMWHITE = "bd047ece2f07e483f39fa41ba1170d9afd9a768c"
IVANKELLER = "1795a8e"


@dataclass(frozen=True)
class Boards:
    """A repository's board photos taken whole: which commit, which files, its licence."""

    repo: str
    commit: str
    licence: str  # the licence file's path in the repository
    says: str  # the licence and the author, written beside the photos
    photos: tuple[str, ...]


BOARDS = {
    "pclewis": Boards(
        "pclewis/set-solver",
        "f3042b4ab9bfda2c472340dfc5d727994b6a86ec",
        "LICENSE",
        "Philip Lewis, Eclipse Public License 1.0 (its LICENSE and README.md)",
        tuple(
            f"resources/{name}.jpg"
            for name in [
                "angle",
                "finger1",
                "finger2",
                "finger3",
                "line",
                "overhead",
                "pcl-bad-set1",
                "pcl-set1",
                "pcl-set2",
                "pleasework",
                "scramble",
                "set1",
                "set4",
                "shadow1",
                "shadow2",
                "shadow3",
                "shadow4",
                "shadow5",
                "shadow6",
                "test1",
                "test2",
                "test3",
                "test4",
                "test5",
                "trick",
            ]
        ),
    ),
    "vimalloc": Boards(
        "vimalloc/set-solver",
        "a0032d6d5f01915d17c678ddc7ef37a80978530b",
        "LICENSE",
        "Landon GB (Copyright (c) 2016 Landon), MIT License",
        tuple(
            f"test_pictures/{name}.jpg"
            for name in [
                "filter_cards1",
                "filter_cards2",
                "filter_cards3",
                "filter_cards4",
                "filter_cards5",
                "set",
            ]
        ),
    ),
    "errcw": Boards(
        "errcw/set-solver",
        "998431b486f77f4f24ee894151e085e350a05934",
        "LICENSE",
        "Eric Woroshow (Copyright (c) 2021 Eric Woroshow), MIT License",
        ("img/test/a.jpg", "img/test/b.jpg", "img/test/c.jpg"),
    ),
    "peterjakubowski": Boards(
        "peterjakubowski/SET-Card-Game-Solver",
        "2b74472d2547419d1d489363f2e89f627af23c0d",
        "LICENSE",
        "Peter Jakubowski, Apache License 2.0",
        ("images/sample/IMG_5254.JPG",),
    ),
}


def _files(git_dir: Path, commit: str, prefix: str) -> list[tuple[str, str]]:
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", commit, "--", prefix],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [(line.split("\t", 1)[1], line.split()[2]) for line in out.splitlines()]


def _copy(git_dir: Path, blob: str, target: Path) -> bool:
    target.parent.mkdir(parents=True, exist_ok=True)
    got = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "blob", blob], capture_output=True
    )
    if got.returncode != 0:
        print(f"{target.name}: not in {git_dir}")
        return False
    target.write_bytes(got.stdout)
    return True


def prepare(tomwhite: Path | None, ivankeller: Path | None, out: Path) -> None:
    if tomwhite is not None:
        n = 0
        for path, blob in _files(tomwhite, TOMWHITE, "data/train-v2/labelled"):
            n += _copy(
                tomwhite,
                blob,
                out / "tomwhite" / "labelled" / Path(path).relative_to("data/train-v2/labelled"),
            )
        boards = [
            p
            for p in _files(tomwhite, TOMWHITE, "data")
            if p[0] == "data/20170106_205743.jpg"
            or (p[0].startswith("data/webcam/") and p[0].endswith(".png"))
        ]
        for path, blob in boards:
            n += _copy(tomwhite, blob, out / "tomwhite" / "boards" / Path(path).name)
        (out / "tomwhite" / "LICENSE.txt").write_bytes(
            subprocess.run(
                ["git", "--git-dir", str(tomwhite), "show", f"{TOMWHITE}:LICENSE.txt"],
                check=True,
                capture_output=True,
            ).stdout
        )
        print(f"tomwhite/set-game: {n} files")
    if ivankeller is not None:
        n = 0
        for path, blob in _files(ivankeller, IVANKELLER, "tests/resource/test_board.jpg"):
            n += _copy(ivankeller, blob, out / "ivankeller" / "boards" / Path(path).name)
        license_ = subprocess.run(
            ["git", "--git-dir", str(ivankeller), "show", f"{IVANKELLER}:LICENSE"],
            check=True,
            capture_output=True,
        ).stdout
        (out / "ivankeller" / "LICENSE").write_bytes(license_)
        print(f"ivankeller/setgame: {n} files")


def prepare_boards(name: str, git_dir: Path, out: Path) -> None:
    """A source of BOARDS: its photos under OUT/NAME/boards (named by their file name, the
    suffix made lower case), its licence and where they come from beside them."""
    source = BOARDS[name]
    wanted = set(source.photos)
    n = 0
    for path, blob in _files(git_dir, source.commit, "."):
        if path in wanted:
            target = Path(path).with_suffix(Path(path).suffix.lower()).name
            n += _copy(git_dir, blob, out / name / "boards" / target)
    licence = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{source.commit}:{source.licence}"],
        check=True,
        capture_output=True,
    ).stdout
    (out / name / "LICENSE").write_bytes(licence)
    (out / name / "SOURCE.txt").write_text(
        f"https://github.com/{source.repo} at commit {source.commit}\n{source.says}\n"
        f"{chr(10).join(source.photos)}\n"
    )
    print(f"{source.repo}: {n} of {len(wanted)} photos")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tomwhite", type=Path, help="a clone of tomwhite/set-game (its .git)")
    parser.add_argument("--ivankeller", type=Path, help="a clone of ivankeller/setgame (its .git)")
    for name, source in BOARDS.items():
        parser.add_argument(f"--{name}", type=Path, help=f"a clone of {source.repo} (its .git)")
    parser.add_argument("--out", type=Path, default=BUILT)
    args = parser.parse_args()
    prepare(args.tomwhite, args.ivankeller, args.out)
    for name in BOARDS:
        if getattr(args, name) is not None:
            prepare_boards(name, getattr(args, name), args.out)


if __name__ == "__main__":
    main()
