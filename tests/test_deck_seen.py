"""The deck counted by sight (daemon/deck_seen.py; docs/rules.md, "The deck counted by
sight"): the camera's readings against games played through the rules engine, with a
truth known (the layout, the SETs taken, a card dropped or not). Said once it held for
STEADY_NS of readings; a hand over the table never makes an alarm; the log told once. The
camera's process is not started: the readings are handed in as the loop's inbox would."""

import logging
import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.config import CameraConfig
from referee.daemon import deck_seen
from referee.daemon.deck_seen import STEADY_NS, DeckSight, counted
from referee.daemon.watching import Watching
from referee.inbox import Inbox, Seen, SeenCard
from referee.outputs import captions
from referee.outputs.terminal import render
from referee.rules import (
    Card,
    Phase,
    Press,
    RuleSet,
    Settings,
    State,
    Super,
    Undo,
    Verdict,
    new_game,
    step,
)
from referee.rules import Seen as SeenTaken
from referee.units import NS_PER_S
from referee.view import DeckSeen, TableSeen
from tools import gallery

S = NS_PER_S
FRAME_NS = S // 2  # the camera's two frames a second
ALL = [(n, c, s, p) for n in range(3) for c in range(3) for s in range(3) for p in range(3)]
RULES = [RuleSet.SOLO, RuleSet.SOLITAIRE, RuleSet.SUPER, RuleSet.OFFICIAL]
Face = tuple[int, int, int, int]


