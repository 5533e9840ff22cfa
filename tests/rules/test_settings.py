"""The rule settings: their keys, their checks, and docs/rules.md saying the same."""

import re

import pytest

from referee.rules import RULE_KEYS, RuleSet, Settings, settings_from, settings_values
from tests.conftest import ROOT


def test_single_player_rule_sets_default_to_one_player():
    assert settings_from({"rules": "solo"}).players == 1
    assert settings_from({"rules": "solitaire"}).players == 1
    assert settings_from({"rules": "official"}).players == 4


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"deals": -1}, "deals must be 0 (one per player) to 99, not -1"),
        ({"deals": 100}, "deals must be 0 (one per player) to 99, not 100"),
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
