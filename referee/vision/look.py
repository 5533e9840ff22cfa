"""`referee look PHOTO...`: each photo's cards and SETs, for a person or as JSON."""

import json
import os
import sys
import tempfile
from pathlib import Path

from referee.errors import EXIT_BAD_INPUT, PhotoFileError

from .decode import Photo, read_photo
from .layout import Layout, read_frame


def look(photos: list[Path], as_json: bool = False) -> int:
    """Read each photo; one that cannot be read is named on stderr, the rest are read. The
    exit status: 0, or EXIT_BAD_INPUT when a photo could not be read."""
    status = 0
    for path in photos:
        try:
            photo = read_undamaged(path)
            # Where each card lies, in the photo's own pixels (it was read shrunk).
            layout = read_frame(photo.image).scaled(*photo.scale)
        except PhotoFileError as err:
            print(err, file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        try:
            print(json.dumps(layout.as_json()) if as_json else describe(path, layout))
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader has gone (`| head`): what is left would go nowhere. Python would
            # flush stdout again at exit and fail again: it goes to /dev/null instead.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            break
    return status


# What libjpeg says of coded data it could not decode (it decodes the rest, grey).
_DAMAGED = ("Corrupt JPEG data", "Premature end of JPEG file")


def read_undamaged(path: Path) -> Photo:
    """read_photo, with what the C libraries under OpenCV write on the process's stderr
    (libjpeg's complaints, printed past Python) taken: a complaint of damaged data makes
    the photo refused in one line, the rest is dropped, so that the command's output is
    its own."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as said:
        os.dup2(said.fileno(), 2)
        try:
            photo = read_photo(path)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        said.seek(0)
        lines = said.read(4096).decode(errors="replace").splitlines()
    damage = next((line for line in lines if line.startswith(_DAMAGED)), None)
    if damage is not None:
        raise PhotoFileError(f"{path}: a damaged JPEG ({damage.strip()})")
    return photo


def describe(path: Path, layout: Layout) -> str:
    sure = sum(c.sure for c in layout.cards)
    count = len(layout.cards)
    sets = len(layout.sets)
    lines = [
        f"{path}: {count} card{'' if count == 1 else 's'}, {sure} read surely;"
        f" {sets} SET{'' if sets == 1 else 's'}"
        + ("" if sets or sure < 3 else " (deal three more)")
    ]
    for i, card in enumerate(layout.cards):
        x, y, w, h = card.box
        mark = " " if card.sure else "?"
        note = "" if card.sure else f"  ({card.why})"
        lines.append(f"{i:>4} {mark} {card.face!s:<28} at {x},{y} {w}x{h}{note}")
    for s in layout.sets:
        lines.append("  SET: " + ", ".join(f"{i} ({layout.cards[i].face})" for i in s))
    return "\n".join(lines)
