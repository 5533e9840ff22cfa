"""The history, the stats and the exports over HTTP (docs/web.md): against a real store of
games of every rule set, played through the engine, and with every hostile id and query
refused with a 4xx in JSON."""

import asyncio
import csv
import io
import os
import platform
import shutil
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from referee import cli
from referee.history.export import CALL_COLUMNS, GAME_COLUMNS, STATS_COLUMNS, as_csv, as_json
from referee.linux import allocator
from referee.rules import Press, Settings, parse_script
from referee.store.paths import pin_path
from referee.store.pin import ensure_pin
from referee.store.store import Store
from referee.units import NS_PER_MS
from referee.web import history_api
from referee.web.server import create_app
from referee.web.worker import Worker
from tests.conftest import ROOT
from tests.rules.test_timeline import OFFICIAL_GAME, SUPER_GAME
from tests.tables import table_game
from tests.test_web import served

SOLITAIRE_LOST = "config players=1 rules=solitaire sudden_death=true\n0 press 1\n1 valid\n2 super\n"
SOLO = "config players=1 rules=solo pointout_s=0\n0 press 1\n1 valid\n6 end\n"
LOBBY = "0 press 1\n1 press 2\n"  # nobody has started it
SCRIPTS = [SUPER_GAME, OFFICIAL_GAME, SOLITAIRE_LOST, SOLO, LOBBY]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("history") / "referee.db"
    with Store.open(path) as opened:
        for text in SCRIPTS:
            script = parse_script(text)
            inputs = [inp for _, inp in script.inputs]
            opened.new_game(script.settings, lobby=script.lobby, inputs=inputs)
    return path


@pytest.fixture(scope="module")
def client(store):
    ensure_pin(pin_path(store))
    with TestClient(create_app(store, pin_path(store))) as client:
        yield client


def test_the_games_newest_first_a_page_at_a_time(client):
    first = client.get("/api/games?limit=2")
    assert first.status_code == 200
    body = first.json()
    assert [g["id"] for g in body["games"]] == [5, 4] and body["next"] == 4
    rest = client.get(f"/api/games?before={body['next']}").json()
    assert [g["id"] for g in rest["games"]] == [3, 2, 1] and rest["next"] is None
    super_game, official = rest["games"][2], rest["games"][1]
    assert super_game["rules"] == "super" and super_game["phase"] == "over"
    assert super_game["players"] == [
        {"seat": 1, "player": "P1", "points": 0, "place": 2, "won": False},
        {"seat": 2, "player": "P2", "points": 4, "place": 1, "won": True},
        {"seat": 3, "player": "P3", "points": 0, "place": 2, "won": False},
    ]
    assert (super_game["calls"], super_game["super_rounds"], super_game["at_ms"]) == (5, 2, 35000)
    assert [p["points"] for p in official["players"]] == [-1, 1]
    assert rest["games"][0]["result"] == "lost"
    lobby = body["games"][0]
    assert lobby["phase"] == "lobby" and [p["seat"] for p in lobby["players"]] == [1, 2]


def test_a_game_is_its_calls_super_rounds_and_scores_through_it(client):
    game = client.get("/api/games/1").json()
    assert game["game"]["id"] == 1
    calls = game["calls"]
    assert [c["call"] for c in calls] == [1, 2, 3, 4, 5]
    assert calls[0] == {
        "call": 1,
        "at_ms": 1000,
        "callers": [2],
        "presses": [[2, 0], [3, 4]],
        "verdicts": ["valid"],
        "super": False,
        "seen": None,
        "judged": [{"seat": 2, "verdict": "valid", "at_ms": 2000, "points": 1}],
    }
    assert calls[2]["judged"] == [{"seat": 1, "verdict": "invalid", "at_ms": 10000, "points": 0}]
    assert [c["super"] for c in calls] == [False, False, False, True, True]
    won, timed_out = game["super_rounds"]
    assert won == {
        "opened_ms": 12000,
        "flip_ms": 13000,
        "participants": [2, 3],
        "winner": 2,
        "end": "won",
        "ended_ms": 16500,
        "paid": [],
    }
    assert (timed_out["end"], timed_out["ended_ms"], timed_out["winner"]) == (
        "time up",
        31000,
        None,
    )
    assert game["scores"] == [
        {"at_ms": 0, "points": [0, 0, 0]},
        {"at_ms": 2000, "points": [0, 1, 0]},
        {"at_ms": 6000, "points": [0, 1, 1]},
        {"at_ms": 15000, "points": [0, 1, 0]},
        {"at_ms": 16500, "points": [0, 4, 0]},
    ]


