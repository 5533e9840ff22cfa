"""The ledger on real SQLite files: roundtrips, resuming, migrations, refusals, a full disk."""

import json
import logging
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal

import platformdirs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cli import main
from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    RULE_BOOKS,
    RULE_KEYS,
    CameraVerdict,
    End,
    Press,
    RuleSet,
    Seen,
    Settings,
    Super,
    Tick,
    Undo,
    Verdict,
    parse_script,
    replay,
    report,
    settings_values,
)
from referee.store import ledger as ledger_module
from referee.store import schema
from referee.store.ledger import BATCH_MAX, Ledger
from referee.store.paths import default_store_path
from referee.store.schema import SCHEMA_VERSION
from referee.store.store import Store, StoreError

from .conftest import SCENARIOS
from .rules.helpers import camera_entry, cards_st
from .slow_fsync import writes_held

SCRIPTS = sorted(SCENARIOS.glob("*.txt"))
VALID_CALL = SCENARIOS / "call_valid.txt"  # one call, judged valid: the bank holds 2


def writer(store):
    """The store's own connection: the pragmas that make it durable live there."""
    return store._conn


def pragma(path, name):
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
        value = conn.execute(f"PRAGMA {name}").fetchone()[0]
    conn.close()
    return value


def raw(path, *sql):
    """Change the file behind the store's back, as a damaged disk or a later version would."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in sql:
        conn.execute(statement)
    conn.close()


def snapshot(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir()}


def played(path, script_path):
    """Store a scenario as the daemon would, input by input; its script too."""
    script = parse_script(script_path.read_text())
    inputs = [inp for _, inp in script.inputs]
    with Store.open(path) as store:
        game = store.new_game(script.settings, lobby=script.lobby)
        for inp in inputs:
            store.append(game, inp)
    return script, inputs


# Settings as a config line could give them, inputs as the buttons could.
settings_st = st.builds(
    lambda rules, seats, pointout, tie, countdown, flipped, deals, dealer, sudden: Settings(
        rules=rules,
        players=1 if RULE_BOOKS[rules].single_player else seats,
        pointout_ns=pointout,
        tie_ns=tie,
        super_ns=countdown,
        must_use_flipped=flipped,
        deals=deals,
        dealer_plays=dealer,
        sudden_death=sudden,
    ),
    st.sampled_from(RuleSet),
    st.integers(2, 8),
    st.just(0) | st.integers(NS_PER_MS, 600 * NS_PER_S),
    st.integers(0, NS_PER_S),
    st.integers(NS_PER_MS, 600 * NS_PER_S),
    st.booleans(),
    st.integers(0, 99),
    st.booleans(),
    st.booleans(),
)
kinds_st = st.one_of(
    st.builds(lambda p: lambda t: Press(p, t), st.integers(1, 8)),
    st.builds(lambda v: lambda t: Verdict(v, t), st.booleans()),
    st.builds(lambda v: lambda t: CameraVerdict(v, t), st.booleans()),
    st.builds(camera_entry, cards_st),
    st.builds(lambda cards: lambda t: Seen(cards, t), cards_st),
    st.just(Super),
    st.just(Undo),
    st.just(Tick),
    st.builds(lambda left: lambda t: End(t, left=left), st.none() | st.integers(0, 81)),
)
inputs_st = st.lists(st.tuples(st.integers(0, 3600 * NS_PER_S), kinds_st), max_size=30).map(
    lambda pairs: [make(t) for t, make in sorted(pairs, key=lambda pair: pair[0])]
)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory):
    with Store.open(tmp_path_factory.mktemp("store") / "referee.db") as store:
        yield store


@settings(max_examples=40)
@given(game_settings=settings_st, lobby=st.booleans(), inputs=inputs_st)
def test_inputs_and_settings_read_back_as_stored(shared_store, game_settings, lobby, inputs):
    game = shared_store.new_game(game_settings, lobby=lobby)
    for inp in inputs:
        shared_store.append(game, inp)
    stored = shared_store.latest_game()
    assert stored is not None
    assert (stored.id, stored.settings, stored.lobby) == (game, game_settings, lobby)
    assert list(stored.inputs) == inputs
    assert stored.state() == replay(game_settings, inputs, lobby=lobby)


def test_a_game_records_when_it_started(tmp_path):
    before = datetime.now(UTC)
    with Store.open(tmp_path / "referee.db") as store:
        store.new_game(Settings(), lobby=True)
        stored = store.latest_game()
    assert stored is not None
    assert before <= stored.started_at <= datetime.now(UTC)
    assert (stored.lobby, stored.inputs) == (True, ())


def test_the_latest_game_is_the_last_one_started(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        first = store.new_game(Settings(players=3), lobby=False)
        store.append(first, Press(1, 0))
        second = store.new_game(Settings(rules=RuleSet.SOLO, players=1), lobby=False)
        store.append(second, Press(1, 5))
        stored = store.latest_game()
    assert stored is not None
    assert (stored.id, stored.settings.rules, stored.inputs) == (second, "solo", (Press(1, 5),))


@pytest.mark.parametrize("script_path", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_reopening_resumes_the_exact_state(tmp_path, script_path):
    path = tmp_path / "referee.db"
    script, inputs = played(path, script_path)
    live = replay(script.settings, inputs, lobby=script.lobby)
    with Store.open(path) as store:
        stored = store.latest_game()
    assert stored is not None
    resumed = stored.state()
    assert resumed == live
    assert report(stored.settings, resumed) == report(script.settings, live)


def test_the_writer_is_durable_on_every_commit(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        conn = writer(store)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert not conn.in_transaction  # nothing left uncommitted between calls


def test_open_creates_the_directories(tmp_path):
    path = tmp_path / "var" / "lib" / "referee" / "referee.db"
    Store.open(path).close()
    assert pragma(path, "user_version") == SCHEMA_VERSION


@pytest.mark.parametrize("empty", ["zero bytes", "a database with no tables"])
def test_an_empty_version_0_file_is_migrated(tmp_path, empty):
    path = tmp_path / "referee.db"
    path.touch()
    if empty != "zero bytes":
        raw(path, "CREATE TABLE scratch (x)", "DROP TABLE scratch")
        assert path.stat().st_size > 0
    assert pragma(path, "user_version") == 0
    with Store.open(path) as store:
        game = store.new_game(Settings(), lobby=True)
        store.append(game, Press(1, 0))
    assert pragma(path, "user_version") == SCHEMA_VERSION
    with Store.open_readonly(path) as store:
        stored = store.latest_game()
    assert stored is not None
    assert stored.inputs == (Press(1, 0),)


def test_a_later_migration_step_runs_on_open_and_keeps_the_games(tmp_path, monkeypatch):
    path = tmp_path / "referee.db"
    played(path, VALID_CALL)
    step = ("ALTER TABLE games ADD COLUMN table_name TEXT", "UPDATE games SET table_name = 'lunch'")
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, step))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match="older than this referee's"):
        Store.open_readonly(path)  # reading cannot migrate
    with Store.open(path) as store:
        stored = store.latest_game()
    assert pragma(path, "user_version") == SCHEMA_VERSION + 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT table_name FROM games").fetchall() == [("lunch",)]
    conn.close()
    assert stored is not None
    assert len(stored.inputs) == len(parse_script(VALID_CALL.read_text()).inputs)


def test_a_failing_migration_step_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "referee.db"
    played(path, VALID_CALL)
    step = ("ALTER TABLE games ADD COLUMN table_name TEXT", "this is not SQL")
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, step))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match="syntax error"):
        Store.open(path)
    monkeypatch.undo()
    assert pragma(path, "user_version") == SCHEMA_VERSION
    with Store.open(path) as store:
        columns = [row[1] for row in writer(store).execute("PRAGMA table_info(games)")]
        assert "table_name" not in columns  # the step's first statement was rolled back too
        assert store.latest_game() is not None


@pytest.mark.parametrize("opener", [Store.open, Store.open_readonly])
def test_a_newer_store_is_refused_and_left_untouched(tmp_path, opener):
    path = tmp_path / "referee.db"
    played(path, VALID_CALL)
    raw(path, "PRAGMA user_version = 7")
    before = snapshot(tmp_path)
    with pytest.raises(StoreError) as caught:
        opener(path)
    assert str(caught.value) == (
        f"{path}: store schema version 7 is newer than this referee knows"
        f" ({SCHEMA_VERSION}): upgrade referee"
    )
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("opener", [Store.open, Store.open_readonly])
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[rules]\nplayers = 4\n", "not an SQLite database"),
        (b"SQLite", "not an SQLite database"),  # shorter than the header
        (None, "an SQLite database, but not a referee store"),
    ],
)
def test_a_file_that_is_not_a_store_is_refused_and_left_untouched(
    tmp_path, opener, content, message
):
    path = tmp_path / "referee.db"
    if content is None:
        raw(path, "CREATE TABLE photos (id INTEGER PRIMARY KEY)", "INSERT INTO photos VALUES (1)")
    else:
        path.write_bytes(content)
    before = snapshot(tmp_path)
    with pytest.raises(StoreError, match=f"^{path}: {message}"):
        opener(path)
    assert snapshot(tmp_path) == before


def test_reading_a_closed_store_creates_and_changes_nothing(tmp_path):
    path = tmp_path / "referee.db"
    played(path, VALID_CALL)
    before = snapshot(tmp_path)
    assert list(before) == ["referee.db"]  # the writer cleaned up its -wal and -shm
    with Store.open_readonly(path) as store:
        assert store.latest_game() is not None
        with pytest.raises(StoreError, match="read-only"):
            store.new_game(Settings(), lobby=True)
    assert snapshot(tmp_path) == before


# A daemon killed mid-game (a power cut, SIGKILL): its inputs are in the -wal, and its
# -wal and -shm are left beside the store.
KILLED = """
import os, signal, sys
from pathlib import Path
from referee.rules import Press, Settings
from referee.store.store import Store
store = Store.open(Path(sys.argv[1]))
game = store.new_game(Settings(players=2), lobby=False)
for t in range(5):
    store.append(game, Press(t % 2 + 1, t))
