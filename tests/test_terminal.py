"""The terminal's picture of a game: what it shows, and what it leaves out."""

from referee.outputs.terminal import KEYS, render
from referee.view import View

from .rules.helpers import play


def picture(script: str, now_s: float = 0, source: str = "GPIO") -> str:
    settings, state, _ = play(script)
    return render(View(settings, state, int(now_s * 1e9), source=source), colour_on=False)


def test_a_calls_photo_finish_while_it_is_judged_and_just_after():
    judged = picture("config players=3\n0 press 2\n0.004 press 3\n1 valid\n", 1)
    assert "photo finish: P2 by 4.0 ms over P3" in judged


def test_an_old_photo_finish_is_not_shown_in_a_super_round():
    text = picture("config players=3\n0 press 2\n1 valid\n2 super\n3 press 1\n", 3)
    assert "photo finish" not in text and "SUPER ROUND" in text


def test_the_solo_increment_during_a_no_set_claim():
    text = picture("config players=1 rules=solo\n0 super\n", 15)
    assert "a SET now scores 50" in text and "NO SET ON THE TABLE?" in text


def test_the_keys_come_from_the_key_map():
    assert KEYS == "keys: 1-8 buzzers  v valid  x invalid  s super  u undo  e end  q quit"
    assert KEYS in picture("config players=2\n", source="keyboard")