# Worked out by hand from the five games: the super game (P2 won, a super round each to
# P2, lost by P3 and by P1), the official one (P2 won, P1's timeout), solitaire lost by
# sudden death, solo (a score, never a win), and a lobby nobody started.
STATS = [
    ["P1", 4, 0, 2, 2, 0, 1, None],
    ["P2", 2, 2, 3, 0, 1, 0, 7.0],  # margins 4 ms and 10 ms
    ["P3", 1, 0, 1, 1, 0, 1, None],
]


def test_the_stats_of_every_player(client):
    body = client.get("/api/stats").json()
    assert body["games"] == 4
    got = [[p[c] for c in STATS_COLUMNS] for p in body["players"]]
    assert got == STATS
    p1 = body["players"][0]
    assert [(one["game"], one["sets"], one["mistakes"], one["won"]) for one in p1["series"]] == [
        (1, 0, 1, False),
        (2, 0, 1, False),
        (3, 1, 0, False),
        (4, 1, 0, False),
    ]
    assert all(one["started_at"] for one in p1["series"])


def test_the_stats_are_added_up_on_the_reading_thread(client, monkeypatch):
    # Thousands of games take the loop's time, which the live page's streams need.
    threads = []
    real = history_api.stats_json

    def added_up(*args):
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(history_api, "stats_json", added_up)
    assert client.get("/api/stats").status_code == 200
    assert len(threads) == 1 and threads[0].startswith("reader")


def test_what_a_job_freed_is_given_back_to_the_system_after_it(monkeypatch):
    if platform.libc_ver()[0] == "glibc":
        assert allocator._MALLOC_TRIM is not None
    trims = []
    monkeypatch.setattr(allocator, "_MALLOC_TRIM", trims.append)

    async def job_then_trim() -> bool:
        reader = Worker()
        try:
            return await reader.run(lambda: not trims)
        finally:
            reader.close()

    assert asyncio.run(job_then_trim()) and trims == [0]


def read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return list(reader.fieldnames or []), list(reader)


def as_csv_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


@pytest.mark.parametrize(
    ("name", "columns"),
    [("games", GAME_COLUMNS), ("calls", CALL_COLUMNS), ("stats", STATS_COLUMNS)],
)
def test_each_export_is_a_csv_file_and_its_json_twin_the_same_rows(client, name, columns):
    answer = client.get(f"/api/export/{name}.csv")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    assert answer.headers["content-disposition"] == f'attachment; filename="referee-{name}.csv"'
    header, rows = read_csv(answer.text)
    assert header == list(columns)
    twin = client.get(f"/api/export/{name}.json")
    assert twin.headers["content-disposition"] == f'attachment; filename="referee-{name}.json"'
    assert rows == [{c: as_csv_text(row[c]) for c in columns} for row in twin.json()["rows"]]
    assert rows


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_the_games_export_is_sent_a_few_games_a_piece(client, monkeypatch, kind):
    whole = client.get(f"/api/export/games.{kind}").content
    monkeypatch.setattr(history_api, "EXPORT_GAMES", 2)  # 5 games: pieces of 2, 2 and 1
    assert client.get(f"/api/export/games.{kind}").content == whole
    if kind == "json":
        assert whole.decode() == as_json(client.get("/api/export/games.json").json()["rows"])


