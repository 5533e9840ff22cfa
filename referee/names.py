"""The players' names: what a seat's name may be, checked the same wherever one comes from.

A name comes from a phone (the page), so it is hostile until checked: the daemon and the
page's server use `check_name`, the store's read-back `kept_name`. It imports nothing of
the box but its numbers, so the page's server can use it without the daemon's parts.
"""

import unicodedata

from referee.units import MAX_SEATS

NAME_MAX = 24  # characters: a name, not a message; the screens shorten it further
# Control characters, and the invisible ones that change how the text around them is
# drawn (direction overrides, zero-width joiners), the private and unassigned code
# points, and line breaks: a name is one line that reads as it is stored.
_REFUSED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
# Letters and symbols that draw nothing: the Hangul fillers, the blank Braille pattern,
# the null notehead. A name of them, or ending in them, would pass for another.
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")
# What a reader takes for the P of a seat's label, once NFKC and case-folded: the Latin
# letter, the Cyrillic er, the Greek rho.
_P_ALIKE = frozenset("p\u0440\u03c1")
ELLIPSIS = "…"


def check_name(raw: str) -> str:
    """A name typed for a seat as the box keeps it (NFC, no space at either end, single
    spaces inside), or ValueError saying in one line why it cannot be one: it must also
    show something (a letter, digit, punctuation or symbol that draws), and not be a
    seat's label, which stands for a seat nobody named (docs/web.md, "Names")."""
    name = kept_name(raw)
    if blank := next((c for c in name if c in _BLANK), None):
        raise ValueError(f"a name cannot hold invisible characters (U+{ord(blank):04X})")
    if not any(unicodedata.category(c)[0] in "LNPS" for c in name):
        raise ValueError("a name needs something to see: a letter, a digit or a sign")
    if (seat := _seat_alike(name)) is not None:
        raise ValueError(
            f"a name cannot be a seat's label (P{seat}): it names a seat, not a player"
        )
    return name


def kept_name(raw: str) -> str:
    """The name as check_name keeps it, or ValueError for what a name never was: what a
    store may hold, names kept before a name had to show something included."""
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


def _seat_alike(name: str) -> int | None:
    """The seat whose label ("P6") the name reads as: in full-width or any script's
    digits, any case, a Cyrillic or Greek P."""
    looks = unicodedata.normalize("NFKC", name).casefold()
    if len(looks) != 2 or looks[0] not in _P_ALIKE:
        return None
    seat = unicodedata.decimal(looks[1], None)
    return seat if seat is not None and 1 <= seat <= MAX_SEATS else None


def folded(name: str) -> str:
    """What tells two names apart: "ann" and "Ann" are one player."""
    return name.casefold()


def shortened(name: str, length: int) -> str:
    """The name in at most `length` characters: cut, with an ellipsis when it was."""
    if len(name) <= length:
        return name
    return name[: max(1, length - 1)].rstrip() + ELLIPSIS
