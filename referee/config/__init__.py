"""The settings file: one TOML file, checked key by key, every key described once.

schema      every key's kind, default and description; the Config it makes
lines       where a key is in the file, for messages that point at its line
checks      each value and the values together, into a Config
loading     which file, read and parsed
rendering   the example file and the settings in effect, as TOML
next_rules  the next game's rules: the file's, and the keys a phone set over them
"""

from referee.errors import ConfigError

from .checks import check_rules
from .loading import ENV_VAR, SYSTEM_PATH, default_config, load_config, search_paths
from .next_rules import NextRules, with_phone
from .rendering import example_config, render_config
from .schema import (
    SECTIONS,
    AudioConfig,
    ButtonTiming,
    CameraConfig,
    CameraJudge,
    Config,
    DisplayConfig,
    LedDriver,
    LedsConfig,
    ReplayPitch,
    SerialConfig,
    SoundConfig,
    SoundOutput,
    WebConfig,
    listen_address,
)

__all__ = [
    "ENV_VAR",
    "SECTIONS",
    "SYSTEM_PATH",
    "AudioConfig",
    "ButtonTiming",
    "CameraConfig",
    "CameraJudge",
    "Config",
    "ConfigError",
    "DisplayConfig",
    "LedDriver",
    "LedsConfig",
    "NextRules",
    "ReplayPitch",
    "SerialConfig",
    "SoundConfig",
    "SoundOutput",
    "WebConfig",
    "check_rules",
    "default_config",
    "example_config",
    "listen_address",
    "load_config",
    "render_config",
    "search_paths",
    "with_phone",
]