def test_the_exports_say_what_the_history_says(client):
    games = client.get("/api/export/games.json").json()["rows"]
    assert [(r["game"], r["player"], r["points"], r["won"]) for r in games[:3]] == [
        (1, "P1", 0, False),
        (1, "P2", 4, True),
        (1, "P3", 0, False),
    ]
    stats = client.get("/api/export/stats.json").json()["rows"]
    assert [[r[c] for c in STATS_COLUMNS] for r in stats] == STATS
    calls = client.get("/api/export/calls.json").json()
    first = [r for r in calls["rows"] if (r["game"], r["call"]) == (1, 1)]
    assert first == [
        {
            "game": 1,
            "call": 1,
            "at_ms": 1000,
            "super": False,
            "seat": 2,
            "player": "P2",
            "press_ms": 0,
            "turn": 1,
            "verdict": "valid",
            "verdict_ms": 2000,
            "points": 1,
            "margin_ms": 4,
        },
        {
            "game": 1,
            "call": 1,
            "at_ms": 1000,
            "super": False,
            "seat": 3,
            "player": "P3",
            "press_ms": 4,
            "turn": None,
            "verdict": None,
            "verdict_ms": None,
            "points": None,
            "margin_ms": None,
        },
    ]
    assert calls["next"] is None


def test_the_calls_export_goes_a_page_of_games_at_a_time(client):
    page = client.get("/api/export/calls.csv?limit=4")
    assert page.headers["link"] == '</api/export/calls.csv?before=2>; rel="next"'
    assert {r["game"] for r in read_csv(page.text)[1]} == {"2", "3", "4"}  # 5: no calls
    rest = client.get("/api/export/calls.json?before=2&limit=4").json()
    assert {r["game"] for r in rest["rows"]} == {1} and rest["next"] is None
    assert "link" not in client.get("/api/export/calls.csv?before=2").headers


def test_a_large_store_is_counted_a_budget_a_request(store, tmp_path, monkeypatch):
    monkeypatch.setattr(history_api, "COUNT_BUDGET", 2)
    # A copy: beside the module's store is the cache of its counted games.
    copied = Path(shutil.copy(store, tmp_path / store.name))
    with TestClient(create_app(copied, pin_path(copied))) as fresh:
        answers = [fresh.get("/api/stats") for _ in range(3)]
    assert [a.status_code for a in answers] == [503, 503, 200]
    assert answers[0].json() == {"error": "counting the games: 2 of 5 so far; ask again"}
    assert answers[0].headers["retry-after"] == "2"
    assert answers[1].json()["error"].startswith("counting the games: 4 of 5")


def test_no_store_is_a_503_that_says_why(tmp_path):
    missing = tmp_path / "none.db"
    ensure_pin(pin_path(missing))
    with TestClient(create_app(missing, pin_path(missing))) as client:
        for path in ("/api/games", "/api/games/1", "/api/stats", "/api/export/games.csv"):
            answer = client.get(path)
            assert (answer.status_code, answer.json()) == (503, {"error": "no such file"})


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/games/6", 404, "no game 6 in this store"),
        ("/api/games/9223372036854775807", 404, "no game 9223372036854775807 in this store"),
        ("/api/games/9223372036854775808", 400, "a game's id must be a whole number"),
        ("/api/games/0", 400, "a game's id must be a whole number from 1 to"),
        ("/api/games/-1", 400, "a game's id must be"),
        ("/api/games/1e3", 400, "a game's id must be"),
        ("/api/games/%D9%A3", 400, "got '٣'"),  # an Arabic-Indic three: a digit, not 0-9
        ("/api/games/" + "9" * 5000, 400, "got '999999999999999999999999...'"),
        ("/api/games?limit=101", 400, "limit must be a whole number from 1 to 100; got '101'"),
        ("/api/games?limit=0", 400, "limit must be a whole number from 1 to 100"),
        ("/api/games?limit=", 400, "limit must be"),
        ("/api/games?before=abc", 400, "before (a game's id) must be a whole number"),
        ("/api/games?before=1&before=2", 400, "before given twice"),
        ("/api/games?page=2", 400, "unknown parameter 'page': this route takes before and limit"),
        ("/api/stats?x", 400, "unknown parameter 'x': this route takes nothing"),
        ("/api/games/1?full=1", 400, "unknown parameter 'full'"),
        ("/api/export/games.csv?limit=1", 400, "unknown parameter 'limit'"),
        ("/api/export/games.xml", 404, "no such export: games, calls or stats, .csv or .json"),
        ("/api/export/../referee.pin", 404, None),
        ("/api/games/1/calls", 404, None),
        ("/api/games/", 404, None),
    ],
)
def test_a_bad_id_or_query_is_a_4xx_that_says_what_is_wrong(client, path, status, error):
    answer = client.get(path)
    assert answer.status_code == status
    if error is not None:
        assert error in answer.json()["error"]


