"""Which three cards make a SET: pure, no image in sight."""

from collections.abc import Sequence
from itertools import combinations

from .card import Face


def is_set(a: Face, b: Face, c: Face) -> bool:
    """Each attribute all the same or all different: for values 0, 1, 2 that is a sum
    divisible by 3."""
    return all(sum(v) % 3 == 0 for v in zip(a.values(), b.values(), c.values(), strict=True))


def why_not(a: Face, b: Face, c: Face) -> str | None:
    """None for a SET; else the first attribute that is two of one and one of another."""
    for name, x, y, z in (
        ("number", a.number, b.number, c.number),
        ("color", a.color, b.color, c.color),
        ("shading", a.shading, b.shading, c.shading),
        ("shape", a.shape, b.shape, c.shape),
    ):
        if len({x, y, z}) == 2:
            two = x if x in (y, z) else y
            one = next(v for v in (x, y, z) if v != two)
            return f"{name}: two {two}, one {one}"
    return None


def find_sets(faces: Sequence[Face | None]) -> list[tuple[int, int, int]]:
    """Every SET among the faces, by index, each in increasing order, sorted; a None (a
    card not surely read) is in none."""
    known = [i for i, f in enumerate(faces) if f is not None]
    found = []
    for i, j, k in combinations(known, 3):
        a, b, c = faces[i], faces[j], faces[k]
        assert a is not None and b is not None and c is not None
        if is_set(a, b, c):
            found.append((i, j, k))
    return found
