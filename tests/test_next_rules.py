"""The next game's rules: the settings file's, and the keys a phone set over them, checked
as the file's own [rules] would be (config/next_rules.py)."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.config import ConfigError, NextRules, load_config, with_phone
from referee.rules import NS_PER_S, RULE_KEYS, RuleSet, Settings


def test_a_phones_keys_override_the_files_and_only_those_that_differ_are_kept():
    file = Settings(players=3)
    rules = NextRules.of(file).changed({"pointout_s": 5, "players": 3})
    assert rules.settings == Settings(players=3, pointout_ns=5 * NS_PER_S)
    assert rules.phone == {"pointout_s": 5.0}  # players is the file's own: not the phone's
    assert rules.source("pointout_s") == "phone" and rules.source("players") == "file"
    assert rules.changed({"pointout_s": 10}).phone == {}  # set back: the file's again


def test_a_rule_set_of_one_seat_takes_its_own_default_as_in_a_file():
    rules = NextRules.of(Settings()).changed({"rules": "solo"})
    assert (rules.settings.rules, rules.settings.players) == (RuleSet.SOLO, 1)
    back = rules.changed({"rules": "super"})
    assert back.settings == Settings() and back.phone == {}


def test_a_clash_is_blamed_on_the_key_set_now():
    rules = NextRules.of(Settings(players=3))
    with pytest.raises(ConfigError) as refused:
        rules.changed({"rules": "solo"})  # the file's three seats do not go with it
    assert str(refused.value) == '[rules] rules: rules=solo needs players=1; got "solo"'


def test_the_phones_keys_that_no_longer_go_with_the_file_are_set_aside_and_said():
    rules, trouble = with_phone(Settings(players=3), {"rules": "solo"})
    assert rules.settings == Settings(players=3) and rules.phone == {}
    said = '[rules] rules: rules=solo needs players=1; got "solo"'
    assert trouble == f"the rules a phone set are not used: {said}"
    assert with_phone(Settings(), {"rules": "solo"})[1] is None


# Values as TOML and JSON both have them: the phone's check must be the file's.
SCALARS = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.sampled_from([0, 1, 2, 5, 8, 9, 0.5, 10.0, 1e-4, 86_400, 86_400_001])
    | st.sampled_from(["super", "official", "solo", "solitaire", "house", "4", "true"])
)
KEYS = st.sampled_from([*RULE_KEYS, "player", "listen", "debounce_ms"])


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return json.dumps(value) if isinstance(value, str) else repr(value)


@settings(max_examples=300)
@given(values=st.dictionaries(KEYS, SCALARS, max_size=4))
def test_a_phones_keys_are_checked_and_said_as_the_files_rules_table(tmp_path_factory, values):
    """Whatever a phone sends: the same settings as a file with those keys in its [rules],
    or the same one-line refusal, but for the file's name and line in front."""
    path = tmp_path_factory.mktemp("file") / "referee.toml"
    path.write_text("[rules]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in values.items()))
    try:
        from_file: Settings | str = load_config(path).game
    except ConfigError as err:
        from_file = str(err).split(": ", 1)[1]  # FILE:LINE: dropped
    try:
        from_phone: Settings | str = NextRules.of(Settings()).changed(values).settings
    except ConfigError as err:
        from_phone = str(err)
    assert from_phone == from_file
