"""Replay scripts: text in, settings and timed inputs out (docs/rules.md).

    config players=4 rules=super tie_ms=5
    0.000 press 2        # seconds since the start, never decreasing
    1.5 valid

Without `players=` (or without a `config` line), the game starts in the lobby with seats
1 to 8 open (seat 1 in a single-player game): a script never reads a settings file.

The grammar of an input's words (`press 2`, `end left=3`) is also how the store keeps
inputs, so one parser reads both.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from itertools import chain

from referee.faces import read_code
from referee.units import MAX_SEATS, NS_PER_S

from .inputs import (
    SET,
    CameraVerdict,
    Card,
    Cards,
    End,
    Input,
    Press,
    Seen,
    Super,
    Tick,
    Undo,
    Verdict,
    makes_set,
)
from .numbers import scaled, shown, whole
from .settings import DECK, RULE_KEYS, SettingError, Settings, settings_from

_BARE: dict[str, Callable[[int], Input]] = {
    "valid": lambda t: Verdict(True, t),
    "invalid": lambda t: Verdict(False, t),
    "super": Super,
    "undo": Undo,
    "tick": Tick,
}
KINDS = ("press", *_BARE, "camera", "seen", "end")
# The last time a script may give: longer than any game, and every time up to it (with a
# timer's day after it) fits the ledger's 64-bit nanoseconds and any clock.
LAST_S = 1_000_000_000
_LAST_NS = LAST_S * NS_PER_S
_NS_DIGITS = 9  # a nanosecond is 10**-9 s


class ScriptError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message

    def where(self, filename: str) -> str:
        return f"{filename}:{self.line}: {self.message}"


@dataclass
class Script:
    """A script means the same on every machine: it never reads a settings file."""

    # Without `players=`, the lobby with every seat open (one in a single-player game).
    settings: Settings = field(default_factory=lambda: Settings(players=MAX_SEATS))
    lobby: bool = True  # a `config` line with `players=` skips the lobby
    inputs: list[tuple[int, Input]] = field(default_factory=list)  # (line number, input)


def parse_input(words: list[str], t_ns: int) -> Input:
    """One input from its words; ValueError says what is wrong with them."""
    return input_maker(" ".join(words))(t_ns)


@lru_cache(maxsize=256)  # a game says the same few things many times: a ledger reads fast
def input_maker(text: str) -> Callable[[int], Input]:
    """What makes the input these words say, at any time; ValueError says what is wrong."""
    words = text.split()
    if not words:
        raise ValueError("no input")
    kind, args = words[0], words[1:]
    got = f"; got {shown(' '.join(args))}" if args else ""
    if kind == "press":
        player = _count(args[0], 1, MAX_SEATS) if len(args) == 1 else None
        if player is None:
            raise ValueError(f"press needs one player number, 1 to {MAX_SEATS}: 'press 2'{got}")
        return partial(Press, player)
    if kind == "camera":
        if not args or args[0] not in ("valid", "invalid"):
            raise ValueError(
                f"camera takes valid or invalid, then its cards or none: 'camera valid'{got}"
            )
        valid = args[0] == "valid"
        if len(args) == 1:  # a script may leave out what the camera saw
            return partial(CameraVerdict, valid)
        cards = _cards(args[1:], f"camera {args[0]} 1rSo 2gTd 3pOs", got)
        sees = makes_set(cards)
        if sees is None:
            raise ValueError(f"the camera judges only three cards read surely{got}")
        if sees is not valid:
            verdict = "valid" if sees else "invalid"
            raise ValueError(f"these cards are {'a' if sees else 'no'} SET: camera {verdict}{got}")
        return partial(CameraVerdict, valid, cards=cards)
    if kind == "seen":
        return partial(Seen, _cards(args, "seen 1rSo 2gTd 3pOs?", got))
    if kind == "end":
        if not args:
            return End
        name, _, value = args[0].partition("=")
        left = _count(value, 0, DECK) if len(args) == 1 and name == "left" else None
        if left is None:
            raise ValueError(
                f"end takes nothing or left=N, the cards left on the table (0 to {DECK}){got}"
            )
        return partial(End, left=left)
    if kind not in _BARE:
        raise ValueError(f"unknown input {shown(kind)} (known: {', '.join(KINDS)})")
    if args:
        raise ValueError(f"{kind} takes no arguments{got}")
    return _BARE[kind]


def _cards(words: list[str], example: str, got: str) -> Cards:
    """Three cards in the ledger's words, each "1rSo" or, unsure, "1rSo?"."""
    if len(words) != SET:
        raise ValueError(f"the camera saw three cards: '{example}'{got}")
    cards = []
    for word in words:
        code = word.removesuffix("?")
        try:
            cards.append(Card(read_code(code), sure=code == word))
        except ValueError as err:
            raise ValueError(f"{shown(word)}: {err}") from None
    return cards[0], cards[1], cards[2]


