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


def test_an_official_match_deal_by_deal():
    script = "config players=3 rules=official deals=2 dealer_plays=false\n1 press 2\n2 valid\n"
    text = picture(script)
    assert "deal 1 of 2 · dealer P1 (sits out)" in text and "[DEALS, sits out]" in text
    over = picture(script + "3 super\n4 press 1\n5 invalid\n6 super\n")
    assert "1. P2 ▲  1   (deals: 1 · 0)" in over and "3. P1 ●  -1   (deals: 0 · -1)" in over


def test_solitaire_counts_the_cards_and_says_won_or_lost():
    text = picture("config players=1 rules=solitaire\n0 super\n")
    assert "deck 66 · table 15 · owed 1" in text and "SUPER IF THERE IS NONE" in text
    assert "*** LOST ***" in picture("config players=1 rules=solitaire\n0 super\n1 end\n")
