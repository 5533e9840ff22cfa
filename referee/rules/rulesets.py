"""What each rule set scores and allows, in one table (docs/rules.md, "Rule sets").

The engine asks this table, never the rule set's name: a difference between rule sets
is a row here, and a new rule set is a column.
"""

from dataclasses import dataclass
from enum import StrEnum


class RuleSet(StrEnum):
    SUPER = "super"
    OFFICIAL = "official"
    SOLO = "solo"


class SuperMeans(StrEnum):
    """What SUPER in open play does."""

    SUPER_ROUND = "a super round: players join, the flip starts a countdown"
    NOTHING = "nothing"
    NO_SET_CLAIM = "a claim that the table has no SET, judged like a call"


@dataclass(frozen=True)
class RuleBook:
    seats: tuple[int, int]  # the fewest and the most players
    set_points: int | None  # what a valid SET scores; None: the timed solo increment
    fine: int  # what a mistake (or a timeout) costs
    below_zero: bool  # points may go below zero
    bank: bool  # a discard pile of point cards: fines and the cards no valid caller keeps
    locks: bool  # a mistaken caller with no point to give is locked out
    one_set_per_call: bool  # tied callers found the same SET: at most three of them score
    super: SuperMeans

    @property
    def single_player(self) -> bool:
        return self.seats == (1, 1)


MAX_SEATS = 8

RULE_BOOKS: dict[RuleSet, RuleBook] = {
    RuleSet.SUPER: RuleBook(
        seats=(2, MAX_SEATS),
        set_points=1,
        fine=1,
        below_zero=False,
        bank=True,
        locks=True,
        one_set_per_call=True,
        super=SuperMeans.SUPER_ROUND,
    ),
    RuleSet.OFFICIAL: RuleBook(
        seats=(2, MAX_SEATS),
        set_points=1,
        fine=1,
        below_zero=True,
        bank=False,
        locks=False,
        one_set_per_call=False,
        super=SuperMeans.NOTHING,
    ),
    RuleSet.SOLO: RuleBook(
        seats=(1, 1),
        set_points=None,
        fine=25,
        below_zero=False,
        bank=False,
        locks=False,
        one_set_per_call=True,
        super=SuperMeans.NO_SET_CLAIM,
    ),
}
