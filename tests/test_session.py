"""The session: inputs to the engine and the ledger, late data decided in its place."""

import pytest

from referee.daemon.arbiter import Decision
from referee.daemon.session import LateInput, Session
from referee.rules import CameraVerdict, Card, Phase, RuleSet, Seen, Settings, words
from referee.store.store import Store

MS = 1_000_000
S = 1_000 * MS
T0 = 50 * S  # the monotonic time the session starts at


@pytest.fixture
def session(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        session = Session(store, Settings(players=4, pointout_ns=2 * S), tie_floor_ns=0, now_ns=T0)
        for button in ("P1", "P2", "P3", "P4", "SUPER"):
            session.play(Decision(T0, button))
        yield session


def play(session: Session, t: int, button: str) -> list[str]:
    return [o.text for o in session.play(Decision(T0 + t, button))]


def stored_state(session: Session):
    game = session.store.latest_game()
    assert game is not None
    return game.state()


def test_a_late_first_press_takes_the_call_when_only_presses_came_since(session):
    play(session, 1 * S, "P2")
    play(session, 1 * S + 3 * MS, "P3")
    texts = play(session, 1 * S - 2 * MS, "P4")  # the real first caller, read late
    assert texts[0] == "press 4 came 5.0 ms late: decided again in its place"
    call = session.state.pending
    assert call is not None and call.callers == (4,)
    assert [p for p, _ in call.presses] == [4, 2, 3]
    assert session.late == 1
    # The ledger replays in event-time order: a restart finds the same game.
    assert stored_state(session) == session.state


def test_a_late_input_after_a_verdict_is_applied_now_and_counted(session):
    play(session, 1 * S, "P2")
    play(session, 2 * S, "VALID")
    outcomes = session.play(Decision(T0 + 1 * S - 5 * MS, "P4"))
    assert isinstance(outcomes[0], LateInput) and not outcomes[0].redecided
    assert outcomes[0].text == "press 4 came 1005.0 ms late: applied now"
    call = session.state.pending
    assert call is not None and call.callers == (4,)  # a new call, at the verdict's time
    assert [p.points for p in session.state.players] == [0, 1, 0, 0]
    assert stored_state(session) == session.state


def test_a_late_verdict_before_a_timeout_that_fired_is_applied_now(session):
    play(session, 1 * S, "P3")
    session.tick(T0 + 3 * S + 1)  # the point-out timer ran out at 3 s
    assert session.state.phase is Phase.OPEN
    texts = play(session, 2 * S, "VALID")
    assert texts == ["valid came 1000.0 ms late: applied now", "ignored: no call to judge"]
    assert stored_state(session) == session.state


def test_a_tick_behind_what_is_decided_does_nothing(session):
    play(session, 1 * S, "P3")
    assert session.tick(T0 + 1 * S) == []
    assert session.tick(T0) == []
    assert session.last_ns == 1 * S


def test_a_game_not_started_takes_the_settings_in_effect_and_a_started_one_says_the_next(
    tmp_path,
):
    """The settings file changed while the box was off (issue 18: "changing the rule set
    seems to do nothing")."""
    path = tmp_path / "referee.db"
    official = Settings(rules=RuleSet.OFFICIAL, players=3)
    with Store.open(path) as store:
        lobby = Session(store, Settings(players=4), tie_floor_ns=0, now_ns=T0)
        lobby.play(Decision(T0, "P1"))  # a join: the game has not started
        lobby.close()
        again = Session(store, official, tie_floor_ns=0, now_ns=T0)
        assert (again.settings, again.state.phase, again.next_game) == (official, Phase.LOBBY, None)
        assert again.ledger.game_id == lobby.ledger.game_id  # the same game, its join kept
        assert store.latest_game().settings == official
        for button in ("P2", "SUPER"):
            again.play(Decision(T0, button))
        assert again.state.phase is Phase.OPEN
        again.close()
        started = Session(store, Settings(players=4), tie_floor_ns=0, now_ns=T0)
        assert (started.settings, started.ledger.game_id) == (official, again.ledger.game_id)
        assert started.next_game == "the next game: rules super, players 4"
        started.close()


def test_the_log_says_where_each_games_clock_is_on_the_monotonic_clock(tmp_path, caplog):
    """A builder lines the ledger's times up with stamps taken beside the box (gpiomon's,
    a recording's): the game clock's 0 on CLOCK_MONOTONIC, for a new game and a resumed one."""
    caplog.set_level("INFO", logger="referee.daemon.session")
    with Store.open(tmp_path / "referee.db") as store:
        first = Session(store, Settings(players=2), tie_floor_ns=0, now_ns=T0)
        for button in ("P1", "P2", "SUPER"):
            first.play(Decision(T0 + 7 * S, button))
        resumed = Session(store, Settings(players=2), tie_floor_ns=0, now_ns=T0 + 60 * S)
    assert resumed.mono_ns(7 * S) == T0 + 60 * S
    said = [r.getMessage() for r in caplog.records if "CLOCK_MONOTONIC" in r.getMessage()]
    assert said == [
        "game 1's clock: 0 s at CLOCK_MONOTONIC 50.000000 s",
        "game 1's clock: 0 s at CLOCK_MONOTONIC 103.000000 s",
    ]


def test_a_game_in_its_lobby_takes_new_rules_at_once_its_joins_replayed(tmp_path):
    """A phone sets the rules while the table joins: the joins of seats the new rules
    still have stay, and the game resumed from the ledger is the same."""
    with Store.open(tmp_path / "referee.db") as store:
        session = Session(store, Settings(players=4), tie_floor_ns=2 * MS, now_ns=T0)
        for t, button in enumerate(("P1", "P3", "P4", "P4", "P2")):  # P4 joins and leaves
            session.play(Decision(T0 + t * S, button))
        session.names.update({1: "Ann", 3: "Cy"})
        three = Settings(players=3, pointout_ns=5 * S)
        assert session.take_rules(three)
        assert session.settings == Settings(players=3, pointout_ns=5 * S, tie_ns=2 * MS)
        assert [p.id for p in session.state.players] == [1, 2, 3]
        assert session.in_lobby == (session.ledger.game_id, session.settings)
        two = Settings(players=2)
        assert session.take_rules(two)
        assert [p.id for p in session.state.players] == [1, 2]
        assert session.names == {1: "Ann"}  # seat 3 is no more
        store.settle_lobby(*session.in_lobby)
        session.close()
        resumed = Session(store, two, tie_floor_ns=2 * MS, now_ns=T0)
        assert (resumed.settings, resumed.state) == (session.settings, session.state)


def test_a_started_game_keeps_its_rules_and_says_what_the_next_will_differ_in(session):
    assert not session.take_rules(Settings(players=4, pointout_ns=5 * S))
    assert session.settings.pointout_ns == 2 * S and session.in_lobby is None
    assert session.next_game == "the next game: pointout_s 5.0"
    play(session, 1 * S, "END")
    assert session.start_next(T0 + 2 * S) == []
    assert session.settings.pointout_ns == 5 * S and session.next_game is None


def test_a_late_join_in_the_lobby_is_replayed_in_its_place_with_new_rules(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        session = Session(store, Settings(players=4), tie_floor_ns=0, now_ns=T0)
        play(session, 2 * S, "P2")
        assert play(session, 1 * S, "P1")[0].endswith("decided again in its place")
        session.take_rules(Settings(players=3))
        assert [p.id for p in session.state.players] == [1, 2]
        assert stored_state(session).players == session.state.players


UNSURE = (Card((0, 0, 0, 1)), Card((0, 0, 0, 1), sure=False), Card((0, 0, 0, 1)))


def test_the_cameras_claim_is_kept_at_its_frames_time_or_the_last_decided(session):
    play(session, 1 * S, "P2")
    assert session.call_mono_ns == T0 + 1 * S
    session.camera(CameraVerdict(True, T0 + int(1.5 * S)))
    assert session.call_mono_ns is None
    assert [p.points for p in session.state.players] == [0, 1, 0, 0]
    play(session, 3 * S, "P3")
    session.tick(T0 + 4 * S)  # decided up to 4 s: a frame of 3.5 s comes after that
    session.camera(Seen(UNSURE, T0 + int(3.5 * S)))
    assert session.late == 0
    session.ledger.flush()
    game = session.store.latest_game()
    assert game is not None and game.state() == session.state
    kept = [(i.t_ns, words(i)) for i in game.inputs[-3:]]
    assert kept == [
        (1 * S + S // 2, "camera valid"),
        (3 * S, "press 3"),
        (4 * S, "seen 1rSo 1rSo? 1rSo"),
    ]
