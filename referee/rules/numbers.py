"""Numbers as a script writes them, read exactly, in time linear in their length.

A whole number is ASCII digits (`2`, `07`); a decimal may add a point and an exponent
(`12`, `0.5`, `.5`, `1.25e1`, `1e-05`: what people and programs write). There is no
sign, no `_`, no `inf` or `nan` and no other script's digits, all of which Python's own
readers take. Those readers also take time that grows faster than the text (int() of
thousands of digits) or fail far from the number (Decimal at a huge exponent); these
never look at more digits than a number within every range can have.
"""

import re

_DECIMAL = re.compile(r"([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?)([0-9]+))?")
_WHOLE = re.compile(r"[0-9]+")

# A number with more digits before its point than any range needs reads as 10**BEYOND:
# beyond every range, so that a check of the range refuses it.
BEYOND = 30
_BEYOND_VALUE: int = 10**BEYOND
# An exponent longer than this many digits is beyond any text's length: huge or tiny.
_EXPONENT_DIGITS = 20


def scaled(text: str, places: int = 0) -> int:
    """The decimal number `text` times 10**places, rounded half up to a whole number;
    10**BEYOND for a number beyond it. ValueError if `text` is not a decimal number."""
    below, half, _ = _parts(text, places)
    return below + half


def between(text: str, places: int = 0) -> tuple[int, int]:
    """The whole numbers the decimal number `text` times 10**places lies between, not
    rounded: the number twice when it is whole (10**BEYOND twice beyond it), else the one
    below it and the one above. ValueError as scaled's."""
    below, _, rest = _parts(text, places)
    return below, below + rest


def _parts(text: str, places: int) -> tuple[int, bool, bool]:
    """The number times 10**places cut to a whole number; whether what was cut off is at
    least a half; whether anything was."""
    number = _DECIMAL.fullmatch(text)
    if number is None or not (number[1] or number[2]):
        raise ValueError(f"not a number: {shown(text)}")
    integral, fraction = number[1], number[2] or ""
    digits = (integral + fraction).lstrip("0")
    if not digits:
        return 0, False, False
    exponent = (number[4] or "").lstrip("0")
    if len(exponent) > _EXPONENT_DIGITS:
        exponent = "9" * _EXPONENT_DIGITS
    power = (-1 if number[3] == "-" else 1) * int(exponent or "0")
    # The number is digits * 10**shift; `point` of its digits stand before the point.
    shift = power - len(fraction) + places
    point = len(digits) + shift
    if point > BEYOND:
        return _BEYOND_VALUE, False, False
    if point < 0:
        return 0, False, True  # below a tenth, and not 0: its digits start with no 0
    if shift >= 0:
        return int(digits + "0" * shift), False, False
    # Half up: the first digit cut off says whether to round up, whatever follows it.
    cut = digits[point:]
    return int(digits[:point] or "0"), cut[0] >= "5", cut.strip("0") != ""


def whole(text: str) -> int:
    """The whole number `text` (10**BEYOND beyond it); ValueError if it is not one."""
    if _WHOLE.fullmatch(text) is None:
        raise ValueError(f"not a whole number: {shown(text)}")
    return scaled(text)


def shown(text: str, most: int = 24) -> str:
    """A word of a script quoted for a message: on one line, however long or odd it is."""
    if len(text) <= most:
        return repr(text)
    return f"{text[:most]!r}... ({len(text):,} characters)"
