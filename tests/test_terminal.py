"""The terminal's picture of a game: what it shows, and what it leaves out."""

import re
import unicodedata
from dataclasses import replace
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.names import ELLIPSIS, check_name
from referee.outputs.captions import KEY_LEGEND
from referee.outputs.terminal import render
from referee.view import Notice, View
from tools import gallery

from .conftest import also_suppressed
from .rules.helpers import play

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def columns(line: str) -> int:
    """The columns a terminal gives a line: East Asian wide and full-width characters
    two, combining marks and format characters none, the rest one."""
    return sum(
        0
        if unicodedata.category(c) in ("Mn", "Me", "Cf")
        else 2
        if unicodedata.east_asian_width(c) in ("W", "F")
        else 1
        for c in ANSI.sub("", line)
    )


@cache
def gallery_views() -> dict[str, View]:
    return gallery.views()


def name_or_none(raw: str) -> str | None:
    try:
        return check_name(raw)
    except ValueError:
        return None


# Names a phone may give: wide (CJK, Hangul, full-width, emoji) and marks among the rest.
WIDE = st.one_of(
    st.sampled_from("李小龍王菲한글ｱＡ😀🂡"),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.characters(categories=["L", "M", "N", "P", "S", "Zs"]),
)
NAMES = st.text(WIDE, min_size=1, max_size=30).map(name_or_none).filter(bool)


@settings(suppress_health_check=also_suppressed(HealthCheck.filter_too_much))
@given(
    st.lists(NAMES, min_size=8, max_size=8),
    st.integers(4, 200),
    st.sampled_from(sorted(gallery_views())),
)
def test_no_line_is_wider_than_the_terminal_whatever_the_names(names, width, which):
    """Issue 29: measured in characters, four CJK names made 88-column lines on an
    80-column terminal."""
    view = replace(gallery_views()[which], names=tuple(enumerate(names, 1)))
    for colour in (False, True):
        text = render(view, colour_on=colour, width=width)
        assert max(map(columns, text.splitlines())) <= width, text


def test_four_cjk_names_fit_eighty_columns_and_a_long_one_is_cut_by_columns():
    names = {1: "李小龍", 2: "王菲王菲王菲王菲王菲王菲", 3: "한글한글한글한글", 4: "王" * 24}
    view = replace(gallery_views()["scoreboard"], names=tuple(names.items()))
    text = render(view, colour_on=False, width=80)
    assert max(map(columns, text.splitlines())) <= 80, text
    assert "李小龍 ●" in text and "王菲王菲王菲王菲王菲王菲 ▲" in text  # 24 columns: whole
    assert "王" * 11 + ELLIPSIS + " ◆" in text  # 48 columns, cut to 24


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
    legend = (
        "keys:   1-8 buzzers   v valid   x invalid   s super   u undo   e end   r replay   q quit"
    )
    assert tuple(legend.split("   ")[1:]) == KEY_LEGEND
    # At 80 columns it takes two lines: the words are all there, in order.
    shown = " ".join(picture("config players=2\n", source="keyboard").split())
    assert " ".join(legend.split()) in shown
    assert "keys:" not in picture("config players=2\n", source="GPIO")


def test_an_old_photo_finish_does_not_come_back_after_a_super_round():
    text = picture(
        "config players=3\n0 press 2\n1 valid\n2 super\n3 press 1\n4 super\n15 tick\n", 20
    )
    assert "FIND A SET" in text and "photo finish" not in text


LOCKED_EIGHT = "".join(f"{2 * n} press {n}\n{2 * n + 1} invalid\n" for n in range(1, 9))


def test_lines_break_between_words_at_the_terminals_width():
    script = "config players=8\n" + LOCKED_EIGHT
    settings, state, effects = play(script + "30 press 3\n")
    long = "a notice long enough to need two lines of a narrow terminal, and then some more"
    view = View(
        settings,
        state,
        31 * 10**9,
        messages=tuple(e.text for e in effects),
        notices=(Notice(long),),
        source="keyboard",
    )
    for width in (40, 80):
        text = render(view, colour_on=False, width=width)
        assert max(map(len, text.splitlines())) <= width, text
        # Every word is whole on some line: none was cut in two.
        words = set(render(view, colour_on=False, width=1000).split())
        assert set(text.split()) == words
    wide = render(view, colour_on=False, width=80)
    assert "LOCKED" in wide and long.split()[-1] in wide


def test_the_lines_fit_with_colour_too():
    settings, state, _ = play("config players=8\n" + LOCKED_EIGHT)
    text = render(View(settings, state, 0, source="keyboard"), width=50)
    assert max(len(ANSI.sub("", line)) for line in text.splitlines()) <= 50


def test_game_over_says_how_to_start_again():
    text = picture("config players=2\n0 press 1\n1 valid\n2 end\n", 3)
    assert "GAME OVER: SUPER STARTS A NEW GAME" in text