ROUTES = ["/api/games", "/api/games/1", "/api/stats", "/api/export/calls.csv", "/api/export/x"]
QUERY = st.lists(
    st.tuples(
        st.sampled_from(["before", "limit", "x", "", "before[]"]),
        st.one_of(
            st.integers(-(2**70), 2**70).map(str),
            st.text(max_size=12),
            st.sampled_from(["", "1e3", "0x10", " 1", "1 ", "+1", "\u0661", "NaN", "%00"]),
        ),
    ),
    max_size=3,
)


@settings(max_examples=60)
@given(route=st.sampled_from(ROUTES), query=QUERY, game=st.text(max_size=30))
def test_any_query_or_id_is_an_answer_or_a_4xx_never_a_traceback(client, route, query, game):
    answers = [
        client.get(route, params=query),
        client.get("/api/games/" + quote(game, safe="")),
    ]
    for answer in answers:
        assert answer.status_code in (200, 400, 404), answer.text
        if answer.status_code != 200:
            assert set(answer.json()) == {"error"}
            assert "\n" not in answer.json()["error"]


def test_a_text_a_spreadsheet_would_run_is_kept_text_in_the_csv():
    rows = [{"player": name} for name in ("=1+1", "@SUM(A1)", "-2", "Ann", "+x")]
    _, read = read_csv(as_csv(["player"], rows))
    assert [r["player"] for r in read] == ["'=1+1", "'@SUM(A1)", "'-2", "Ann", "'+x"]


def test_every_route_is_in_the_contract(tmp_path):
    contract = (ROOT / "docs" / "web.md").read_text()
    api = history_api.HistoryApi(tmp_path / "referee.db", Worker())
    for route in api.routes:
        assert f"`GET {route.path.replace('{name}', 'games.csv')}" in contract, route.path


# In a real browser: Debian's Chromium, never one downloaded (docs/web.md)

SIZES = [(390, 844), (1920, 1080)]  # a phone, a TV


