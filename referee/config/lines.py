"""Where a value is in the settings file: its line, for a message that points at it.

tomllib says what a file holds, not where; the lines are found by scanning the text.
"""

import json
import re
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import ConfigError

from .schema import toml_value

_TABLE_LINE = re.compile(r"""\s*\[\[?\s*([\w.-]+)\s*\]""")
_KEY_LINE = re.compile(r"""\s*["']?([\w.-]+)["']?\s*=""")
# A quoted key with escapes in it ("pla\nyers" = 3): TOML's escapes are JSON's.
_ESCAPED_KEY_LINE = re.compile(r"""\s*("(?:[^"\\]|\\.)*")\s*=""")


def find_lines(text: str) -> dict[tuple[str, str], int]:
    """Where each table and key is, found by scanning (best effort)."""
    lines: dict[tuple[str, str], int] = {}
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _TABLE_LINE.match(line):
            table = header[1].split(".")
            lines.setdefault((table[0], table[1] if len(table) > 1 else ""), number)
        elif key := _KEY_LINE.match(line):
            # A dotted key (`rules.players = 3`) says its section itself.
            names = [*table, *key[1].split(".")]
            lines.setdefault((names[0], names[1]) if len(names) > 1 else ("", names[0]), number)
        elif (quoted := _ESCAPED_KEY_LINE.match(line)) and table:
            with suppress(ValueError):
                lines.setdefault((table[0], json.loads(quoted[1])), number)
    return lines


@dataclass(frozen=True)
class Source:
    """The file the values come from: to say where a wrong one is."""

    path: Path | None
    doc: Mapping[str, Any]
    lines: Mapping[tuple[str, str], int]  # (section, key) → line; (section, "") its header

    def given(self, section: str, key: str) -> bool:
        table = self.doc.get(section)
        return isinstance(table, dict) and key in table

    def written(self, section: str, key: str) -> str:
        """The value as the file writes it, for a message."""
        return toml_value(self.doc[section][key])

    def blame(self, *keys: tuple[str, str]) -> tuple[str, str]:
        """Of keys that clash, the first the file gives (the one to change), else the first."""
        return next((k for k in keys if self.given(*k)), keys[0])

    def line(self, section: str, key: str = "") -> int | None:
        # A key missing from the file is blamed on its section's header, which may be a
        # key at the top (`rules = {players = 2}`, or `rules = 3` by mistake).
        lines = self.lines
        return lines.get((section, key)) or lines.get((section, "")) or lines.get(("", section))

    def error(self, what: str, section: str, key: str = "") -> ConfigError:
        return ConfigError(what, self.path, self.line(section, key), section, key)