def test_an_official_match_deal_by_deal():
    script = "config players=3 rules=official deals=2 dealer_plays=false\n1 press 2\n2 valid\n"
    text = picture(script)
    assert "deal 1 of 2 · dealer P1 (sits out)" in text and "[DEALS, sits out]" in text
    over = picture(script + "3 super\n4 press 1\n5 invalid\n6 super\n")
    assert "1. P2 ▲  1   (deals: 1 · 0)" in over and "3. P1 ●  -1   (deals: 0 · -1)" in over


def test_solitaire_counts_the_cards_and_says_won_or_lost():
    text = picture("config players=1 rules=solitaire\n0 super\n")
    assert "deck 66 · table 15 · owed 1" in text and "SUPER IF THERE IS NONE" in text
    over = picture("config players=1 rules=solitaire\n0 super\n1 end\n")
    # Said once, with what to do next, as every other game's end says it.
    assert "GAME OVER: LOST · SUPER STARTS A NEW GAME" in over and "***" not in over


def test_a_tie_under_the_official_rules_says_what_super_means():
    tie = "config players=3 rules=official tie_ms=5\n0 press 2\n0.004 press 3\n"
    assert "SUPER: their SETs share cards" in picture(tie, 1)
    assert "share cards" not in picture(tie + "1 valid\n", 2)  # too late: a verdict came
    assert "share cards" not in picture(tie.replace("official", "super"), 1)


def test_one_player_has_no_photo_finish():
    assert "photo finish" not in picture("config players=1 rules=solo\n1 press 1\n", 1)


def test_a_judged_call_is_shown_as_the_last_one_until_the_next_step():
    text = picture("config players=3\n0 press 2\n0.004 press 3\n1 valid\n", 1)
    assert "FIND A SET" in text and "the last call's photo finish: P2 by 4.0 ms" in text


def test_solos_end_shows_how_the_score_was_worked_out():
    sets = "".join(f"{2 * n} press 1\n{2 * n + 1} valid\n" for n in range(3))
    # 3 SETs: 9 cards won, 12 left on the table; each SET 96-98 points.
    settings, state, _ = play(f"config players=1 rules=solo\n{sets}7 end\n")
    text = render(View(settings, state, 8 * 10**9), colour_on=False)
    before = state.previous.players[0].points
    bonus = state.players[0].points - before
    assert f"score: {before} + 12 cards x {before / 9:.1f} a card = {before + bonus}" in text
    assert bonus == round(12 * before / 9)


def test_a_short_terminal_drops_the_log_first_and_keeps_the_game():
    """60x20 with eight seats scrolled the title, the scores and the caller off."""
    script = "config players=8\n2 press 1\n3 invalid\n30 press 3\n30.004 press 5\n"
    settings, state, effects = play(script)
    view = View(
        settings,
        state,
        31 * 10**9,
        messages=(*(e.text for e in effects), "one", "two", "three", "four"),
        notices=(Notice("P5's button is held down: ignored until released"),),
        source="keyboard",
    )
    tall = render(view, colour_on=False, width=60)
    assert len(tall.splitlines()) == 20 and "> one" in tall and "keys:" in tall
    # Two lines short: the two oldest of the log go, and nothing else.
    roomier = render(view, colour_on=False, width=60, height=18)
    assert "> one" not in roomier and "> two" not in roomier
    assert "> three" in roomier and "keys:" in roomier
    short = render(view, colour_on=False, width=60, height=12)
    lines = short.splitlines()
    assert len(lines) <= 12, short
    assert lines[0] == "SET referee · super rules · keyboard"
    for kept in ("P1 ●", "P8 ♣", "[CALLING]", "P3: SHOW YOUR SET", "P5 ★  +4.0 ms", "! P5's"):
        assert kept in short, (kept, short)
    assert "> " not in short and "keys:" not in short  # the log, then the keys


def test_the_terminal_names_the_players_where_the_screen_does():
    text = render(gallery.views()["call"], colour_on=False)
    assert "Ann ●   2" in text and "Alexandrina ◆   0" in text  # full: a terminal has room
    assert "photo finish: Bob by 4.2 ms over Alexandrina" in text
    assert "   Bob ▲  first" in text and "   Ann ●  +37.0 ms" in text
    assert "> Ann +37.0 ms" in text  # the engine's "P1 +37.0 ms", named
    assert "BOB: SHOW YOUR SET" in text


def test_the_lobby_says_where_the_page_is_and_the_pin():
    line = "the page on the phones: http://192.168.1.23:8080/ · PIN 481093"
    assert line in render(gallery.views()["lobby"], colour_on=False)
    offline = render(gallery.views()["lobby-no-network"], colour_on=False)
    assert "the page on the phones: no network · PIN 481093" in offline
    assert "PIN" not in render(gallery.views()["scoreboard"], colour_on=False)


def test_a_lock_is_said_while_it_matters_and_not_once_the_game_is_over():
    locked = "config players=2\n1 press 1\n2 invalid\n"
    assert "P1 ●   0 [LOCKED]" in picture(locked, 3)
    over = picture(locked + "3 end\n", 4)
    assert "GAME OVER" in over and "locked" not in over.lower()
