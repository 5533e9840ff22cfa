"""The rules engine: pure, sans-IO. Inputs in, state and effects out (see engine.py)."""

from referee.units import NS_PER_MS, NS_PER_S

from .effects import Effect, Ignored
from .engine import (
    match_deals,
    new_game,
    rank,
    replay,
    sitting_out,
    solo_end_bonus,
    solo_increment,
    step,
)
from .inputs import CameraVerdict, End, Input, Press, Super, Tick, Undo, Verdict, words
from .report import report
from .rulesets import RULE_BOOKS, RuleBook, SuperMeans
from .script import (
    Script,
    ScriptError,
    input_maker,
    parse_input,
    parse_script,
    parse_time,
    read_script,
)
from .settings import (
    RULE_KEYS,
    RuleSet,
    Settings,
    settings_changes,
    settings_from,
    settings_typed,
    settings_values,
)
from .state import Call, Calls, Judgement, Phase, Player, Result, State, SuperRound

__all__ = [
    "NS_PER_MS",
    "NS_PER_S",
    "RULE_BOOKS",
    "RULE_KEYS",
    "Call",
    "Calls",
    "CameraVerdict",
    "Effect",
    "End",
    "Ignored",
    "Input",
    "Judgement",
    "Phase",
    "Player",
    "Press",
    "Result",
    "RuleBook",
    "RuleSet",
    "Script",
    "ScriptError",
    "Settings",
    "State",
    "Super",
    "SuperMeans",
    "SuperRound",
    "Tick",
    "Undo",
    "Verdict",
    "input_maker",
    "match_deals",
    "new_game",
    "parse_input",
    "parse_script",
    "parse_time",
    "rank",
    "read_script",
    "replay",
    "report",
    "settings_changes",
    "settings_from",
    "settings_typed",
    "settings_values",
    "sitting_out",
    "solo_end_bonus",
    "solo_increment",
    "step",
    "words",
]
