"""What a player's name may be: the one check the page, the daemon and the store share."""

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.names import ELLIPSIS, NAME_MAX, check_name, folded, shortened

REFUSED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


# Generating data is what a loaded machine makes slow, not the check: no health check.
SLOW_OK = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SLOW_OK
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


@SLOW_OK
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


@SLOW_OK
@given(st.text(min_size=1, max_size=NAME_MAX), st.integers(2, NAME_MAX))
def test_a_shortened_name_fits_and_says_it_was_cut(name, length):
    short = shortened(name, length)
    assert len(short) <= length
    assert short == name or short.endswith(ELLIPSIS)
