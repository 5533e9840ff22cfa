"""What the table reads after a step: no "(+0)", no "nobody pays 1"."""

import pytest

from referee.rules import Judgement
from referee.rules.effects import Judged, TimeUp


@pytest.mark.parametrize(
    ("judged", "text"),
    [
        (Judged(2, Judgement.VALID, 1), "P2 SET! (+1)"),
        (Judged(2, Judgement.INVALID, -1), "P2 no SET (-1)"),
        (Judged(2, Judgement.INVALID, 0), "P2 no SET (no point to pay)"),
        (Judged(2, Judgement.TIMEOUT, 0), "P2 too late (no point to pay)"),
        (Judged(2, Judgement.VALID, 0), "P2 SET! (scores 0)"),
    ],
)
def test_a_verdict_says_what_it_did_to_the_score(judged, text):
    assert judged.text == text


def test_time_up_says_who_pays():
    assert TimeUp((1, 3)).text == "time! P1, P3 pay 1"
    assert TimeUp((1,)).text == "time! P1 pays 1"
    assert TimeUp(()).text == "time! nobody has a point to pay"
