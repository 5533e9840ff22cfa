"""Every SET among the cards read: pure, no image in sight (the SET test on three faces
is referee/faces.py's)."""

from collections.abc import Sequence
from itertools import combinations

from .card import Face


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
