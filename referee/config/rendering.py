"""The settings written out as a settings file: the example, and the settings in effect."""

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from referee.buttons import PLAYER_BUTTONS
from referee.rules.settings import settings_values

from .loading import default_config, search_paths
from .next_rules import NextRules
from .schema import SECTION_TEXT, SECTIONS, TIMES, Config, toml_value


def _values(config: Config) -> dict[str, dict[str, Any]]:
    """The keys that load back into this config: what `check` reads, inverted."""
    leds = config.leds
    return {
        "rules": settings_values(config.game),
        "buttons": {
            name: getattr(config.buttons, field) / unit for name, (field, unit) in TIMES.items()
        },
        "pins": {button: config.pins.get(button, "") for button in SECTIONS["pins"]},
        "leds": {
            "driver": leds.driver,
            "data": leds.data or "",
            "clock": leds.clock or "",
            **{seat: leds.pins.get(seat, "") for seat in PLAYER_BUTTONS},
        },
        "beeper": {"pin": config.beeper_pin or ""},
        "sound": asdict(config.sound),
        "audio": asdict(config.audio),
        "camera": asdict(config.camera),
        "display": asdict(config.display),
        "serial": asdict(config.serial),
        "store": {"path": str(config.store_path or "")},
        "web": asdict(config.web),
    }


def _render(
    config: Config,
    header: list[str],
    notes: dict[str, str] | None = None,
    *,
    unset: dict[str, str] | None = None,
) -> str:
    """notes: a line more for some of the [rules] keys, where their value comes from;
    unset: [rules] keys written commented out, to follow the rule set, and why."""
    values = _values(config)
    out = [f"# {line}" for line in header]
    for section, settings in SECTIONS.items():
        out += ["", *(f"# {line}" for line in SECTION_TEXT[section].splitlines()), f"[{section}]"]
        for name, setting in settings.items():
            if section == "rules" and notes and name in notes:
                out.append(f"# {notes[name]}")
            out.append(f"# {setting.key.allowed}")
            line = f"{name} = {toml_value(values[section][name])}"
            if section == "rules" and unset and name in unset:
                out.append(f"# {unset[name]}")
                line = f"# {line}"
            out.append(line)
    return "\n".join(out) + "\n"


def render_config(
    config: Config,
    *,
    named: bool = False,
    rules: NextRules | None = None,
    store: Path | None = None,
) -> str:
    """The settings in effect, as a settings file that loads back into them. named: the
    file was named (--config), not looked for; rules: the next game's, a phone's keys over
    the file's, which the store keeps."""
    if named:
        header = [f"The settings in effect, read from {config.path} (--config)."]
    elif config.path is None:
        header = ["The settings in effect: the defaults, as no settings file was found"]
    else:
        header = [f"The settings in effect, read from {config.path}"]
    if not named:
        header.append(f"(looked for, in this order: {', '.join(map(str, search_paths()))}).")
    if rules is None or not rules.overridden:
        return _render(config, header)
    header += [
        f"The [rules] keys marked below were set on a phone (docs/web.md); kept in {store},",
        "they override the file's until a phone sets them back, or `referee config",
        "--reset-page` forgets them.",
    ]
    chosen = f"rules = {toml_value(rules.settings.rules.value)}"
    notes = {
        # A key no phone set, which follows one that did: a rule set's own default.
        k: f"{'set on a phone' if k in rules.phone else f'follows {chosen}, set on a phone'};"
        f" the file's: {toml_value(was)}"
        for k, (_, was) in rules.overridden.items()
    }
    return _render(replace(config, game=rules.settings), header, notes)


# Keys whose default is the rule set's own (rules/settings.py, `_settings`): the example
# leaves them out, so that `rules = "solo"` alone switches to one seat (docs/rules.md,
# "Settings": switching the rule set needs no other line changed).
FOLLOW_THE_RULES = {
    "players": "left out, the rule set's own: 4, or 1 for solo or solitaire; to set it,"
    " remove the #"
}


def example_config() -> str:
    """Every key with its default and what it may be: the committed referee.example.toml."""
    return _render(
        default_config(),
        [
            "The referee box's settings: every key, with its default and what it may be.",
            "A file to edit: change the values you want; a key you delete keeps its default.",
            "`referee config` checks the file and says which file it read and where it",
            'looked (README.md, "Settings").',
        ],
        unset=FOLLOW_THE_RULES,
    )
