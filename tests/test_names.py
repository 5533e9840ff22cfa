"""What a player's name may be: the one check the page, the daemon and the store share."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.names import ELLIPSIS, NAME_MAX, check_name, folded, shortened

REFUSED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


@given(st.text(max_size=60))
def test_a_name_is_kept_as_checked_or_refused_in_one_line(raw):
    try:
        name = check_name(raw)
    except ValueError as err:
        assert "\n" not in str(err) and str(err)
        return
    assert 1 <= len(name) <= NAME_MAX
    assert name == name.strip() and "  " not in name
    assert not any(unicodedata.category(c) in REFUSED for c in name)
    assert check_name(name) == name  # what the store keeps reads back as itself


@given(st.text(st.characters(categories=["L", "N", "P", "S", "Zs"]), min_size=1, max_size=20))
def test_spaces_around_a_name_are_not_part_of_it(raw):
    try:
        name = check_name(raw)
    except ValueError:
        return  # all spaces
    assert check_name(f"  {raw}\t\n ") == name


@given(st.sampled_from(["\u202e", "\u2066", "\u200b", "\u200d", "\x07", "\x1b", "\u2028"]))
def test_control_and_direction_characters_inside_are_refused(char):
    with pytest.raises(ValueError, match=f"U\\+{ord(char):04X}"):
        check_name(f"An{char}n")


# What draws nothing however it is categorised: the Hangul fillers (letters), the blank
# Braille pattern and the null notehead (symbols); and what is no base at all: marks
# (combining ones, variation selectors, the grapheme joiner, the Khitan filler), format
# characters (zero-width ones, tags, the Mongolian vowel separator), spaces of every width.
BLANK_GRAPHICS = "\u115f\u1160\u3164\uffa0\u2800\U0001d159"
INVISIBLE = st.one_of(
    st.sampled_from(BLANK_GRAPHICS),
    st.sampled_from("\u034f\ufe0f\ufe00\U000e0100\u17b4\u17b5\U00016fe4\u180b"),
    st.sampled_from("\u200b\u200c\u200d\u2060\u2062\ufeff\u180e\u00ad\U000e0041\U000e007f"),
    st.sampled_from("\u3000\u2028\u2029\u00a0\u2007\u202f\u205f\u1680 \t"),
    st.characters(categories=["M", "Zs"]),
)


def visible_base(char: str) -> bool:
    """A letter, digit, punctuation or symbol that draws something."""
    return unicodedata.category(char)[0] in "LNPS" and char not in BLANK_GRAPHICS


@given(st.lists(st.one_of(INVISIBLE, st.characters()), max_size=12).map("".join))
def test_every_name_has_something_to_see(raw):
    """Issue 29: U+3164, U+2800 or combining marks alone passed the check, and gave a
    player no name one could read on the screen."""
    try:
        name = check_name(raw)
    except ValueError as err:
        assert "\n" not in str(err) and str(err)
        return
    assert any(visible_base(c) for c in name), ascii(name)
    assert not any(c in BLANK_GRAPHICS for c in name), ascii(name)


@given(st.lists(INVISIBLE, min_size=1, max_size=12).map("".join))
def test_a_name_of_invisible_characters_alone_is_refused(raw):
    with pytest.raises(ValueError):
        check_name(raw)


@pytest.mark.parametrize(
    "raw",
    ["\u3164", "\u2800\u2800", "\u0301\u0308", "\ufe0f", "\u115f\u1160", "Ann\u3164"],
)
def test_blank_letters_and_lone_marks_are_no_name(raw):
    with pytest.raises(ValueError, match=r"invisible|something to see"):
        check_name(raw)


@pytest.mark.parametrize(
    "raw",
    # full-width, circled, Cyrillic, Greek, Arabic-Indic: what reads as a label is one
    [
        "P6",
        "p6",
        "P1",
        "p8",
        "\uff30\uff16",
        "P\uff16",
        "\u24df\u2465",
        "\u04206",
        "\u03c13",
        "P\u0666",
        " P6 ",
    ],
)
def test_a_seats_label_is_no_name(raw):
    """Issue 29: "P6" at seat 2 while seat 6 has no name made two people one in the
    stats, and the screen's "P6 calls SET" ambiguous. Looks count, not code points:
    full-width or other digits, a Cyrillic or Greek P."""
    with pytest.raises(ValueError, match=r"a name cannot be a seat's label \(P[1-8]\)"):
        check_name(raw)


@pytest.mark.parametrize(
    "raw", ["P9", "P0", "P66", "P 6", "Pe", "AP6", "P6a", "\uff30", "\u2764\ufe0f", "Zoë", "李小龍"]
)
def test_what_only_resembles_a_label_is_a_name(raw):
    assert check_name(raw) == unicodedata.normalize("NFC", raw).strip()


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("", "a name cannot be empty"),
        ("   ", "a name cannot be empty"),
        ("x" * 25, f"a name is at most {NAME_MAX} characters (this one has 25)"),
        ("Ann\x1b[31m", "a name cannot hold control characters (U+001B)"),
        ("\u202eyrneH", "a name cannot hold invisible characters (U+202E)"),
    ],
)
def test_what_is_refused_says_why(raw, said):
    with pytest.raises(ValueError) as refused:
        check_name(raw)
    assert str(refused.value) == said


def test_a_name_is_kept_composed_with_single_spaces():
    assert check_name("  Zoe\u0308   van  Dijk ") == "Zoë van Dijk"
    assert folded("ANN") == folded("ann") and folded("Straße") == folded("STRASSE")


@given(st.text(min_size=1, max_size=NAME_MAX), st.integers(2, NAME_MAX))
def test_a_shortened_name_fits_and_says_it_was_cut(name, length):
    short = shortened(name, length)
    assert len(short) <= length
    assert short == name or short.endswith(ELLIPSIS)
