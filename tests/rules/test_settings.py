"""The rule settings: their keys, their checks, and docs/rules.md saying the same."""

import re
from dataclasses import fields
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules import RULE_KEYS, RuleSet, Settings, settings_from, settings_values
from referee.rules.settings import SettingError, settings_typed
from tests.conftest import ROOT


def test_single_player_rule_sets_default_to_one_player():
    assert settings_from({"rules": "solo"}).players == 1
    assert settings_from({"rules": "solitaire"}).players == 1
    assert settings_from({"rules": "official"}).players == 4


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"deals": -1}, "deals: must be a whole number of deals in an official match, 0 (one"),
        ({"deals": 100}, "deals: must be a whole number of deals in an official match, 0 (one"),
        ({"rules": "solitaire", "players": 2}, "rules=solitaire needs players=1"),
        ({"rules": "official", "players": 1}, "rules=official needs players=2 to 8"),
    ],
)
def test_a_wrong_value_says_what_is_wrong(values, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        settings_from(values)


def test_the_keys_read_back_as_the_settings():
    match = Settings(rules=RuleSet.OFFICIAL, players=5, deals=0, dealer_plays=False)
    assert settings_from(settings_values(match)) == match
    assert set(settings_values(match)) == set(RULE_KEYS)


def test_docs_rules_md_names_every_key_and_rule_set():
    text = (ROOT / "docs" / "rules.md").read_text()
    for name in RULE_KEYS:
        assert f"| `{name}` |" in text, f"docs/rules.md does not say what {name} is"
    for rules in RuleSet:
        assert f'`rules = "{rules}"`' in text or rules is RuleSet.SUPER
        assert f"| {rules} " in text or f" {rules} |" in text


def test_every_field_of_the_settings_has_its_key():
    assert sorted(k.field for k in RULE_KEYS.values()) == sorted(f.name for f in fields(Settings))


# Each key's range as a script writes it: (lowest, highest, just below, just above).
RANGES = {
    "pointout_s": ("0", "86400", "0.000999999", "86400.000000001"),
    "tie_ms": ("0", "86400000", None, "86400000.000001"),
    "super_s": ("0.001", "86400", "0.000999999", "86400.000000001"),
    "deals": ("0", "99", None, "100"),
}
SEATS = {RuleSet.SUPER: (2, 8), RuleSet.OFFICIAL: (2, 8), RuleSet.SOLO: (1, 1)}
SEATS[RuleSet.SOLITAIRE] = (1, 1)


@pytest.mark.parametrize("rules", list(RuleSet))
def test_the_ranges_of_each_rule_set(rules):
    """Every key has one range under every rule set (one it does not use checks it all the
    same); players has the rule set's seats. The settings file's values go through the same."""
    fewest, most = SEATS[rules]
    for players in (fewest, most):
        assert settings_from({"rules": rules.value, "players": str(players)}).players == players
    for players in (fewest - 1, most + 1):
        with pytest.raises(SettingError) as caught:
            settings_from({"rules": rules.value, "players": str(players)})
        # A number of seats no rule set has is wrong in itself; else it clashes with the rules.
        what = "needs players" if 1 <= players <= 8 else "must be a whole number of seats"
        assert caught.value.key == "players" and what in caught.value.what
    for key, (low, high, below, above) in RANGES.items():
        for value in (low, high):
            settings_from({"rules": rules.value, key: value})
            settings_from({"rules": rules.value, key: RULE_KEYS[key].kind(value)})  # as TOML
        for value in (below, above, "-1"):
            if value is None:
                continue
            with pytest.raises(SettingError) as caught:
                settings_from({"rules": rules.value, key: value})
            assert (caught.value.key, caught.value.what) == (
                key,
                f"must be {RULE_KEYS[key].allowed}",
            )


def test_a_duration_is_read_to_the_nanosecond_half_up():
    assert settings_from({"tie_ms": "0.0000005"}).tie_ns == 1
    assert settings_from({"tie_ms": "0.0000004"}).tie_ns == 0
    assert settings_from({"pointout_s": 1.0000000005}).pointout_ns == 1_000_000_001
    assert settings_from({"pointout_s": "1.0000000005"}).pointout_ns == 1_000_000_001


# Each duration's range as docs/rules.md gives it: (key, whether 0 is allowed, low, high).
DURATIONS = [
    ("pointout_s", True, Decimal("0.001"), Decimal(86_400)),
    ("super_s", False, Decimal("0.001"), Decimal(86_400)),
    ("tie_ms", True, Decimal(0), Decimal(86_400_000)),
]
# Where a rounding would cross a bound: below a nanosecond, around a millisecond and a day.
NEAR_BOUNDS = st.one_of(
    st.floats(min_value=0, max_value=1e-8),
    st.floats(min_value=0.0009, max_value=0.0011),
    st.floats(min_value=86_399.99, max_value=86_400.01),
    st.floats(min_value=86_399_999.99, max_value=86_400_000.01),
    st.floats(min_value=0, allow_infinity=False),
)


@given(NEAR_BOUNDS, st.sampled_from(DURATIONS))
def test_a_duration_is_checked_as_written_not_as_rounded(value, duration):
    """1e-10 s is no 0 ("no limit") because it is less than a nanosecond, nor is
    0.00099999999999 s a millisecond: the value a file or a phone gives is in range or not
    before it is rounded to the nanosecond."""
    key, zero, low, high = duration
    written = Decimal(repr(value))  # what TOML and JSON write for it, exactly
    try:
        settings_from({key: value})
    except SettingError as err:
        assert err.key == key
        assert not ((zero and written == 0) or low <= written <= high), value
    else:
        assert (zero and written == 0) or low <= written <= high, value


@pytest.mark.parametrize(
    "values",
    [{"deals": True}, {"players": 2.0}, {"pointout_s": True}, {"rules": 3}, {"sudden_death": 1}],
)
def test_a_value_of_another_kind_is_wrong(values):
    """As TOML types it: a bool is never a number, a float never a count."""
    with pytest.raises(SettingError, match="must be"):
        settings_from(values)


@pytest.mark.parametrize(
    "values",
    [{"dealer_plays": "false"}, {"players": "3"}, {"pointout_s": "2.5"}],
)
def test_typed_values_take_no_text_a_script_writes(values):
    """A settings file's and a store's values are of their key's kind: as in TOML, text is
    no number and no bool there."""
    settings_from(values)  # a script's config line may write them so
    name = next(iter(values))
    with pytest.raises(SettingError, match=f"^{name}: must be "):
        settings_typed(values)
    assert settings_typed({"players": 3, "pointout_s": 2}) == Settings(
        players=3, pointout_ns=2 * 10**9
    )
