"""The rules' values: immutable to every reader, and cheap to make.

A long game's replay makes several of them for every input (bench/memory.py). A frozen
dataclass pays a call of object.__setattr__ for each field it sets; these classes are
plain slotted dataclasses at run time, and mypy holds them to frozen (an assignment to
a field is an error wherever mypy reads: `make typecheck`). Only `evolve` and the engine's
`stepped` (state.py) fill in a value, and only one just made, before anyone sees it.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar, cast, dataclass_transform

_T = TypeVar("_T")
KEEP: Any = object()  # an argument of an evolver not given: the field keeps its value


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def value(cls: type[_T]) -> type[_T]:
    """An immutable value class (see above); equal by fields, and hashable."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


def evolver(kind: type) -> Callable[..., Any]:
    """dataclasses.replace for one value class, written out field by field as dataclasses
    writes __init__: `evolver(State)(state, bank=3)`."""
    names = [f.name for f in fields(kind)]
    code = "\n".join(
        [
            f"def evolve(value, /, *, {', '.join(f'{n}=KEEP' for n in names)}):",
            "    new = _new(_kind)",
            *(f"    new.{n} = value.{n} if {n} is KEEP else {n}" for n in names),
            "    return new",
        ]
    )
    scope: dict[str, Any] = {"KEEP": KEEP, "_new": object.__new__, "_kind": kind}
    exec(code, scope)  # the names are the class's own fields', nothing from outside
    return cast(Callable[..., Any], scope["evolve"])