def test_the_history_and_the_stats_in_a_browser(tmp_path, browser):
    """Opens both views at a phone's size and a TV's, and saves their screenshots: to
    docs/screens/ when REFEREE_SCREENS says so (`make screens`), else beside the test."""
    shots = ROOT / os.environ["REFEREE_SCREENS"] if "REFEREE_SCREENS" in os.environ else tmp_path
    path = tmp_path / "referee.db"
    start = datetime(2025, 6, 1, 20, 0, tzinfo=UTC)
    with Store.open(path) as opened:
        for n, (s, seed) in enumerate([(Settings(players=4), 7), (Settings(players=3), 8)] * 3):
            inputs = table_game(s, seed + n, valid=0.9)
            opened.new_game(s, lobby=False, started_at=start + timedelta(days=n), inputs=inputs)
    (host, port), stop = served(path)
    try:
        for width, height in SIZES:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"http://{host}:{port}/#history")
            page.click(".gamecard >> text=#6")
            page.wait_for_selector("#events li", timeout=5000)
            page.wait_for_selector("#score-chart path", timeout=5000)
            assert page.locator("#score-chart path").count() == 3  # a line a player
            page.screenshot(path=str(shots / f"web-history-{width}x{height}.png"))
            page.goto(f"http://{host}:{port}/#stats")
            page.wait_for_selector("#stats-table td", timeout=5000)
            rows = page.locator("#stats-table tr").count()
            assert rows == 1 + 4  # the header, P1 to P4
            page.wait_for_selector("#stats-chart path", timeout=5000)
            lines = page.locator("#stats-chart path")
            assert lines.count() == 4  # a line a player
            # The player's SETs so far after each of their games: P1 to P3 sat in all
            # six, P4 in the three of four; each in its seat's colour.
            drawn = lines.evaluate_all("(ps) => ps.map((p) => p.getAttribute('d'))")
            assert [d.count("L") + 1 for d in drawn] == [6, 6, 6, 3]
            colours = lines.evaluate_all("(ps) => ps.map((p) => p.getAttribute('stroke'))")
            assert len(set(colours)) == 4
            sets = page.locator("#stats-table tr td:nth-child(4)").all_inner_texts()
            legend = page.locator("#stats-legend > span").all_inner_texts()
            assert len(sets) == 4 and [item.split()[-1] for item in legend] == sets
            ends = [float(d.rsplit(",", 1)[1]) for d in drawn]  # the top's y is least
            assert sorted(ends) == [ends[sets.index(n)] for n in sorted(sets, key=int)[::-1]]
            assert page.locator("#game").is_hidden()
            page.screenshot(path=str(shots / f"web-stats-{width}x{height}.png"))
            page.close()
    finally:
        stop()


