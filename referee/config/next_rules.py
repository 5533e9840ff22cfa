"""The rules the next game plays by: the settings file's, and the keys a phone set over them.

A judge's phone sets rule keys for the next games (docs/web.md, "Settings"). They are
kept in the store (`Store.next_rules`), never written into the settings file, and
override its `[rules]` until a phone sets them back to the file's values. They are
checked as if they were written in the file's `[rules]` table, by the same checks and in
the same words (`check_rules`), over the keys the file sets: a key the file does not
set, or sets to its default, is left to its default, as in a file without it.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from referee.errors import ConfigError
from referee.rules.settings import RULE_KEYS, Settings, Value, settings_from, settings_values

from .checks import check_rules

PHONE, FILE = "phone", "file"  # where a key's value comes from
# Characters of the lobby's notice: two lines of a 3.5" screen (tests/test_display.py).
SHOWN_CHARS = 66


@dataclass(frozen=True)
class NextRules:
    file: Settings  # what the settings file says, its defaults included
    phone: Mapping[str, Value]  # the keys a phone set, only those that differ from the file's
    settings: Settings  # both together: what the next game plays by

    @classmethod
    def of(cls, file: Settings, phone: Mapping[str, object] | None = None) -> "NextRules":
        """The file's settings and the keys a phone set; ConfigError when those are not
        rule keys a file could give, or do not go with the file's."""
        return cls(file, {}, file).changed(phone or {})

    def changed(self, values: Mapping[str, object]) -> "NextRules":
        """These keys set too, over those set before; ConfigError as a file with them in
        its `[rules]` would be refused: a key that cannot go with the others is blamed on
        the first of them, in that order, that the keys before it cannot take (so on those
        set now rather than the file's)."""
        table: dict[str, object] = {
            k: v for k, v in _set_away(self.file).items() if k not in self.phone
        }
        table |= self.phone
        for key in values:
            table.pop(key, None)  # re-added last, in the order given
        table |= values
        settings = check_rules(table)
        now, file = settings_values(settings), settings_values(self.file)
        phone = {k: now[k] for k in RULE_KEYS if k in table and now[k] != file[k]}
        return NextRules(self.file, phone, settings)

    def source(self, key: str) -> str:
        """Where the key's value comes from: a phone, or the settings file (its default)."""
        return PHONE if key in self.phone else FILE

    @cached_property  # the lobby's screen asks at every frame
    def overridden(self) -> dict[str, tuple[Value, Value]]:
        """Every key the next game plays by otherwise than the settings file says, with
        (its value now, the file's): those a phone set, and those that follow them (the
        `players` of a rule set a phone chose over the file's: official's 4 over solo's
        1, which the file may have written out)."""
        now, file = settings_values(self.settings), settings_values(self.file)
        return {k: (now[k], file[k]) for k in RULE_KEYS if now[k] != file[k]}

    @cached_property
    def over_file_shown(self) -> str | None:
        """The same for the lobby's screen, short enough for two lines of a 3.5" screen:
        "set on a phone, over the file: rules official, players 4", as many keys as fit
        (and how many more: `referee config` says them all)."""
        keys = [f"{k} {now}" for k, (now, _) in self.overridden.items()]
        if not keys:
            return None
        said = "set on a phone, over the file: "
        shown = 1 + next(
            (
                n
                for n in range(len(keys) - 1, 0, -1)
                if len(said + ", ".join(keys[: n + 1]) + _more(len(keys) - n - 1)) <= SHOWN_CHARS
            ),
            0,
        )
        return said + ", ".join(keys[:shown]) + _more(len(keys) - shown)

    @cached_property
    def over_file(self) -> str | None:
        """What the phone's keys override, in a line for the log and the lobby's screen:
        "a phone's rules over the settings file's: rules official (the file: solo),
        players 4 (the file: 1)"; None where the file's rules are the next game's."""
        if not (keys := self.overridden):
            return None
        said = ", ".join(f"{k} {now} (the file: {was})" for k, (now, was) in keys.items())
        return f"a phone's rules over the settings file's: {said}"


def _more(count: int) -> str:
    return f", +{count} more" if count else ""


def _set_away(settings: Settings) -> dict[str, Value]:
    """The keys these settings set away from their defaults (those of their rule set)."""
    values = settings_values(settings)
    defaults = settings_values(settings_from({"rules": settings.rules.value}))
    return {k: v for k, v in values.items() if k == "rules" or v != defaults[k]}


def with_phone(file: Settings, phone: Mapping[str, object]) -> tuple[NextRules, str | None]:
    """The file's rules and the phone's over them; the file's alone, and why, when the
    phone's cannot be used (the file changed under them, or the store's are damaged)."""
    try:
        return NextRules.of(file, phone), None
    except ConfigError as err:
        return NextRules.of(file), f"the rules a phone set are not used: {err}"
