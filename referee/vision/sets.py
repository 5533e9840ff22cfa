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
    card not surely read) is in none. Any two cards have exactly one third that makes a
    SET with them: each pair looks it up."""
    where: dict[tuple[int, ...], list[int]] = {}
    for i, f in enumerate(faces):
        if f is not None:
            where.setdefault(f.values(), []).append(i)
    known = [(i, f.values()) for i, f in enumerate(faces) if f is not None]
    found = set()
    for (i, a), (j, b) in combinations(known, 2):
        third = tuple((-x - y) % 3 for x, y in zip(a, b, strict=True))
        for k in where.get(third, ()):
            if k not in (i, j):
                found.add(tuple(sorted((i, j, k))))
    return sorted(found)  # type: ignore[arg-type]
