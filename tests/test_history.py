"""The store's list of games, the history's cache, and the stats against a count done
another way (docs/web.md, "Stats"): from the final state alone, as `referee state` has it."""

import tempfile
from array import array
from collections import Counter
from pathlib import Path
from statistics import median

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import StoreError
from referee.history import book
from referee.history.book import History
from referee.history.stats import series, stats
from referee.history.summary import SeatTally, packed, player_of, unpacked
from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    Judgement,
    Phase,
    Press,
    Result,
    RuleSet,
    Settings,
    replay,
)
from referee.store.store import Store
from tests.tables import table_game

RULES = [(RuleSet.SUPER, 4), (RuleSet.OFFICIAL, 3), (RuleSet.SOLO, 1), (RuleSet.SOLITAIRE, 1)]


def write_games(path: Path, games) -> list[int]:
    """Each (settings, inputs) as a game of the store, every seat playing from the start."""
    with Store.open(path) as store:
        return [store.new_game(s, lobby=False, inputs=inputs) for s, inputs in games]


def test_the_list_is_newest_first_and_each_game_says_where_its_inputs_stand(tmp_path):
    path = tmp_path / "referee.db"
    Store.open(path).close()
    with Store.open_readonly(path) as store:
        assert store.games() == []
    official = Settings(rules=RuleSet.OFFICIAL, players=3)
    with Store.open(path) as store:
        first = store.new_game(Settings(players=4), lobby=False, inputs=[Press(2, NS_PER_S)])
        second = store.new_game(official, lobby=True)
    with Store.open_readonly(path) as store:
        listed = store.games()
        assert [g.id for g in listed] == [second, first]
        assert (listed[0].settings, listed[0].lobby, listed[0].last_input) == (official, True, 0)
        assert listed[1].last_input > 0 and not listed[1].lobby
        assert [g.id for g in store.games(through=first)] == [first]
        assert [g.id for g in store.games(limit=1)] == [second]
        assert store.games(through=0) == []
        before = listed[1].last_input
    with Store.open(path) as store:
        store.append(first, Press(3, 2 * NS_PER_S))
        assert store.games(through=first)[0].last_input > before


class Replays:
    """Counts the games the history replays."""

    def __init__(self, monkeypatch):
        self.games: list[int] = []
        real = book.timeline

        def counted(game_settings, inputs, *, lobby):
            inputs = list(inputs)
            self.games.append(len(inputs))
            return real(game_settings, inputs, lobby=lobby)

        monkeypatch.setattr(book, "timeline", counted)

    def take(self) -> int:
        n, self.games = len(self.games), []
        return n


def test_a_game_is_replayed_again_only_once_its_inputs_change(tmp_path, monkeypatch):
    replays = Replays(monkeypatch)
    path = tmp_path / "referee.db"
    s = Settings(players=4)
    ids = write_games(path, [(s, table_game(s, seed, calls=5)) for seed in range(5)])
    history = History(path)
    page = history.page(None, 3)
    assert [g.game.id for g in page.games] == ids[:1:-1] and page.next == ids[2]
    assert replays.take() == 3
    assert [g.game.id for g in history.page(page.next, 3).games] == ids[1::-1]
    assert replays.take() == 2
    assert history.page(None, 5).next is None and replays.take() == 0
    with Store.open(path) as store:
        store.append(ids[3], Press(1, 10**6 * NS_PER_S))
    assert history.count(100).done
    assert replays.take() == 1  # that game alone
    found = history.game(ids[3])
    assert found is not None and replays.take() == 0  # its timeline was kept
    assert found[0].last_ns == 10**6 * NS_PER_S
    assert history.game(ids[-1] + 1) is None


def test_a_count_reads_a_few_games_at_a_time_and_keeps_no_old_games_timeline(tmp_path, monkeypatch):
    replays = Replays(monkeypatch)
    path = tmp_path / "referee.db"
    s = Settings(players=2)
    ids = write_games(path, [(s, table_game(s, seed, calls=2)) for seed in range(5)])
    monkeypatch.setattr(book, "READ_AT_ONCE", 2)
    opened = []
    real = Store.open_readonly

    def open_readonly(store_path):
        opened.append(store_path)
        return real(store_path)

    monkeypatch.setattr(book.Store, "open_readonly", open_readonly)
    history = History(path)
    assert history.count(100).done and replays.take() == 5
    # The list, then for 2, 2 and 1 games their listings and their inputs: never held long.
    assert len(opened) == 1 + 3 * 2
    assert history.game(ids[0]) is not None and replays.take() == 1  # no timeline kept


def test_a_summary_keeps_its_seats_as_one_array_of_numbers():
    seats = (
        SeatTally(1, 3, 1, True, 4, 1, 1, 0, (2_500_000, 12)),
        SeatTally(2, -1, None, False, 0, 2, 0, 1, ()),
    )
    numbers = packed(seats)
    assert isinstance(numbers, array) and unpacked(numbers) == seats
    assert unpacked(packed(())) == ()


