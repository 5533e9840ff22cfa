"""Finding and reading the settings file: the first of search_paths(), or the one named."""

import os
import re
import tomllib
from pathlib import Path

import platformdirs

from referee.errors import ConfigError
from referee.linux.files import looked_at, read_regular

from .checks import check
from .lines import Source, find_lines
from .schema import Config

ENV_VAR = "REFEREE_CONFIG"
SYSTEM_PATH = Path("/etc/referee/referee.toml")
# Python reads no whole number of more digits (sys.get_int_max_str_digits' default).
_DIGITS_MAX = 4300
_HUGE = re.compile(rf"\d{{{_DIGITS_MAX + 1}}}")
_TOO_LONG = f"not TOML this box reads: a number of more than {_DIGITS_MAX} digits"


def search_paths() -> list[Path]:
    """Where the settings file is looked for, first found first: the one the environment
    names, the one beside the user (where `referee config --example > referee.toml`
    wrote it), the user's, the box's."""
    env = os.environ.get(ENV_VAR)
    try:
        here = [Path.cwd() / "referee.toml"]
    except OSError:  # the current folder was deleted: nothing is beside the user
        here = []
    user = platformdirs.user_config_path("referee") / "referee.toml"
    return [*([Path(env)] if env else []), *here, user, SYSTEM_PATH]


def default_config() -> Config:
    return check(Source(None, {}, {}))


def load_config(path: Path | None = None) -> Config:
    """The settings in `path`, or in the first file of search_paths(); defaults if none."""
    named = ""
    if path is None:
        env = os.environ.get(ENV_VAR)
        if env:  # named on purpose: falling back to the defaults would hide a typo
            path, named = Path(env), f" (named by ${ENV_VAR})"
        else:
            path = next((p for p in search_paths() if looked_at(p)), None)
        if path is None:
            return default_config()
    try:
        text = read_regular(path).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no such settings file{named}", path) from None
    except OSError as err:
        raise ConfigError(f"cannot read the settings: {err.strerror}", path) from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"cannot read the settings: not UTF-8 ({err.reason})", path) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        at = re.search(r"at line (\d+)", str(err))
        raise ConfigError(f"not TOML: {err}", path, int(at[1]) if at else None) from None
    except RecursionError:
        raise ConfigError("not TOML: arrays or tables nested too deeply", path) from None
    except ValueError:  # tomllib hands Python's limit on a whole number's digits through
        line = next((n for n, row in enumerate(text.splitlines(), 1) if _HUGE.search(row)), None)
        raise ConfigError(_TOO_LONG, path, line) from None
    return check(Source(path, doc, find_lines(text)))
