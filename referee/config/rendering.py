"""The settings written out as a settings file: the example, and the settings in effect."""

from dataclasses import asdict
from typing import Any

from referee.edges import PLAYER_BUTTONS
from referee.rules.settings import settings_values

from .loading import default_config, search_paths
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
        "display": asdict(config.display),
        "serial": asdict(config.serial),
        "store": {"path": str(config.store_path or "")},
        "web": asdict(config.web),
    }


def _render(config: Config, header: list[str]) -> str:
    values = _values(config)
    out = [f"# {line}" for line in header]
    for section, settings in SECTIONS.items():
        out += ["", *(f"# {line}" for line in SECTION_TEXT[section].splitlines()), f"[{section}]"]
        for name, setting in settings.items():
            out += [f"# {setting.key.allowed}", f"{name} = {toml_value(values[section][name])}"]
    return "\n".join(out) + "\n"


def render_config(config: Config, *, named: bool = False) -> str:
    """The settings in effect, as a settings file that loads back into them. named: the
    file was named (--config), not looked for."""
    if named:
        return _render(config, [f"The settings in effect, read from {config.path} (--config)."])
    looked = f"(looked for, in this order: {', '.join(map(str, search_paths()))})."
    if config.path is None:
        return _render(
            config,
            ["The settings in effect: the defaults, as no settings file was found", looked],
        )
    return _render(config, [f"The settings in effect, read from {config.path}", looked])


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
    )