os.kill(os.getpid(), signal.SIGKILL)
"""


def files(directory):
    """Each file's bytes and when it was last written."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in directory.iterdir()}


@pytest.mark.parametrize("shm", ["left", "deleted"])
def test_reading_a_killed_daemons_store_creates_and_changes_nothing(tmp_path, capsys, shm):
    path = tmp_path / "referee.db"
    assert subprocess.run([sys.executable, "-c", KILLED, str(path)]).returncode == -9
    assert sorted(files(tmp_path)) == ["referee.db", "referee.db-shm", "referee.db-wal"]
    if shm == "deleted":
        (tmp_path / "referee.db-shm").unlink()
    before = files(tmp_path)
    assert main(["state", "--store", str(path)]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["players"]] == [1, 2]
    with Store.open_readonly(path) as store:
        assert len(store.latest_game().inputs) == 5  # all of them, from the -wal
    assert files(tmp_path) == before


def test_reading_while_the_writer_appends(tmp_path):
    path = tmp_path / "referee.db"
    with Store.open(path) as daemon:
        game = daemon.new_game(Settings(players=2), lobby=False)
        daemon.append(game, Press(2, 0))
        with Store.open_readonly(path) as reader:
            stored = reader.latest_game()
            assert stored is not None
            assert stored.inputs == (Press(2, 0),)
            daemon.append(game, Verdict(True, NS_PER_S))
            stored = reader.latest_game()
            assert stored is not None
            assert stored.inputs == (Press(2, 0), Verdict(True, NS_PER_S))
            assert [p.points for p in stored.state().players] == [0, 1]
        daemon.append(game, Press(1, 2 * NS_PER_S))  # the reader held no lock on it
        stored = daemon.latest_game()
        assert stored is not None
        assert len(stored.inputs) == 3


