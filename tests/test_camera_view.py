"""What the screens show of the camera (view.TableSeen, captions): its mark while it
watches, beside the microphone's, and "deal three more" for a whole table read surely
with no SET in it; nothing else, and nothing at all while it does not watch."""

from dataclasses import replace

import pytest

from referee.outputs import captions
from referee.outputs.terminal import render
from referee.view import CAM_MARK, MIC_MARK, TableSeen
from tools import gallery

SCOREBOARD = gallery.views()["scoreboard"]


@pytest.mark.parametrize(
    ("table", "said"),
    [
        (TableSeen(12, 12, 0), "no SET in these 12: deal three more"),
        (TableSeen(15, 15, 0), "no SET in these 15: deal three more"),
        (TableSeen(12, 12, 2), None),  # there is a SET
        (TableSeen(12, 11, 0), None),  # an unsure card may hold it
        (TableSeen(9, 9, 0), None),  # the deck's end, or a table seen in part
        (None, None),
    ],
)
def test_no_set_is_said_only_of_a_whole_table_read_surely(table, said):
    assert captions.table_seen(replace(SCOREBOARD, watching=True, table=table)) == said


def test_the_terminal_shows_the_marks_and_the_advice():
    seen = replace(SCOREBOARD, listening=True, watching=True, table=TableSeen(12, 12, 0))
    shown = render(seen, width=100, colour_on=False)
    assert f"{MIC_MARK} · {CAM_MARK}" in shown
    assert "! no SET in these 12: deal three more" in shown
    quiet = render(SCOREBOARD, width=100, colour_on=False)
    assert CAM_MARK not in quiet and "deal three more" not in quiet