def test_referee_history_lists_the_games_and_writes_the_same_csv(store, client, capsys):
    capsys.readouterr()
    assert cli.main(["history", "--store", str(store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["5", "4", "3", "2", "1"]
    assert lines[-1].endswith("super      over             P1 0, P2 4 (won), P3 0")
    for name in ("games", "calls", "stats"):
        assert cli.main(["history", "--store", str(store), "--csv", name]) == 0
        limit = "?limit=100" if name == "calls" else ""
        assert capsys.readouterr().out == client.get(f"/api/export/{name}.csv{limit}").text
    assert cli.main(["history", "--store", str(store.with_name("none.db"))]) == 2
    assert capsys.readouterr().err.strip().endswith("none.db: no such file")


def test_the_csv_exports_downloaded_in_a_browser_match_the_ledger(store, client, capsys, browser):
    """Each press of each call in calls.csv is a press the ledger kept, at its time; each
    player's points in games.csv are the state the ledger's inputs replay to; and both
    files are what `referee history --csv` writes."""
    (host, port), stop = served(store)
    page = browser.new_page(accept_downloads=True)
    try:
        page.goto(f"http://{host}:{port}/#stats")
        got = {}
        for name in ("games", "calls"):
            with page.expect_download() as downloading:
                page.click(f".exports >> text={name}.csv")
            got[name] = downloading.value.path().read_bytes().decode("utf-8")
    finally:
        page.close()
        stop()
    with Store.open_readonly(store) as ledger:
        games = {g.id: ledger.game(g.id) for g in ledger.games()}
    presses = {
        (game.id, inp.player, inp.t_ns)
        for game in games.values()
        for inp in game.inputs
        if isinstance(inp, Press)
    }
    _, calls = read_csv(got["calls"])
    assert calls
    for row in calls:
        t_ns = round((float(row["at_ms"]) + float(row["press_ms"])) * NS_PER_MS)
        assert (int(row["game"]), int(row["seat"]), t_ns) in presses, row
    _, rows = read_csv(got["games"])
    for game in games.values():
        state = game.state()
        points = {p.id: p.points for p in state.players}
        for row in (r for r in rows if int(r["game"]) == game.id and r["seat"]):
            assert int(row["points"]) == points[int(row["seat"])], row
    for name in ("games", "calls"):
        capsys.readouterr()
        assert cli.main(["history", "--store", str(store), "--csv", name]) == 0
        assert capsys.readouterr().out == got[name]


NAMED_LATER = {1: "Ann", 2: "Bob", 3: "Cat"}


@pytest.fixture
def renamed(tmp_path):
    """The super game played by unnamed seats, then a game whose seats are named: the
    live state's names are the later game's, never the first's."""
    path = tmp_path / "referee.db"
    with Store.open(path) as opened:
        script = parse_script(SUPER_GAME)
        opened.new_game(script.settings, lobby=False, inputs=[i for _, i in script.inputs])
        opened.new_game(Settings(players=3), lobby=False, names=NAMED_LATER)
    return path


def test_a_games_people_are_its_own_not_the_latest_games(renamed):
    with TestClient(create_app(renamed, pin_path(renamed))) as client:
        assert client.get("/api/state").json()["names"] == {"1": "Ann", "2": "Bob", "3": "Cat"}
        games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
        assert [p["player"] for p in games[1]["players"]] == ["P1", "P2", "P3"]
        assert [p["player"] for p in games[2]["players"]] == ["Ann", "Bob", "Cat"]
        old = client.get("/api/games/1").json()["game"]["players"]
        assert [p["player"] for p in old] == ["P1", "P2", "P3"]
        rows = client.get("/api/export/games.json").json()["rows"]
        assert {(r["game"], r["player"]) for r in rows if r["game"] == 1} == {
            (1, "P1"),
            (1, "P2"),
            (1, "P3"),
        }


def test_an_old_game_shows_its_own_people_in_a_browser(renamed, browser):
    (host, port), stop = served(renamed)
    try:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(f"http://{host}:{port}/")
        page.wait_for_selector("#board >> text=Ann", timeout=5000)  # the live names came
        page.goto(f"http://{host}:{port}/#history")
        page.wait_for_selector(".gamecard >> text=#1", timeout=5000)
        cards = page.locator(".gamecard .line").all_inner_texts()
        assert "Ann" in cards[0] and "P1" not in cards[0]  # game 2, the newest
        assert "P2" in cards[1] and not {"Ann", "Bob", "Cat"} & set(cards[1].split())
        page.click(".gamecard >> text=#1")
        page.wait_for_selector("#events li", timeout=5000)
        detail = page.locator("#detail").inner_text()
        assert "P2" in detail and not {"Ann", "Bob", "Cat"} & set(detail.split()), detail
    finally:
        stop()


def test_the_stats_chart_tells_names_from_seats_and_draws_one_game_as_a_point_in_a_browser(
    tmp_path, browser
):
    """P1 and P2 sat in one game, P3 in three, Ann and Bob (seats 1 and 2 named later) in
    two: five colours, none a name and a seat number share, and a point, not a line
    across the chart, for a player of one game."""
    path = tmp_path / "referee.db"
    three = Settings(players=3)
    with Store.open(path) as opened:
        for n, names in enumerate([{}, {1: "Ann", 2: "Bob"}, {1: "Ann", 2: "Bob"}]):
            inputs = table_game(three, 40 + n, valid=0.9)
            opened.new_game(three, lobby=False, inputs=inputs, names=names)
    (host, port), stop = served(path)
    try:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(f"http://{host}:{port}/#stats")
        page.wait_for_selector("#stats-chart circle", timeout=5000)
        players = [row.split()[0] for row in page.locator("#stats-table tr").all_inner_texts()[1:]]
        assert sorted(players) == ["Ann", "Bob", "P1", "P2", "P3"]
        lines = page.locator("#stats-chart path").evaluate_all(
            "(ps) => ps.map((p) => p.getAttribute('stroke'))"
        )
        points = page.locator("#stats-chart circle").evaluate_all(
            "(cs) => cs.map((c) => c.getAttribute('fill'))"
        )
        assert len(lines) == 3 and len(points) == 2  # Ann, Bob, P3; P1 and P2
        assert len(set(lines + points)) == 5
        legend = page.locator("#stats-legend > span > span > span").evaluate_all(
            "(ms) => ms.map((m) => getComputedStyle(m).color)"
        )
        assert len(set(legend)) == 5
    finally:
        stop()