def _count(text: str, least: int, most: int) -> int | None:
    """A whole number from least to most, else None."""
    try:
        number = whole(text)
    except ValueError:
        return None
    return number if least <= number <= most else None


def parse_time(text: str) -> int:
    """Seconds since the start, as written in a script, to nanoseconds (half up)."""
    try:
        t_ns = scaled(text, _NS_DIGITS)
    except ValueError:
        since = " since the start" if text.startswith("-") else ""
        raise ValueError(f"{shown(text)} is not a time in seconds{since}") from None
    if t_ns > _LAST_NS:
        last = f"{LAST_S:,} s (some 31 years)"
        raise ValueError(f"time {shown(text)} is after the last a script may give, {last}")
    return t_ns


def _config(words: list[str]) -> tuple[Settings, bool]:
    """The settings of a `config` line, and whether it skips the lobby (it names players)."""
    texts: dict[str, str] = {}
    for word in words:
        name, eq, text = word.partition("=")
        if not eq or not text:
            raise ValueError(f"config wants key=value, got {shown(word)}")
        if name not in RULE_KEYS:
            raise ValueError(f"unknown config key {shown(name)} (known: {', '.join(RULE_KEYS)})")
        if name in texts:
            raise ValueError(f"config gives {name} twice: once is enough")
        texts[name] = text
    try:
        settings = settings_from(texts)
    except SettingError as err:  # the settings file's words, as it says them for its key
        raise ValueError(f"{err.key}: {err.what}; got {shown(texts[err.key])}") from None
    if "players" in texts:
        return settings, False
    return replace(settings, players=settings.book.seats[1]), True


def parse_script(text: str) -> Script:
    # Into lines as a file read as text is (\n, \r\n or \r ends one), for the same numbers.
    script, inputs = read_script(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    script.inputs = list(inputs)
    return script


def read_script(lines: Iterable[str]) -> tuple[Script, Iterator[tuple[int, Input]]]:
    """The script's settings at once, its inputs (line number, input) as they are read:
    a long script is never all in memory. A bad line raises ScriptError when it is read."""
    script = Script()
    inputs = _inputs(lines, script)
    first = next(inputs, None)  # reads up to the first input: the config line is before it
    return script, chain([first] if first else [], inputs)


def _inputs(lines: Iterable[str], script: Script) -> Iterator[tuple[int, Input]]:
    last_ns = 0
    seen_input = seen_config = False
    for number, raw in enumerate(lines, start=1):
        if number == 1:
            raw = raw.removeprefix("\ufeff")  # the byte-order mark some editors write first
        words = raw.partition("#")[0].split()
        if not words:
            continue
        try:
            if words[0] == "config":
                if seen_input or seen_config:
                    raise ValueError("config must come before every input, once")
                script.settings, script.lobby = _config(words[1:])
                seen_config = True
                continue
            if len(words) < 2:
                raise ValueError(f"expected 'TIME INPUT', got {shown(raw.strip())}")
            t_ns = parse_time(words[0])
            if t_ns < last_ns:
                raise ValueError(f"time {shown(words[0])} goes back (the line before was later)")
            inp = parse_input(words[1:], t_ns)
        except ValueError as err:
            raise ScriptError(number, str(err)) from None
        yield number, inp
        last_ns = t_ns
        seen_input = True