def test_stats_follow_a_named_player_from_seat_to_seat(tmp_path):
    path = tmp_path / "referee.db"
    s = Settings(players=3)
    first, second = write_games(path, [(s, table_game(s, seed, calls=4)) for seed in (1, 2)])
    with Store.open(path) as store:
        store.name_seats(first, [(1, "Ann"), (2, "Bob")])
        store.name_seats(second, [(3, "ann")])  # the same player, now spelt so
        listed = store.games()
    assert [player_of(g, seat) for g in listed for seat in (1, 3)] == ["P1", "ann", "ann", "P3"]
    history = History(path)
    assert history.count(100).done
    numbers = {p.player: p.games for p in stats(history.cache)}
    # Ann sat at seat 1, then at seat 3: her two games are one player's; a seat never
    # named is its label in every game, as the box showed it.
    assert numbers == {"ann": 2, "Bob": 1, "P1": 1, "P2": 1, "P3": 1}


def test_a_player_named_like_a_seat_counts_apart_from_the_seat(tmp_path):
    """Issue 29: "P6" at seat 2 while seat 6 had no name made two people one. The page no
    longer takes a seat's label as a name; a ledger kept before holds one still."""
    path = tmp_path / "referee.db"
    s = Settings(players=6)
    first, _ = write_games(path, [(s, table_game(s, seed, calls=4)) for seed in (1, 2)])
    with Store.open(path) as store:
        store.name_seats(first, [(2, "P6")])
    history = History(path)
    assert history.count(100).done
    players = stats(history.cache)
    # Seat 6 sat unnamed in both games; the player called P6 sat in one, at seat 2.
    assert [(p.player, p.named, p.games) for p in players if p.player == "P6"] == [
        ("P6", False, 2),
        ("P6", True, 1),
    ]
    assert [len(series(history.cache, p)) for p in players] == [p.games for p in players]


def test_counting_a_large_store_goes_a_budget_at_a_time(tmp_path, monkeypatch):
    replays = Replays(monkeypatch)
    path = tmp_path / "referee.db"
    s = Settings(players=2)
    write_games(path, [(s, table_game(s, seed, calls=3)) for seed in range(5)])
    history = History(path)
    progress = [history.count(2) for _ in range(3)]
    assert [(c.counted, c.total) for c in progress] == [(2, 5), (4, 5), (5, 5)]
    assert [c.done for c in progress] == [False, False, True]
    assert replays.take() == 5


def test_an_unreadable_store_says_why(tmp_path):
    with pytest.raises(StoreError, match="no such file"):
        History(tmp_path / "none.db").page(None, 10)


# The stats, and the same numbers counted from the final states alone


def counted_otherwise(games) -> dict[str, dict[str, object]]:
    """Each player's numbers from the state replay makes of each game: its calls' callers
    and verdicts, its ranking and result; none of the history's own reading."""
    tally: dict[str, Counter] = {}
    margins: dict[str, list[int]] = {}
    for game_id, (s, inputs) in games:
        state = replay(s, inputs, lobby=False)
        head = type("Head", (), {"id": game_id, "names": ()})()
        for p in state.players:
            who = player_of(head, p.id)
            tally.setdefault(who, Counter())["games"] += 1
            margins.setdefault(who, [])
        for call in state.calls:
            super_winner = None
            for seat, verdict in zip(call.callers, call.verdicts, strict=False):
                who = player_of(head, seat)
                tally[who]["sets"] += verdict is Judgement.VALID
                tally[who]["mistakes"] += verdict in (Judgement.INVALID, Judgement.TIMEOUT)
                if verdict is Judgement.VALID:
                    mine = dict(call.presses)[seat]
                    later = sorted(t - mine for s_, t in call.presses if s_ != seat and t >= mine)
                    margins[who].extend(later[:1])
                    if call.super_round and super_winner is None:
                        super_winner = seat
                        tally[who]["super_won"] += 1
        if state.phase is Phase.OVER:
            for place in state.ranking:
                who = player_of(head, place.player)
                if state.result is not None:
                    tally[who]["wins"] += state.result is Result.WON
                elif len(state.players) > 1:
                    tally[who]["wins"] += place.place == 1
    return {
        who: {
            "games": c["games"],
            "wins": c["wins"],
            "sets": c["sets"],
            "mistakes": c["mistakes"],
            "super_won": c["super_won"],
            "median_margin_ms": (
                round(median(margins[who]) / NS_PER_MS, 6) if margins[who] else None
            ),
        }
        for who, c in tally.items()
    }


games_st = st.lists(
    st.tuples(st.sampled_from(RULES), st.integers(0, 2**32), st.sampled_from([0, 3 * NS_PER_MS])),
    min_size=1,
    max_size=4,
)


@settings(max_examples=15)
@given(drawn=games_st)
def test_the_stats_agree_with_a_count_from_the_final_states(drawn):
    games = []
    for (rules, players), seed, tie in drawn:
        s = Settings(rules=rules, players=players, tie_ns=tie)
        games.append((s, table_game(s, seed, calls=10, end=seed % 3 != 0)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "referee.db"
        ids = write_games(path, games)
        history = History(path)
        assert history.count(100).done
        players = stats(history.cache)
        played = {p.player: [one.game for one in series(history.cache, p)] for p in players}
    got = {
        p.player: {
            "games": p.games,
            "wins": p.wins,
            "sets": p.sets,
            "mistakes": p.mistakes,
            "super_won": p.rounds_won,
            "median_margin_ms": p.median_margin_ms,
        }
        for p in players
    }
    assert got == counted_otherwise(list(zip(ids, games, strict=True)))
    for p in players:
        assert played[p.player] == sorted(played[p.player])
        assert len(played[p.player]) == p.games
