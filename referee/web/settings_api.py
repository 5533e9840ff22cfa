"""The next game's rules as the page shows and sets them (docs/web.md, "Settings").

Read as the daemon reads them: the settings file's `[rules]` and the keys a phone set
over them, which the store keeps (config/next_rules.py); a change is checked here by the
same checks before it is asked of the daemon, which checks it again and keeps it.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from referee.config import NextRules, with_phone
from referee.rules import RULE_KEYS, RuleSet, Settings, settings_values
from referee.store.store import Store

# Each key in words, for a judge who has never read the settings file (docs/rules.md,
# "Settings", says the same).
WORDS = {
    "rules": "Rule set",
    "players": "Seats at the table",
    "pointout_s": "Seconds to show a SET",
    "tie_ms": "Too close to call within (ms)",
    "super_s": "Super round's countdown (s)",
    "must_use_flipped": "A super round's SET must use the flipped card",
    "deals": "Deals in an official match",
    "dealer_plays": "The dealer plays their own deal",
    "sudden_death": "Solitaire's sudden death",
}
# Each key as the page's form asks for it: in words, and the settings file's own words for
# what it may be.
KEYS = [
    {
        "key": key.name,
        "words": WORDS[key.name],
        "kind": key.kind.__name__,
        "allowed": key.allowed,
        **({"choices": [r.value for r in RuleSet]} if key.name == "rules" else {}),
    }
    for key in RULE_KEYS.values()
]


def read_rules(path: Path, file: Settings) -> dict[str, Any]:
    """What GET /api/settings answers: the latest game's rules, the next game's, where
    each key comes from, and the file's alone (to set a key back); StoreError."""
    with Store.open_readonly(path) as store:
        latest = store.games(limit=1)
        phone = store.next_rules()
    rules, trouble = with_phone(file, phone)
    game = latest[0] if latest else None
    return {
        "game": None
        if game is None
        else {"id": game.id, "settings": settings_values(game.settings)},
        "next": settings_values(rules.settings),
        "from": {key: rules.source(key) for key in RULE_KEYS},
        "file": settings_values(file),
        "keys": KEYS,
        "trouble": trouble,
    }


def check_change(path: Path, file: Settings, values: Mapping[str, object]) -> NextRules:
    """The next game's rules with these keys set: ConfigError as the settings file's
    `[rules]` with them would be refused; StoreError."""
    with Store.open_readonly(path) as store:
        phone = store.next_rules()
    rules, _ = with_phone(file, phone)
    return rules.changed(values)
