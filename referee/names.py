"""The players' names: what a seat's name may be, checked the same wherever one comes from.

A name comes from a phone (the page), so it is hostile until checked: the daemon, the
store's read-back and the page's server all use `check_name`. It imports nothing of the
box, so the page's server can use it without the daemon's parts.
"""

import unicodedata

NAME_MAX = 24  # characters: a name, not a message; the screens shorten it further
# Control characters, and the invisible ones that change how the text around them is
# drawn (direction overrides, zero-width joiners), the private and unassigned code
# points, and line breaks: a name is one line that reads as it is stored.
_REFUSED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
ELLIPSIS = "…"


def check_name(raw: str) -> str:
    """The name as the box keeps it (NFC, no space at either end, single spaces inside),
    or ValueError saying in one line why it cannot be one."""
    name = unicodedata.normalize("NFC", raw).strip()
    for char in name:
        if unicodedata.category(char) in _REFUSED:
            kind = "control" if unicodedata.category(char) == "Cc" else "invisible"
            raise ValueError(f"a name cannot hold {kind} characters (U+{ord(char):04X})")
    name = " ".join(name.split())
    if not name:
        raise ValueError("a name cannot be empty")
    if len(name) > NAME_MAX:
        raise ValueError(f"a name is at most {NAME_MAX} characters (this one has {len(name)})")
    return name


def folded(name: str) -> str:
    """What tells two names apart: "ann" and "Ann" are one player."""
    return name.casefold()


def shortened(name: str, length: int) -> str:
    """The name in at most `length` characters: cut, with an ellipsis when it was."""
    if len(name) <= length:
        return name
    return name[: max(1, length - 1)].rstrip() + ELLIPSIS