def test_a_power_cut_loses_no_appended_input(tmp_path):
    """The files as the disk holds them while the daemon runs: the inputs are in the -wal."""
    path, cut = tmp_path / "referee.db", tmp_path / "cut"
    cut.mkdir()
    with Store.open(path) as daemon:
        game = daemon.new_game(Settings(players=2), lobby=False)
        for inp in (Press(2, 0), Verdict(True, NS_PER_S)):
            daemon.append(game, inp)
        for name in ("referee.db", "referee.db-wal"):
            (cut / name).write_bytes((tmp_path / name).read_bytes())
    assert (cut / "referee.db-wal").stat().st_size > 0
    for opener in (Store.open_readonly, Store.open):
        with opener(cut / "referee.db") as store:
            stored = store.latest_game()
        assert stored is not None
        assert stored.inputs == (Press(2, 0), Verdict(True, NS_PER_S))


def test_append_refuses_what_would_not_read_back(tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        game = store.new_game(Settings(), lobby=True)
        ledger = Ledger(store, game)
        for bad in (Press(0, 5), Press(1, -1), Tick(1.5)):
            with pytest.raises(ValueError, match="would not read back"):
                store.append(game, bad)
            with pytest.raises(ValueError, match="would not read back"):
                ledger.append(bad)
        assert ledger.pending == 0
        with pytest.raises(ValueError, match="no game 99"):
            store.append(99, Press(1, 5))
        stored = store.latest_game()
    assert stored is not None
    assert stored.inputs == ()


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE inputs SET words = 'jump 3'", r"game 1, input 1 \('jump 3'\): unknown input"),
        ("UPDATE inputs SET words = ''", r"game 1, input 1 \(''\)"),
        ("UPDATE games SET settings = '{\"players\": 9}'", "game 1: bad settings"),
        ("UPDATE games SET settings = '[1, 2]'", "game 1: bad settings"),
        (
            "UPDATE games SET settings = '{\"players\": 1e999}'",
            r"game 1: bad settings '\{\"players\": 1e999\}': players: must be a whole number",
        ),
        (
            'UPDATE games SET settings = \'{"players": 1' + "0" * 30 + "}'",
            "game 1: bad settings .*: players: must be a whole number of seats, 2 to 8",
        ),
        (
            'UPDATE games SET settings = \'{"pointout_s": 1' + "0" * 400 + "}'",
            r"game 1: bad settings '\{\"pointout_s\": 10+\.\.\.: pointout_s: must be seconds",
        ),
        (
            'UPDATE games SET settings = \'{"dealer_plays": "no"}\'',
            "game 1: bad settings .*: dealer_plays: must be true or false",
        ),
        (  # the text a script writes for a value is no value of a store's JSON
            'UPDATE games SET settings = \'{"dealer_plays": "false"}\'',
            "game 1: bad settings .*: dealer_plays: must be true or false",
        ),
        (
            'UPDATE games SET settings = \'{"players": "3"}\'',
            "game 1: bad settings .*: players: must be a whole number of seats",
        ),
        (
            "UPDATE games SET settings = '" + "[" * 99_999 + "'",
            r"game 1: .*\.\.\.: nested too deep",
        ),
        ("UPDATE games SET settings = X'7B7D'", r"game 1: bad settings b'\{\}': not a JSON object"),
        (
            """UPDATE games SET settings = '{"a\\nb": 1}'""",
            r"game 1: bad settings .*: 'a\\nb': unknown key \(known: rules,",
        ),
        ("UPDATE games SET started_at = 'lunchtime'", "game 1: bad start time"),
    ],
)
def test_a_damaged_row_is_named(tmp_path, sql, message):
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        store.append(store.new_game(Settings(), lobby=True), Press(1, 0))
    raw(path, sql)
    with Store.open_readonly(path) as store, pytest.raises(StoreError, match=f"{path}: {message}"):
        store.latest_game()


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(10**15, 10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(["no", "false", "true", "super", "solo", "official", "solitaire", ""])
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
RULE_OBJECTS = st.dictionaries(
    st.sampled_from(list(RULE_KEYS)) | st.text(max_size=8), JSON_VALUES, max_size=5
)
UNIT_OF = {"pointout_s": NS_PER_S, "tie_ms": NS_PER_MS, "super_s": NS_PER_S}


def _read_exactly(settings: Settings, given: dict) -> None:
    """Every key the JSON gives reads as that very value (a time to the nanosecond, its
    decimal digits rounded half up)."""
    read = settings_values(settings)
    for name, value in given.items():
        if name in UNIT_OF:
            ns = {"pointout_s": settings.pointout_ns, "tie_ms": settings.tie_ns}
            ns["super_s"] = settings.super_ns
            exact = (Decimal(repr(value)) * UNIT_OF[name]).to_integral_value(ROUND_HALF_UP)
            assert type(value) in (int, float) and ns[name] == exact
        else:
            assert type(read[name]) is type(value) and read[name] == value, name


@settings(max_examples=80)
@given(column=RULE_OBJECTS.map(json.dumps) | st.text(max_size=20))
def test_any_settings_column_is_read_exactly_or_refused_in_one_line(shared_store, column):
    game = shared_store.new_game(Settings(), lobby=True)
    writer(shared_store).execute("UPDATE games SET settings = ? WHERE id = ?", (column, game))
    try:
        stored = shared_store.game(game)
    except StoreError as err:
        assert str(err).startswith(f"{shared_store.path}: game {game}: bad settings ")
        assert "\n" not in str(err)
        return
    given = json.loads(column)
    assert isinstance(given, dict)
    _read_exactly(stored.settings, given)


def test_the_ledger_keeps_order_through_a_full_disk(tmp_path, caplog):
    path = tmp_path / "referee.db"
    store = Store.open(path)
    game = store.new_game(Settings(players=8), lobby=False)
    ledger = Ledger(store, game)
    assert ledger.append(Press(1, 0))
    assert (ledger.trouble, ledger.pending) == (None, 0)
    # SQLite's own limit: once the file has as many pages as it has now, writes fail
    # exactly as they do on a full disk (SQLITE_FULL).
    writer(store).execute("PRAGMA max_page_count = 1")
    sent = [Press(1, 0)]
    caplog.set_level(logging.INFO, logger="referee.store.ledger")
    for n in range(1, 2000):
        sent.append(Press(n % 8 + 1, n * 1000))
        if not ledger.append(sent[-1]):
            break
    else:
        pytest.fail("the page limit never filled the file")
    assert (ledger.pending, ledger.trouble) == (
        1,
        "storage trouble: disk full, 1 input not yet saved",
    )
    for t in (1, 2):
        sent.append(Verdict(True, sent[-1].t_ns + t))
        assert not ledger.append(sent[-1])
    assert ledger.trouble == "storage trouble: disk full, 3 inputs not yet saved"
    assert not ledger.flush()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # when the trouble started, not on every retry
    assert str(path) in warnings[0].getMessage()
    assert "full" in warnings[0].getMessage()

    writer(store).execute("PRAGMA max_page_count = 1000000")
    assert ledger.flush()
    assert (ledger.pending, ledger.trouble) == (0, None)
    assert caplog.records[-1].levelno == logging.INFO
    assert "storage trouble over" in caplog.records[-1].getMessage()
    sent.append(Undo(sent[-1].t_ns + 1))
    assert ledger.append(sent[-1])
    store.close()
    with Store.open_readonly(path) as reader:
        stored = reader.latest_game()
    assert stored is not None
    assert list(stored.inputs) == sent


def batches_written(store):
    """The batches of inputs the store is asked to write, and an Event set as each begins."""
    batches, began = [], threading.Event()
    append = store._append

    def appending(game_id, batch):
        batches.append([stored.words for stored in batch])
        began.set()
        append(game_id, batch)

    store._append = appending
    return batches, began


def test_written_behind_the_inputs_that_waited_go_together_in_order(tmp_path, monkeypatch):
    # The hand-over's bound is the box's 5 ms; a loaded machine's scheduler may take longer
    # to wake the writer, which is still woken: here the hand-over waits until it is.
    monkeypatch.setattr(ledger_module, "HANDOFF_S", 20.0)
    path = tmp_path / "referee.db"
    with Store.open(path) as store:
        ledger = Ledger(store, store.new_game(Settings(players=8), lobby=False))
        told = threading.Event()
        ledger.write_behind(told.set)
        batches, began = batches_written(store)
        with writes_held(path):
            assert not ledger.append(Press(1, 0))  # queued: append never waits for the disk
            ledger.hand_over()
            assert not ledger._idle  # the writer's thread is awake for it
            assert began.wait(20)  # the writer took it, and waits in the commit
            for n in (2, 3, 4):
                ledger.append(Press(n, n))
            assert (ledger.pending, ledger.saved, ledger.trouble) == (4, 0, None)
        ledger.close()  # once its writes are done
        assert batches == [["press 1"], ["press 2", "press 3", "press 4"]]  # group commit
        assert (ledger.pending, ledger.saved) == (0, 4)
        assert not told.is_set()  # no trouble to tell
    with Store.open_readonly(path) as reader:
        stored = reader.latest_game()
    assert stored is not None
    assert stored.inputs == tuple(Press(n, 0 if n == 1 else n) for n in (1, 2, 3, 4))


def test_written_behind_trouble_is_told_and_the_inputs_wait_in_order(tmp_path):
    path = tmp_path / "referee.db"
    store = Store.open(path)
    ledger = Ledger(store, store.new_game(Settings(players=8), lobby=False))
    told = threading.Event()
    ledger.write_behind(told.set)
    writer(store).execute("PRAGMA max_page_count = 1")  # full, as in the test above
    # More than the pages hold, and more than one write takes.
    sent = [Press(n % 8 + 1, n * 1000) for n in range(BATCH_MAX + 500)]
    for inp in sent:
        ledger.append(inp)
    assert told.wait(20)  # from the writer's thread, for the screen
    assert ledger.trouble is not None and ledger.trouble.startswith("storage trouble: disk full")
    ledger.close()  # the writer stopped, its inputs still waiting
    assert ledger.pending > 0
    sent.append(Verdict(True, sent[-1].t_ns + 1))
    assert not ledger.append(sent[-1])  # the disk still full: it waits behind the others
    writer(store).execute("PRAGMA max_page_count = 1000000")
    told.clear()
    ledger.write_behind(told.set)
    assert told.wait(20)  # the trouble is over: told once every waiting input is written
    ledger.close()
    assert (ledger.trouble, ledger.pending, ledger.saved) == (None, 0, len(sent))
    store.close()
    with Store.open_readonly(path) as reader:
        stored = reader.latest_game()
    assert stored is not None
    assert list(stored.inputs) == sent


def test_default_path_is_systemds_state_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("STATE_DIRECTORY", f"{tmp_path}/state:{tmp_path}/other")
    assert default_store_path() == tmp_path / "state" / "referee.db"


def test_default_path_elsewhere_is_the_users_data_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_store_path() == platformdirs.user_data_path("referee") / "referee.db"
    assert default_store_path().is_relative_to(tmp_path)


def test_state_prints_what_replay_prints(tmp_path, capsys):
    path = tmp_path / "referee.db"
    script_path = SCENARIOS / "super_round_valid.txt"
    played(path, script_path)
    assert main(["replay", str(script_path)]) == 0
    replayed = capsys.readouterr().out
    assert main(["state", "--store", str(path)]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (replayed, "")
    assert json.loads(out)["phase"] == "open"


def test_state_reads_the_default_store(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path))
    played(tmp_path / "referee.db", VALID_CALL)
    assert main(["state"]) == 0
    assert json.loads(capsys.readouterr().out)["bank"] == 2


@pytest.mark.parametrize(
    ("prepare", "message"),
    [
        (lambda path: None, "no such file"),
        (
            lambda path: path.write_text("players = 4\n"),
            "not an SQLite database, so not a referee store",
        ),
        (lambda path: path.touch(), "no game in this store yet"),
        (lambda path: Store.open(path).close(), "no game in this store yet"),
        (
            lambda path: (played(path, VALID_CALL), raw(path, "PRAGMA user_version = 7")),
            f"store schema version 7 is newer than this referee knows ({SCHEMA_VERSION}):"
            " upgrade referee",
        ),
    ],
    ids=["missing", "not-a-database", "empty-file", "no-game", "newer"],
)
def test_state_errors_are_one_line_naming_the_file(tmp_path, capsys, prepare, message):
    path = tmp_path / "referee.db"
    prepare(path)
    assert main(["state", "--store", str(path)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"{path}: {message}\n")
