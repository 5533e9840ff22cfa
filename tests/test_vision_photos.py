"""The camera's eyes on real photos the classifier was not trained on: every labelled
board tools/vision/set_photos.py prepares ($REFEREE_SET_PHOTOS, else build/set-photos,
else shared/set-photos beside the clone). The photos are other people's, kept out of the
repository; without them these tests skip, saying so. Each card's middle and face are in
tools/vision/labels/, written by hand."""

from pathlib import Path

import pytest

from referee.vision.decode import read_photo
from tools.vision.evaluate import LABELS, Tally, evaluate, labels, photo_of
from tools.vision.set_photos import prepared

PREPARED = prepared()


def _boards(folder: Path) -> list[tuple[str, Path, Path]]:
    found = []
    for label in sorted(LABELS.glob("*/*.txt")):
        photo = photo_of(folder, label.parent.name, label.stem)
        if photo is not None:
            found.append((f"{label.parent.name}/{label.stem}", photo, label))
    return found


BOARDS = _boards(PREPARED)
NONE = f"no prepared photos in {PREPARED} (tools/vision/set_photos.py)"


@pytest.mark.skipif(not BOARDS, reason=NONE)
@pytest.mark.parametrize(("name", "photo", "label"), BOARDS, ids=[b[0] for b in BOARDS])
def test_a_real_board_is_read_with_no_card_invented_and_none_wrong_and_sure(name, photo, label):
    tally = evaluate(read_photo(photo), labels(label), None)
    assert tally.invented == 0
    assert tally.sure_wrong == 0
    assert tally.sure_right >= 0.75 * tally.cards, "\n".join(tally.lines(name))


@pytest.mark.skipif(not BOARDS, reason=NONE)
def test_the_held_out_boards_meet_the_targets():
    total = Tally()
    for _, photo, label in BOARDS:
        total.add(evaluate(read_photo(photo), labels(label), None))
    report = "\n".join(total.lines("held-out boards"))
    assert total.invented == 0, report
    assert total.sure_wrong <= 0.01 * total.cards, report
    assert total.sure_right >= 0.97 * total.cards, report