def reading(t_ns: int, layout: list[Face], unsure: set[int] | frozenset[int] = frozenset()) -> Seen:
    """The camera process's reading of these cards, those at `unsure` (indices) not read
    surely; the SETs among them play no part in the count."""
    cards = tuple(
        SeenCard(face, i not in unsure, (120 * (i % 6), 180 * (i // 6), 100, 150))
        for i, face in enumerate(layout)
    )
    return Seen(t_ns, cards, ())


def game(rules: RuleSet, takes: list[list[Face]]) -> tuple[Settings, State]:
    """A game under these rules where each of `takes` was a SET called, the camera saw its
    three cards taken, and the judges said VALID (an official match of two deals)."""
    players = 1 if rules in (RuleSet.SOLO, RuleSet.SOLITAIRE) else 2
    played = Settings(rules=rules, players=players, pointout_ns=0, deals=2)
    state = new_game(played, lobby=False)
    t = 0
    for three in takes:
        first, second, third = (Card(face) for face in three)
        for inp in (Press(1, t), SeenTaken((first, second, third), t + 1), Verdict(True, t + 2)):
            state, _ = step(played, state, inp)
        t += S
    assert state.phase is Phase.OPEN and state.taken == 3 * len(takes)
    return played, state


def feed(sight: DeckSight, played: Settings, state: State, layouts, start_ns: int = 0) -> int:
    """Each layout a frame after the last (a layout, or a (layout, unsure) pair); the time
    of the next frame."""
    t = start_ns
    for layout in layouts:
        seen = reading(t, *layout) if isinstance(layout, tuple) else reading(t, layout)
        sight.reading(seen, played, state)
        t += FRAME_NS
    return t


STILL = STEADY_NS // FRAME_NS + 1  # readings that span STEADY_NS


@st.composite
def tables(draw):
    """A game with its truth: the rules, the SETs taken (random faces: the judges said
    VALID), the cards on the table by the box's count where it counts (else a layout of
    9 to 15), and the table as it really is: a card dropped (-1), one too many (+1), or
    in order (0)."""
    rules = draw(st.sampled_from(RULES))
    deck = draw(st.permutations(ALL))
    sets = draw(st.integers(0, 5))
    takes = [list(deck[3 * i : 3 * i + 3]) for i in range(sets)]
    played, state = game(rules, takes)
    rest = deck[3 * sets :]
    size = state.table if played.book.counts_cards else draw(st.integers(9, 15))
    off = draw(st.sampled_from([-1, 0, 1]))
    return played, state, list(rest[: size + off]), off


@given(tables())
@settings(max_examples=60)
def test_the_deck_by_sight_is_the_truth_and_a_difference_is_said_once_steady(table):
    played, state, layout, off = table
    sight = DeckSight()
    feed(sight, played, state, [layout] * (STILL - 1))
    assert sight.shown is None  # not steady yet
    feed(sight, played, state, [layout] * 2, (STILL - 1) * FRAME_NS)
    shown = sight.shown
    assert shown is not None
    assert shown.deck == 81 - len(layout) - state.taken
    counts = played.book.counts_cards
    assert shown.box == (state.table if counts else None)
    assert shown.amiss == (counts and off != 0)
    said = [n.text for n in captions.deck_notices(shown)]
    if counts and off:
        why = "a card dropped, or a misdeal?" if off < 0 else "a misdeal?"
        counted_ = f"{len(layout)} cards on the table, the box {state.table}"
        assert said == [f"the camera counts {counted_}: {why}"]
    else:
        assert said == []


@st.composite
def hands(draw):
    """A game in order, and readings while a hand moves over the table: each hides some
    cards, those it covers whole missing, those it covers in part unsure and read as
    anything (at least one: its edge); between them the table as it is."""
    played, state, layout, _ = draw(tables().filter(lambda t: t[3] == 0))
    seen: list[tuple[list[Face], set[int]]] = []
    for _ in range(draw(st.integers(1, STILL + 2))):
        if draw(st.booleans()):
            seen.append((layout, set()))
            continue
        hidden = draw(st.sets(st.sampled_from(range(len(layout))), min_size=1))
        edge = draw(st.sampled_from(sorted(hidden)))
        rest = sorted(hidden - {edge})
        whole = draw(st.sets(st.sampled_from(rest))) if rest else set()
        cards = [
            draw(st.sampled_from(ALL)) if i in hidden else face
            for i, face in enumerate(layout)
            if i not in whole
        ]
        kept = [i for i in range(len(layout)) if i not in whole]
        seen.append((cards, {kept.index(i) for i in hidden - whole}))
    return played, state, seen


@given(hands())
@settings(max_examples=30)
def test_a_hand_over_the_table_never_makes_an_alarm(table):
    played, state, seen = table
    sight = DeckSight()
    t = 0
    for layout, unsure in seen:
        # A hand lying still as long as it likes: the same reading again and again.
        runs = STILL + 1 if unsure else 1
        t = feed(sight, played, state, [(layout, unsure)] * runs, t)
        assert sight.shown is None or not sight.shown.amiss, sight.shown


def test_a_face_twice_or_one_taken_is_a_second_deck_and_an_unsure_one_is_not():
    taken = [ALL[0], ALL[1], ALL[2]]
    played, state = game(RuleSet.SUPER, [taken])
    layout = ALL[10:22]
    twice = [*layout[:-1], layout[0]]  # the last card read as the first's face
    seen = counted(reading(0, twice), played, state)
    assert seen is not None and seen.twice == (layout[0],) and seen.amiss
    assert counted(reading(0, twice, {11}), played, state) == DeckSeen(None, 3)
    back = [*layout[:-1], ALL[1]]  # a card a SET took, on the table again
    seen = counted(reading(0, back), played, state)
    assert seen is not None and seen.again == (ALL[1],) and seen.amiss
    said = [n.text for n in captions.deck_notices(seen)]
    assert said == ["the camera sees 1 red solid oval on the table, taken in a SET: a misdeal?"]
    assert counted(reading(0, []), played, state) is None  # a camera covered: nothing


def test_a_face_taken_is_known_until_its_verdict_is_undone():
    taken = [ALL[0], ALL[1], ALL[2]]
    played, state = game(RuleSet.SOLO, [taken])
    back = [*ALL[10:21], ALL[2]]  # a card the SET took, on the table again
    sight = DeckSight()
    t = feed(sight, played, state, [back] * STILL)
    assert sight.shown == DeckSeen(12, 3, 12, again=(ALL[2],))
    undone, _ = step(played, state, Undo(5 * S))  # the verdict taken back: the call waits
    t = feed(sight, played, undone, [back] * STILL, t)
    assert sight.shown == DeckSeen(12, 3, 12, again=(ALL[2],))  # through the call
    judged, _ = step(played, undone, Verdict(False, 6 * S))  # INVALID: the cards go back
    feed(sight, played, judged, [back] * STILL, t)
    assert sight.shown == DeckSeen(12, 0, 12)


def test_an_official_deal_shuffles_the_cards_taken_back():
    played, state = game(RuleSet.OFFICIAL, [[ALL[0], ALL[1], ALL[2]]])
    layout = [*ALL[10:21], ALL[1]]
    seen = counted(reading(0, layout), played, state)
    assert seen is not None and seen.again == (ALL[1],)
    dealt, _ = step(played, state, Super(5 * S))  # the deal over: the next one
    assert dealt.deal == state.deal + 1 and dealt.taken == 0
    assert counted(reading(0, layout), played, dealt) == DeckSeen(12, 0)


def test_more_cards_than_a_deck_where_the_box_does_not_count():
    takes = [ALL[3 * i : 3 * i + 3] for i in range(23)]  # 69 taken: 12 left
    played, state = game(RuleSet.SUPER, takes)
    seen = counted(reading(0, ALL[69:] + ALL[:3]), played, state)  # 15 on the table
    assert seen is not None and seen.deck == -3
    notices = captions.deck_notices(seen)
    assert notices[0].short == "15 cards on the table, 69 taken: two decks?"


def test_the_log_is_told_once_of_a_card_dropped(caplog):
    caplog.set_level(logging.INFO, logger=deck_seen.__name__)
    deck = ALL[:]
    random.Random(5).shuffle(deck)
    played, state = game(RuleSet.SOLO, [])
    sight = DeckSight()
    table = deck[:12]
    dropped = table[:-1]
    t = feed(sight, played, state, [dropped] * 3 * STILL)
    told = "the deck by sight: the camera counts 11 cards on the table, the box 12"
    assert [r.getMessage().startswith(told) for r in caplog.records] == [True]
    # A SET taken (the call: nothing counted, the notice stays), then three cards dealt.
    called, _ = step(played, state, Press(1, S))
    t = feed(sight, played, called, [dropped[3:]] * STILL, t)
    assert sight.shown is not None and sight.shown.table == 11
    first, second, third = (Card(face) for face in dropped[:3])
    for inp in (SeenTaken((first, second, third), 2 * S), Verdict(True, 3 * S)):
        called, _ = step(played, called, inp)
    short, dealt = dropped[3:], dropped[3:] + deck[12:15]
    t = feed(sight, played, called, [short] * 4 + [dealt] * STILL, t)
    assert sight.shown == DeckSeen(11, 3, 12)
    assert len(caplog.records) == 1  # the same difference: not told again
    # The card found: in order; dropped again: told again.
    t = feed(sight, played, called, [[*dealt, table[-1]]] * STILL, t)
    assert sight.shown == DeckSeen(12, 3, 12) and not sight.shown.amiss
    feed(sight, played, called, [dealt] * STILL, t)
    assert len(caplog.records) == 2


def test_a_super_round_counts_and_the_lobby_shows_nothing():
    played, state = game(RuleSet.SUPER, [])
    sight = DeckSight()
    t = feed(sight, played, state, [ALL[:12]] * STILL)
    assert sight.shown == DeckSeen(12, 0)
    joining, _ = step(played, state, Super(S))  # a super round's joining: cards lie still
    assert joining.phase is Phase.SUPER_JOIN
    t = feed(sight, played, joining, [ALL[:11]] * STILL, t)
    assert sight.shown == DeckSeen(11, 0)
    feed(sight, played, new_game(played), [ALL[:12]], t)  # the lobby: no deck in play
    assert sight.shown is None


def test_watching_shows_the_deck_by_sight(monkeypatch):
    monkeypatch.setattr(Watching, "watching", property(lambda self: True))
    inbox = Inbox()
    try:
        watching = Watching(CameraConfig("off"), inbox)
        played, state = game(RuleSet.SOLITAIRE, [])
        for i in range(STILL):
            watching.seen(reading(i * FRAME_NS, ALL[:11]), None, (played, state))
            watching.seen(reading(i * FRAME_NS + 1, ALL[:11]), None)  # a game not given
        view = watching.view()
        assert view is not None and view.deck == DeckSeen(11, 0, 12)
    finally:
        inbox.close()


SCOREBOARD = gallery.views()["scoreboard"]
SOLO = gallery.views()["solo"]


@pytest.mark.parametrize(
    ("base", "deck", "line", "warned"),
    [
        (SCOREBOARD, DeckSeen(12, 9), "deck 60 by sight", None),
        (SCOREBOARD, DeckSeen(None, 9), None, None),  # a card unsure: no count
        (
            SOLO,
            DeckSeen(11, 6, 12),
            None,  # the box counts the deck itself
            "! the camera counts 11 cards on the table, the box 12: a card dropped, or a misdeal?",
        ),
    ],
)
def test_the_terminal_shows_the_deck_by_sight(base, deck, line, warned):
    seen = TableSeen(deck.table or 12, deck.table or 11, 1, deck=deck)
    view = replace(base, watching=True, table=seen)
    shown = " ".join(render(view, width=120, colour_on=False).split())
    assert captions.deck_by_sight(view) == line
    assert (line in shown) if line else ("by sight" not in shown)
    assert (warned in shown) if warned else ("! the camera" not in shown)
