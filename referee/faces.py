"""A SET card's face as the camera's reading carries it: each attribute 0, 1 or 2, in
number, colour, shading, shape order. What the values are called, which three faces make
a SET, and why three do not, in words: pure, for the camera's eyes (vision/) and for the
daemon, which judges a claim without loading OpenCV."""

from collections.abc import Sequence

NUMBERS = (1, 2, 3)
COLORS = ("red", "green", "purple")
SHADINGS = ("solid", "striped", "open")
SHAPES = ("diamond", "oval", "squiggle")
# The attributes in the order the classifier's heads give them, each with its values.
ATTRIBUTES: tuple[tuple[str, tuple[int | str, ...]], ...] = (
    ("number", NUMBERS),
    ("color", COLORS),
    ("shading", SHADINGS),
    ("shape", SHAPES),
)

Values = Sequence[int]  # a face: four values, 0 to 2


def is_set(a: Values, b: Values, c: Values) -> bool:
    """Each attribute all the same or all different: for values 0, 1, 2 that is a sum
    divisible by 3."""
    return all(sum(v) % 3 == 0 for v in zip(a, b, c, strict=True))


def _named(attribute: int, value: int, count: int) -> str:
    """A value as the reason says it, for `count` cards: "1s", "red", "ovals"."""
    name = str(ATTRIBUTES[attribute][1][value])
    plural = count > 1 and attribute in (0, 3)  # "two 1s", "two ovals"; "two red"
    return f"{name}s" if plural else name


def why_not(a: Values, b: Values, c: Values) -> str | None:
    """None for a SET; else each attribute that is two of one value and one of another,
    in the attributes' order: "two red, one green; two ovals, one diamond"."""
    reasons = []
    for attribute, (x, y, z) in enumerate(zip(a, b, c, strict=True)):
        if len({x, y, z}) == 2:
            two = x if x in (y, z) else y
            one = next(v for v in (x, y, z) if v != two)
            reasons.append(f"two {_named(attribute, two, 2)}, one {_named(attribute, one, 1)}")
    return "; ".join(reasons) or None


def words(face: Values) -> str:
    """A face in words: "3 red striped ovals"."""
    n, c, s, p = face
    return f"{NUMBERS[n]} {COLORS[c]} {SHADINGS[s]} {_named(3, p, NUMBERS[n])}"
