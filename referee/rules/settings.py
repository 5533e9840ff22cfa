"""The settings that change what the rules decide (docs/rules.md, "Settings").

The same keys serve a replay script's `config` line and the `[rules]` table of the
TOML settings file, so both say the same thing in the same words.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from .rulesets import MAX_SEATS, RULE_BOOKS, RuleBook, RuleSet

# The rule sets and their seats belong to rulesets.py; settings are read with them.
__all__ = [
    "DECK",
    "MAX_SEATS",
    "NS_PER_MS",
    "NS_PER_S",
    "RULE_KEYS",
    "Key",
    "RuleSet",
    "Settings",
    "settings_from",
    "settings_values",
]

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
DECK = 81
MAX_DEALS = 99


@dataclass(frozen=True)
class Settings:
    rules: RuleSet = RuleSet.SUPER
    players: int = 4  # seats (buzzers) at the table
    pointout_ns: int = 10 * NS_PER_S  # 0 turns the point-out timer off
    tie_ns: int = 0
    super_ns: int = 10 * NS_PER_S
    must_use_flipped: bool = False
    deals: int = 1  # official: deals in the match, 0 for one per player
    dealer_plays: bool = True  # official: False sits the dealer out of their deal
    sudden_death: bool = False  # solitaire: a no-SET claim with cards in the deck loses

    def __post_init__(self) -> None:
        if not 1 <= self.players <= MAX_SEATS:
            raise ValueError(f"players must be 1 to {MAX_SEATS}, not {self.players}")
        fewest, most = self.book.seats
        if not fewest <= self.players <= most:
            seats = str(fewest) if fewest == most else f"{fewest} to {most}"
            raise ValueError(f"rules={self.rules} needs players={seats}")
        if self.pointout_ns < 0:
            raise ValueError("pointout_s cannot be negative")
        if self.tie_ns < 0:
            raise ValueError("tie_ms cannot be negative")
        if self.super_ns <= 0:
            raise ValueError("super_s must be more than 0")
        if not 0 <= self.deals <= MAX_DEALS:
            raise ValueError(f"deals must be 0 (one per player) to {MAX_DEALS}, not {self.deals}")

    @cached_property  # asked a few times for every input of a long game's replay
    def book(self) -> RuleBook:
        """What these rules score and allow."""
        return RULE_BOOKS[self.rules]

    @property
    def min_players(self) -> int:
        return self.book.seats[0]


def _either(words: Iterable[str]) -> str:
    """ "a, b or c"."""
    *most, last = words
    return f"{', '.join(most)} or {last}" if most else last


@dataclass(frozen=True)
class Key:
    name: str
    kind: type  # bool, int, float or str, as TOML types it
    allowed: str
    default: bool | int | float | str


RULE_KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        Key("rules", str, _either(RuleSet), "super"),
        Key(
            "players",
            int,
            f"a whole number of seats, 2 to {MAX_SEATS}"
            f" (1 for {_either(r for r, b in RULE_BOOKS.items() if b.single_player)})",
            4,
        ),
        Key("pointout_s", float, "seconds to show a SET, 0 for no limit", 10.0),
        Key("tie_ms", float, "milliseconds, 0 or more", 0.0),
        Key("super_s", float, "seconds of the super round's countdown, more than 0", 10.0),
        Key("must_use_flipped", bool, "true or false", False),
        Key(
            "deals",
            int,
            f"a whole number of deals in an official match, 0 (one per player) to {MAX_DEALS}",
            1,
        ),
        Key(
            "dealer_plays",
            bool,
            "true or false (false: an official match's dealer sits out their deal)",
            True,
        ),
        Key(
            "sudden_death",
            bool,
            "true or false (true: solitaire is lost at a no-SET claim while the deck has cards)",
            False,
        ),
    )
}


def settings_from(values: Mapping[str, bool | int | float | str]) -> Settings:
    """Settings from rule keys already of their kind; ValueError names what is wrong."""
    for name in values:
        if name not in RULE_KEYS:
            raise ValueError(f"unknown key {name!r} (known: {', '.join(RULE_KEYS)})")
    v = {name: values.get(name, key.default) for name, key in RULE_KEYS.items()}
    try:
        rules = RuleSet(str(v["rules"]))
    except ValueError:
        raise ValueError(
            f"rules must be {RULE_KEYS['rules'].allowed}, not {v['rules']!r}"
        ) from None
    if "players" not in values and RULE_BOOKS[rules].single_player:
        v["players"] = 1
    return Settings(
        rules=rules,
        players=int(v["players"]),
        pointout_ns=_ns("pointout_s", v["pointout_s"], NS_PER_S),
        tie_ns=_ns("tie_ms", v["tie_ms"], NS_PER_MS),
        super_ns=_ns("super_s", v["super_s"], NS_PER_S),
        must_use_flipped=bool(v["must_use_flipped"]),
        deals=int(v["deals"]),
        dealer_plays=bool(v["dealer_plays"]),
        sudden_death=bool(v["sudden_death"]),
    )


# A day: longer than any game's timer, short enough for any clock.
_LONGEST_NS = 86_400 * NS_PER_S


def _ns(name: str, value: bool | int | float | str, unit: int) -> int:
    ns = float(value) * unit
    if not -_LONGEST_NS <= ns <= _LONGEST_NS:  # also refuses inf and nan
        raise ValueError(f"{name} must be {RULE_KEYS[name].allowed}, not {value}")
    return round(ns)


def settings_values(settings: Settings) -> dict[str, bool | int | float | str]:
    """The rule keys of these settings: what `settings_from` turns back into them."""
    return {
        "rules": settings.rules.value,
        "players": settings.players,
        "pointout_s": settings.pointout_ns / NS_PER_S,
        "tie_ms": settings.tie_ns / NS_PER_MS,
        "super_s": settings.super_ns / NS_PER_S,
        "must_use_flipped": settings.must_use_flipped,
        "deals": settings.deals,
        "dealer_plays": settings.dealer_plays,
        "sudden_death": settings.sudden_death,
    }
