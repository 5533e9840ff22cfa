"""The settings that change what the rules decide (docs/rules.md, "Settings").

The same keys serve a replay script's `config` line and the `[rules]` table of the
TOML settings file, so both say the same thing in the same words.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeGuard, cast

from referee.units import MAX_SEATS, NS_PER_MS, NS_PER_S

from .numbers import between, scaled, whole
from .rulesets import RULE_BOOKS, RuleBook, RuleSet

# The rule sets and their seats belong to rulesets.py; settings are read with them.
__all__ = [
    "DECK",
    "MAX_SEATS",
    "RULE_KEYS",
    "Key",
    "RuleSet",
    "SettingError",
    "Settings",
    "settings_from",
    "settings_typed",
    "settings_values",
]

DECK = 81
MAX_DEALS = 99
# A timer's range: shorter than a millisecond it would be over before anyone saw it;
# a day is longer than any game's timer, and short enough for any clock.
SHORTEST_TIMER_S = 0.001
LONGEST_TIMER_S = 86_400

Value = bool | int | float | str  # a rule key's value, as TOML types it


class SettingError(ValueError):
    """A rule key that cannot have its value: `what` is wrong, in words to follow its name."""

    def __init__(self, key: str, what: str) -> None:
        super().__init__(f"{key}: {what}")
        self.key = key
        self.what = what


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
        for key in RULE_KEYS.values():
            if not key.fits(getattr(self, key.field)):
                raise SettingError(key.name, f"must be {key.allowed}")
        fewest, most = self.book.seats
        if not fewest <= self.players <= most:
            seats = str(fewest) if fewest == most else f"{fewest} to {most}"
            raise SettingError("players", f"rules={self.rules} needs players={seats}")

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


def _always(value: Any) -> bool:
    return True


def _within(low: int, high: int) -> Callable[[Any], bool]:
    return lambda value: low <= value <= high


_LONGEST_NS = LONGEST_TIMER_S * NS_PER_S
_timer = _within(round(SHORTEST_TIMER_S * NS_PER_S), _LONGEST_NS)
_TIMER_S = f"{SHORTEST_TIMER_S} to {LONGEST_TIMER_S} (a day)"


@dataclass(frozen=True)
class Key:
    name: str
    kind: type  # bool, int, float or str, as TOML types it
    allowed: str
    default: Value
    # A rule key's: the field of Settings it sets; a duration's unit, 10**unit_digits ns;
    # the field's range, whatever the other keys say.
    field: str = ""
    unit_digits: int = 0
    fits: Callable[[Any], bool] = _always

    def takes(self, value: object) -> TypeGuard[Value]:
        """Whether the value is of this key's kind as TOML (and JSON) type it: a whole
        number will do for a float, a bool is never a number, and no text stands for a
        number or a bool."""
        given = type(value)
        return given is self.kind or (self.kind is float and given is int)


RULE_KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        Key("rules", str, _either(RuleSet), "super", field="rules"),
        Key(
            "players",
            int,
            f"a whole number of seats, 2 to {MAX_SEATS}"
            f" (1 for {_either(r for r, b in RULE_BOOKS.items() if b.single_player)})",
            4,
            field="players",
            fits=_within(1, MAX_SEATS),
        ),
        Key(
            "pointout_s",
            float,
            f"seconds to show a SET: 0 for no limit, else {_TIMER_S}",
            10.0,
            field="pointout_ns",
            unit_digits=9,
            fits=lambda ns: ns == 0 or _timer(ns),
        ),
        Key(
            "tie_ms",
            float,
            f"milliseconds, 0 to {LONGEST_TIMER_S * 1000} (a day)",
            0.0,
            field="tie_ns",
            unit_digits=6,
            fits=_within(0, _LONGEST_NS),
        ),
        Key(
            "super_s",
            float,
            f"seconds of the super round's countdown, {_TIMER_S}",
            10.0,
            field="super_ns",
            unit_digits=9,
            fits=_timer,
        ),
        Key("must_use_flipped", bool, "true or false", False, field="must_use_flipped"),
        Key(
            "deals",
            int,
            f"a whole number of deals in an official match, 0 (one per player) to {MAX_DEALS}",
            1,
            field="deals",
            fits=_within(0, MAX_DEALS),
        ),
        Key(
            "dealer_plays",
            bool,
            "true or false (false: an official match's dealer sits out their deal)",
            True,
            field="dealer_plays",
        ),
        Key(
            "sudden_death",
            bool,
            "true or false (true: solitaire is lost at a no-SET claim while the deck has cards)",
            False,
            field="sudden_death",
        ),
    )
}


def _field(key: Key, value: Value) -> Any:
    """The Settings field of a key's value, or of the text a script writes for it;
    SettingError if no other key could make it do.

    A duration is read exactly from its decimal digits (as a script writes it, or as a
    TOML float prints), checked as read, then kept to the nanosecond, half up."""
    text = value if isinstance(value, str) else None
    try:
        if key.unit_digits:
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise ValueError
            written = text or repr(value)
            field: Any = scaled(written, key.unit_digits)
            # In range as written, not as rounded: 1e-10 s is not 0 (no limit), nor is
            # 0.0009999999999 s a millisecond. A value between two whole numbers of its
            # unit is in range where both are (the ranges are of whole numbers).
            if not all(map(key.fits, between(written, key.unit_digits))):
                raise ValueError
        elif key.kind is str:
            field = RuleSet(str(value))
        elif text is None:
            if type(value) is not key.kind:  # a bool is an int to Python, never to TOML
                raise ValueError
            field = value
        elif key.kind is bool:
            field = {"true": True, "false": False}[text]
        else:
            field = whole(text)
    except (ValueError, KeyError):
        raise SettingError(key.name, f"must be {key.allowed}") from None
    if not key.fits(field):
        raise SettingError(key.name, f"must be {key.allowed}")
    return field


def _settings(fields: Mapping[str, Any]) -> Settings:
    """Settings with these fields, the others at their defaults (one player where the rule
    set has only one seat)."""
    rules = fields.get("rules", Settings.rules)
    if "players" not in fields and RULE_BOOKS[rules].single_player:
        fields = {**fields, "players": 1}
    return Settings(**fields)


def settings_from(values: Mapping[str, Value]) -> Settings:
    """Settings from rule keys, each a value of its kind or the text a script writes for
    it (`players=3`, `pointout_s=2.5`). SettingError blames one key: the first, in the
    order given, that is wrong in itself, else the first the keys before it cannot go with."""
    given: dict[str, Any] = {}
    for name, value in values.items():
        key = RULE_KEYS.get(name)
        if key is None:
            raise SettingError(name, f"unknown key (known: {', '.join(RULE_KEYS)})")
        given[key.field] = _field(key, value)
    try:
        return _settings(given)
    except SettingError as clash:
        so_far: dict[str, Any] = {}
        for name in values:
            field = RULE_KEYS[name].field
            so_far[field] = given[field]
            try:
                _settings(so_far)
            except SettingError as err:
                raise SettingError(name, err.what) from None
        raise AssertionError("the keys clash, so the first of them to clash is above") from clash


def settings_typed(values: Mapping[str, object]) -> Settings:
    """Settings from rule keys each of its key's kind (Key.takes), as a settings file and a
    store's JSON give them: never the text a script writes for one (`"false"`, `"3"`).
    SettingError as settings_from's."""
    for name, value in values.items():
        key = RULE_KEYS.get(name)
        if key is not None and not key.takes(value):
            raise SettingError(name, f"must be {key.allowed}")
    try:
        # Each of its kind now, but for an unknown key's, which settings_from refuses.
        return settings_from(cast(Mapping[str, Value], values))
    except SettingError as err:
        if err.key in RULE_KEYS:
            raise
        # An unknown key may be any text (a JSON key, a newline in it): quoted, one line.
        raise SettingError(repr(err.key), err.what) from None


def settings_changes(was: Settings, now: Settings) -> str:
    """The rule keys now sets otherwise than was, with now's values: "tie_ms 5.0, deals 2"."""
    before, after = settings_values(was), settings_values(now)
    return ", ".join(f"{k} {after[k]}" for k in after if after[k] != before[k])


def settings_values(settings: Settings) -> dict[str, Value]:
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
