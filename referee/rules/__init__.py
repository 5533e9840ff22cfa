"""The rules engine: pure, sans-IO. Inputs in, state and effects out (see engine.py)."""

from .effects import Effect, Ignored
from .engine import new_game, rank, replay, solo_increment, step
from .inputs import End, Input, Press, Super, Tick, Undo, Verdict, words
from .report import report
from .script import Script, ScriptError, parse_input, parse_script, parse_time
from .settings import (
    NS_PER_MS,
    NS_PER_S,
    RULE_KEYS,
    RuleSet,
    Settings,
    settings_from,
    settings_values,
)
from .state import Call, Judgement, Phase, Player, State, SuperRound

__all__ = [
    "NS_PER_MS",
    "NS_PER_S",
    "RULE_KEYS",
    "Call",
    "Effect",
    "End",
    "Ignored",
    "Input",
    "Judgement",
    "Phase",
    "Player",
    "Press",
    "RuleSet",
    "Script",
    "ScriptError",
    "Settings",
    "State",
    "Super",
    "SuperRound",
    "Tick",
    "Undo",
    "Verdict",
    "new_game",
    "parse_input",
    "parse_script",
    "parse_time",
    "rank",
    "replay",
    "report",
    "settings_from",
    "settings_values",
    "solo_increment",
    "step",
    "words",
]
