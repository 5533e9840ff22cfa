"""Prepare the real photos of SET cards that train and check the classifier.

    .venv/bin/python -m tools.vision.set_photos --tomwhite GIT_DIR --ivankeller GIT_DIR [--out DIR]

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

Looked at and left out: nicolashahn/set-solver's photos (no licence on its master: the MIT
licence is only in an unmerged pull request by someone else), and the other solvers'
photos found without a licence.

The cards' faces and places in the boards are in tools/vision/labels/ (written by hand,
from the photos and the repositories' lists).
"""

import argparse
import os
import subprocess
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tomwhite", type=Path, help="a clone of tomwhite/set-game (its .git)")
    parser.add_argument("--ivankeller", type=Path, help="a clone of ivankeller/setgame (its .git)")
    parser.add_argument("--out", type=Path, default=BUILT)
    args = parser.parse_args()
    prepare(args.tomwhite, args.ivankeller, args.out)


if __name__ == "__main__":
    main()
