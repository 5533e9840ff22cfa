"""A script's numbers: read exactly, as an independent reading (Python's Decimal) reads them,
and in time linear in their length however many digits or however large an exponent."""

import re
import time
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal

import pytest
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from referee.rules.numbers import BEYOND, between, scaled, shown, whole

# What a script may write: digits, a point, an exponent (leading zeros allowed).
DECIMALS = st.from_regex(
    r"\A(?:[0-9]{1,25}(?:\.[0-9]{0,25})?|\.[0-9]{1,25})(?:[eE][+-]?[0-9]{1,3})?\Z"
)
# A context wide enough to hold every such number exactly.
EXACT = Context(prec=200, Emax=10_000, Emin=-10_000)


def reference(text: str, places: int) -> int:
    """The number scaled and rounded half up, by Decimal: exact, and slow on huge numbers."""
    number = EXACT.scaleb(Decimal(text), places)
    if number >= 10**BEYOND:
        return 10**BEYOND
    return int(number.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=EXACT))


@hyp_settings(max_examples=100)
@given(DECIMALS, st.sampled_from([0, 6, 9]))
def test_a_decimal_reads_as_decimal_reads_it(text, places):
    assert scaled(text, places) == reference(text, places)


@hyp_settings(max_examples=100)
@given(DECIMALS, st.sampled_from([0, 6, 9]))
def test_a_decimal_lies_between_the_whole_numbers_decimal_says(text, places):
    """Not rounded: what a range is checked on (rules/settings.py)."""
    number = EXACT.scaleb(Decimal(text), places)
    if number >= 10**BEYOND:
        assert between(text, places) == (10**BEYOND, 10**BEYOND)
        return
    cut = [
        int(number.quantize(Decimal(1), rounding=r, context=EXACT))
        for r in (ROUND_FLOOR, ROUND_CEILING)
    ]
    assert between(text, places) == tuple(cut)


NUMBER = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


@hyp_settings(max_examples=100)
@given(st.text(max_size=12))
def test_anything_else_is_refused_in_our_words(text):
    if NUMBER.fullmatch(text):
        assert scaled(text, 9) >= 0
    else:
        with pytest.raises(ValueError, match=r"^not a number: "):
            scaled(text, 9)


@pytest.mark.parametrize(
    "text",
    ["+2", "-0", "1_000", "inf", "nan", "Infinity", "²", "١٢", " 1", "1 ", "0x10", "1e", "e5", "."],
)
def test_what_python_reads_and_a_script_does_not_write(text):
    """Python's float(), int() or Decimal() take each of these; a script's numbers do not."""
    with pytest.raises(ValueError):
        scaled(text)
    with pytest.raises(ValueError):
        whole(text)


def test_a_whole_number_has_no_point_or_exponent():
    assert whole("007") == 7
    for text in ("2.0", "2.", "2e0"):
        with pytest.raises(ValueError):
            whole(text)


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("0.0000000004", 0),
        ("0.0000000005", 1),
        ("0.00000000149999", 1),
        ("0.0000000015", 2),
        ("0.30000000000000004", 300_000_000),
        ("1e-05", 10_000),
        ("5e-10", 1),
        ("1.0000000005", 1_000_000_001),
    ],
)
def test_finer_than_a_nanosecond_rounds_half_up(text, ns):
    assert scaled(text, 9) == ns


def test_beyond_every_range_reads_as_one_number():
    assert scaled("1" + "0" * BEYOND) == 10**BEYOND
    assert scaled("1e310", 9) == scaled("1e999999999999999999999999", 9) == 10**BEYOND
    assert scaled("9" * 5000) == 10**BEYOND
    assert scaled("1e-999999999999999999999999", 9) == 0


def test_huge_numbers_are_read_in_time_linear_in_their_length():
    """Python's readers take seconds (int() of a million digits, Decimal at 1e999990) or
    refuse with their own words; these take a few milliseconds a megabyte."""
    n = 1_000_000
    texts = [
        "9" * n,
        "0" * n + "1",
        "0." + "0" * n + "5",
        "1e" + "9" * n,
        "1e-" + "9" * n,
        "5" * n + "e-" + str(n),
        "1e999990",
    ]
    start = time.perf_counter()
    for text in texts:
        scaled(text, 9)
    whole("9" * n)
    assert time.perf_counter() - start < 2  # about 0.05 s; 27 s for 1e999990 alone before


def test_a_word_in_a_message_is_one_short_line():
    assert shown("press") == "'press'"
    long = shown("9" * 5000)
    assert long == "'999999999999999999999999'... (5,000 characters)"
    assert "\n" not in shown("a\nb\u2028c\x85")
