"""Every error a user of `referee` is told about, in one place (as gpiozero's exc.py).

Each says what is wrong and where (a file, its line, a key) in one line, and carries the
exit status the command ends with. `referee`'s main() catches RefereeError once, prints
that line and exits with it: never a traceback for something the user can fix.

    RefereeError
     ├── ConfigError       a settings file that cannot be used
     ├── StoreError        the ledger cannot be opened, read or written
     │    └── StoreInUse   another referee (or program) has the ledger locked
     ├── ScriptFileError   a replay or rescue script that cannot be read or used
     ├── AudioFileError    a recording `referee listen` cannot read
     ├── PhotoFileError    a photo `referee look` cannot read
     ├── ModelDamaged      the card classifier's file is not the one it was made as
     ├── PinError          the page's PIN file cannot be made or read
     ├── StartError        the box cannot start as asked (a device, an input, a display)
     │    ├── GpioError          GPIO cannot be used: the pin, its button, what to do
     │    └── ScreenUnavailable  no screen to draw on
     └── UnsavedInputs     inputs the disk refused, kept elsewhere (exit status 3)
"""

import json
import re
from pathlib import Path

EXIT_BAD_INPUT = 2  # the user can fix what the message names
EXIT_UNSAVED = 3  # the game ran, but inputs are not in the ledger: see the message


class RefereeError(Exception):
    """An error the user can act on; str() is its one line."""

    exit_status = EXIT_BAD_INPUT


class ConfigError(RefereeError):
    """A settings file that cannot be used; its message says where and what, on one line."""

    def __init__(
        self,
        what: str,
        path: Path | None = None,
        line: int | None = None,
        section: str | None = None,
        key: str | None = None,
    ) -> None:
        self.what = what
        self.path = path
        self.line = line
        self.section = section
        self.key = key
        place = "" if path is None else f"{path}:{line}: " if line else f"{path}: "
        shown = _toml_name(section) if section is not None else None
        name = "" if shown is None else f"[{shown}] {_toml_name(key)}: " if key else f"[{shown}]: "
        super().__init__(f"{place}{name}{what}")


def _toml_name(name: str) -> str:
    """A key as TOML writes it: bare, or quoted with its escapes ("pla\\nyers"), so that
    a key with a line break in it still makes a one-line message."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


class StoreError(RefereeError):
    """The store cannot be opened, read or written; `reason` is short enough for a screen."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreInUse(StoreError):
    """Another process holds the store's lock: two daemons would mix two tables' games.
    `program` is what it runs ("referee" for a referee), None where it cannot be seen."""

    def __init__(self, path: Path, pid: int | None, program: str | None = None) -> None:
        if pid is None:
            holder = "another process, one this user cannot see"
        elif program == "referee":
            holder = f"another referee (PID {pid})"
        elif program is None:
            holder = f"another process (PID {pid}), one this user cannot see"
        else:
            holder = f"another program, {program} (PID {pid})"
        super().__init__(path, f"in use by {holder}: stop it first, or use another store")
        self.pid = pid
        self.program = program


class ScriptFileError(RefereeError):
    """A script file that cannot be read, parsed or put back: `FILE:LINE: what`."""


class AudioFileError(RefereeError):
    """A recording that cannot be read as a WAV file: `FILE: what`."""


class PhotoFileError(RefereeError):
    """A photo that cannot be read as a JPEG or PNG image: `FILE: what`."""


class ModelDamaged(RefereeError):
    """The card classifier's file (referee/vision/cards.onnx) cannot be read whole, or is
    not the one it was made as: a weight's flipped bit still loads, and reads cards wrong
    and surely."""


class PinError(RefereeError):
    """The page's PIN file cannot be made or read: `FILE: what`."""


class StartError(RefereeError):
    """The box cannot start as asked: a one-line reason for the log and the terminal."""


class GpioError(StartError):
    """GPIO cannot be used; the message names the pin, its button and what to do."""


class ScreenUnavailable(StartError):
    """No screen to draw on (SDL found none): `run` may fall back to the terminal."""


class UnsavedInputs(RefereeError):
    """Inputs that the ledger could not take were written elsewhere; the message names it."""

    exit_status = EXIT_UNSAVED
