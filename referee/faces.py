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


# A face in a word, as the ledger writes the cards the camera saw (docs/rules.md, "The
# camera"): the number, then each other attribute's initial, the shading's a capital so
# that the word reads in four ("1rOo": 1 red open oval). Striped is T, solid having S.
LETTERS = ("123", "rgp", "STO", "dos")


def code(face: Values) -> str:
    """A face as a word: "3pTs" for 3 purple striped squiggles."""
    return "".join(letters[v] for letters, v in zip(LETTERS, face, strict=True))


def read_code(word: str) -> tuple[int, int, int, int]:
    """The face a word says; ValueError when it says none."""
    values = [letters.find(c) for letters, c in zip(LETTERS, word, strict=False)]
    if len(word) != len(LETTERS) or -1 in values:
        raise ValueError("a card is its number, then r/g/p, S/T/O, d/o/s: '1rSo'")
    return values[0], values[1], values[2], values[3]
