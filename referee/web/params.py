"""A request's query and path parameters, checked: each one a route takes, given once,
a number in its range; else a 400 that says which and what it got."""

import re

from starlette.exceptions import HTTPException
from starlette.requests import Request

_DIGITS = re.compile(r"[0-9]{1,19}")


def query(request: Request, *allowed: str) -> dict[str, str]:
    """The query's parameters, each of them one this route takes, and once."""
    given: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if key not in allowed:
            takes = " and ".join(allowed) if allowed else "nothing"
            raise HTTPException(400, f"unknown parameter {shown(key)}: this route takes {takes}")
        if key in given:
            raise HTTPException(400, f"{key} given twice")
        given[key] = value
    return given


def whole(text: str, what: str, low: int, high: int) -> int:
    if _DIGITS.fullmatch(text) and low <= (value := int(text)) <= high:
        return value
    raise HTTPException(
        400, f"{what} must be a whole number from {low} to {high}; got {shown(text)}"
    )


def shown(text: str) -> str:
    """A value from the request, quoted and cut short, for a message."""
    return repr(text if len(text) <= 24 else text[:24] + "...")
