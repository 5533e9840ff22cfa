"""What each rule set scores and allows, in one table (docs/rules.md, "Rule sets").

The engine asks this table, never the rule set's name: a difference between rule sets
is a row here, and a new rule set is a column.
"""

from dataclasses import dataclass
from enum import StrEnum

from referee.units import MAX_SEATS


class RuleSet(StrEnum):
    SUPER = "super"
    OFFICIAL = "official"
    SOLO = "solo"
    SOLITAIRE = "solitaire"


class SuperMeans(StrEnum):
    """What SUPER in open play does."""

    SUPER_ROUND = "a super round: players join, the flip starts a countdown"
    DEAL_OVER = "the deal is over: the next one starts, or the match ends"
    NO_SET_CLAIM = "a claim that the table has no SET, judged like a call"
    NO_SET = "the table has no SET: three more cards, at once"


@dataclass(frozen=True)
class RuleBook:
    seats: tuple[int, int]  # the fewest and the most players
    set_points: int | None  # what a valid SET scores; None: the timed solo increment
    fine: int  # what a mistake (or a timeout) costs
    below_zero: bool  # points may go below zero
    bank: bool  # a discard pile of point cards: fines and the cards no valid caller keeps
    locks: bool  # a mistaken caller with no point to give is locked out
    one_set_per_call: bool  # tied callers found the same SET: its three cards, shared out
    super: SuperMeans
    shared_cards: bool = False  # SUPER in a tied call before a verdict: the SETs share cards
    deals: bool = False  # a match of deals, the dealer passing to the next seat
    counts_cards: bool = False  # the box deals: 12 on the table, the rest in the deck
    owes: bool = False  # a no-SET claim with cards in the deck owes a SET; won or lost
    end_bonus: bool = False  # the cards left on the table score the average per card won

    @property
    def single_player(self) -> bool:
        return self.seats == (1, 1)


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
        one_set_per_call=False,  # each valid co-caller keeps a SET of their own
        super=SuperMeans.DEAL_OVER,
        shared_cards=True,
        deals=True,
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
        counts_cards=True,
        end_bonus=True,
    ),
    RuleSet.SOLITAIRE: RuleBook(
        seats=(1, 1),
        set_points=1,
        fine=0,  # the seeds name no penalty: a mistake is only recorded
        below_zero=False,
        bank=False,
        locks=False,
        one_set_per_call=True,
        super=SuperMeans.NO_SET,
        counts_cards=True,
        owes=True,
    ),
}
