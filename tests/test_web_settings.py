"""The next game's rules and a new game from the page (docs/web.md, "Settings", "New
game"): through the daemon's control socket to a real App (its loop in a thread), the
settings file's checks and words, who may, and a judge's phone in a real browser."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from referee.config import ConfigError, default_config, load_config
from referee.rules import NS_PER_S, Phase, RuleSet, Settings
from referee.store.paths import pin_path
from referee.store.pin import ensure_pin, read_pin
from referee.web.server import create_app

from .conftest import ROOT, SAME, also_suppressed
from .daemon import Daemon
from .test_web import served, sign_in


def test_the_settings_are_open_to_read_the_game_s_and_the_next(client):
    answer = client.get("/api/settings")
    assert answer.status_code == 200
    body = answer.json()
    assert body["game"] == {"id": 1, "settings": body["next"]}
    assert body["next"]["pointout_s"] == 10.0 and body["trouble"] is None
    assert set(body["from"].values()) == {"file"}
    assert [k["key"] for k in body["keys"]][:3] == ["rules", "players", "pointout_s"]
    assert body["keys"][0]["choices"] == ["super", "official", "solo", "solitaire"]
    words = [k["words"] for k in body["keys"]]  # each in words, not the file's raw key
    assert words[2] == "Seconds to show a SET" and not [w for w in words if "_" in w]


def test_rules_set_on_the_phone_are_the_next_games_and_survive_a_restart(judge, store):
    daemon = Daemon(store)
    try:
        answer = judge.post("/api/settings", json={"pointout_s": 5, "deals": 3}, headers=SAME)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["next"]["pointout_s"] == 5.0 and body["next"]["deals"] == 3
        assert body["from"]["pointout_s"] == body["from"]["deals"] == "phone"
        assert body["game"]["settings"]["pointout_s"] == 10.0  # a started game keeps its own
        app = daemon.app
        assert app.session.rules.pointout_ns == 5 * NS_PER_S
        assert app.session.settings.pointout_ns == 10 * NS_PER_S
        # The table is told: the message, and the notice of what the next game differs in
        # (tie_ms too: never below the keyboard's 8 ms).
        assert "a phone set the next game's rules: pointout_s 5.0, deals 3" in app.messages
        notice = "the next game: pointout_s 5.0, tie_ms 8.0, deals 3"
        assert notice in [n.text for n in app.notices()]
        daemon.wait_for(lambda: "deals 3" in daemon.screen.getvalue(), "shown on the terminal")
    finally:
        daemon.stop()
    restarted = Daemon(store)  # the rules a phone set are the store's, not the file's
    try:
        assert restarted.app.requests.next_rules.settings.pointout_ns == 5 * NS_PER_S
        assert restarted.app.requests.next_rules.phone == {"pointout_s": 5.0, "deals": 3}
    finally:
        restarted.stop()


@pytest.mark.parametrize(
    ("values", "said"),
    [
        (
            {"pointout_s": -1},
            "[rules] pointout_s: must be seconds to show a SET: 0 for no limit, else 0.001 to"
            " 86400 (a day); got -1",
        ),
        (
            {"pointout_s": 1e-10},
            "[rules] pointout_s: must be seconds to show a SET: 0 for no limit, else 0.001 to"
            " 86400 (a day); got 1e-10",
        ),
        ({"players": 9}, "[rules] players: must be a whole number of seats, 2 to 8 (1 for solo"),
        (
            {"rules": "house"},
            '[rules] rules: must be super, official, solo or solitaire; got "house"',
        ),
        ({"rules": "solo", "players": 3}, "[rules] players: rules=solo needs players=1; got 3"),
        ({"tie_ms": "5"}, '[rules] tie_ms: must be milliseconds, 0 to 86400000 (a day); got "5"'),
        ({"listen": "0.0.0.0:80"}, "[rules] listen: unknown key; it belongs in [web] (known:"),
        ({"player": 3}, "[rules] player: unknown key; did you mean players? (known:"),
    ],
)
def test_a_rule_the_settings_file_would_refuse_is_refused_in_its_words(judge, values, said):
    answer = judge.post("/api/settings", json=values, headers=SAME)
    assert answer.status_code == 400 and answer.json()["error"].startswith(said)


def test_the_same_words_as_the_settings_file(tmp_path, judge):
    """A key the phone sends is checked as the file's [rules] with it is: the same line."""
    file = tmp_path / "referee.toml"
    file.write_text('[rules]\nrules = "solo"\nplayers = 3\n')
    with pytest.raises(ConfigError) as refused:
        load_config(file)
    answer = judge.post("/api/settings", json={"rules": "solo", "players": 3}, headers=SAME)
    assert str(refused.value) == f"{file}:3: {answer.json()['error']}"


def test_writes_need_the_pin_and_the_pages_own_origin(client, store, daemon):
    assert client.post("/api/settings", json={"pointout_s": 5}, headers=SAME).status_code == 401
    assert client.post("/api/newgame", json={}, headers=SAME).status_code == 401
    client.post("/api/login", json={"pin": read_pin(pin_path(store))}, headers=SAME)
    evil = {"Origin": "http://evil.example"}
    assert client.post("/api/settings", json={"pointout_s": 5}, headers=evil).status_code == 403
    assert client.post("/api/newgame", json={}, headers=evil).status_code == 403
    assert daemon.app.requests.next_rules.phone == {}


def test_a_new_game_only_once_the_game_is_over(judge, daemon):
    answer = judge.post("/api/newgame", json={}, headers=SAME)
    assert (answer.status_code, answer.json()) == (
        409,
        {"error": "a game is under way: end it at the box first (UNDO held 3 s)"},
    )
    judge.post("/api/settings", json={"rules": "official", "deals": 2}, headers=SAME)
    daemon.press("END")
    daemon.wait_for(lambda: daemon.app.session.state.phase is Phase.OVER, "the game ended")
    answer = judge.post("/api/newgame", json={}, headers=SAME)
    assert answer.status_code == 200 and answer.json()["game"]["id"] == 2
    assert answer.json()["phase"] == "lobby" and answer.json()["rules"] == "official"
    assert daemon.app.session.settings.deals == 2  # the phone's rules, the new game's
    assert "a phone started a new game: game 2" in daemon.app.messages
    answer = judge.post("/api/newgame", json={}, headers=SAME)
    assert (answer.status_code, answer.json()["error"]) == (
        409,
        "this game has not started yet: it is a new game already",
    )


def test_the_lobby_takes_the_phones_rules_at_once(tmp_path):
    path = tmp_path / "referee.db"
    running = Daemon(path)  # a new store: a game in the lobby
    try:
        ensure_pin(pin_path(path))
        with TestClient(create_app(path, pin_path(path), rules=Settings(players=4))) as client:
            client.post("/api/login", json={"pin": read_pin(pin_path(path))}, headers=SAME)
            answer = client.post("/api/settings", json={"rules": "solo"}, headers=SAME)
            assert answer.status_code == 200
            assert answer.json()["game"]["settings"]["rules"] == "solo"  # kept in the ledger
            assert running.app.session.settings.rules is RuleSet.SOLO
            assert running.app.session.settings.players == 1
            said = "a phone set this game's rules: rules solo, players 1"
            assert said in running.app.messages
            running.wait_for(lambda: "rules solo" in running.screen.getvalue(), "shown")
    finally:
        running.stop()


def test_without_a_daemon_a_good_change_is_503_and_a_bad_one_400(judge):
    answer = judge.post("/api/settings", json={"pointout_s": 5}, headers=SAME)
    assert (answer.status_code, answer.json()) == (503, {"error": "the referee is not running"})
    assert judge.post("/api/settings", json={"pointout_s": -5}, headers=SAME).status_code == 400
    assert judge.post("/api/newgame", json={}, headers=SAME).status_code == 503
    answer = judge.post("/api/newgame", json={"now": True}, headers=SAME)
    assert (answer.status_code, answer.json()) == (
        400,
        {"error": 'unknown key "now": a new game takes none'},
    )


# What a hostile client can send: any JSON object, as the body or as a key's value.
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
KEYS = st.sampled_from(["rules", "players", "pointout_s", "tie_ms", "deals", "x"]) | st.text(
    max_size=12
)


@settings(
    max_examples=150, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)
@given(body=st.dictionaries(KEYS, JSON, max_size=4))
def test_any_change_is_an_answer_or_a_one_line_refusal_never_a_traceback(judge, body):
    """Without a daemon: checked, and then 503; a refusal is one line that says where."""
    answer = judge.post(
        "/api/settings",
        content=json.dumps(body).encode(),
        headers={**SAME, "Content-Type": "application/json"},
    )
    assert answer.status_code in (400, 503), answer.text
    error = answer.json()["error"]
    assert "\n" not in error and (answer.status_code == 503 or error.startswith("[rules]"))


# In a real browser: Debian's Chromium, never one downloaded (docs/web.md)


SIZES = [(390, 844), (1920, 1080)]  # a phone, a TV


def test_a_judge_sets_the_next_games_rules_and_starts_it_in_a_browser(store, tmp_path, browser):
    """Settings changed on the phone with the PIN reach the daemon's next game; without
    the PIN they are refused; a new game from the phone. Its screenshots go to
    docs/screens/ when REFEREE_SCREENS says so (`make screens`), else beside the test."""
    shots = ROOT / os.environ["REFEREE_SCREENS"] if "REFEREE_SCREENS" in os.environ else tmp_path
    daemon = Daemon(store)
    (host, port), stop = served(store, rules=default_config().game)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_selector("#call >> text=P2", timeout=5000)
        assert page.locator("#next").is_hidden()  # no PIN: no settings to change
        refused = page.evaluate(
            """fetch("/api/settings", {method: "POST", body: '{"pointout_s": 5}',
                 headers: {"Content-Type": "application/json"}}).then((r) => r.status)"""
        )
        assert refused == 401 and daemon.app.requests.next_rules.phone == {}
        sign_in(page, store)
        page.wait_for_selector("#rule-fields [name=pointout_s]", timeout=5000)
        page.fill("#rule-fields [name=pointout_s]", "5")
        page.fill("#rule-fields [name=tie_ms]", "20")
        page.click("#rules button[type=submit]")
        page.wait_for_selector("#ruled >> text=saved: from the next game", timeout=5000)
        assert daemon.app.requests.next_rules.settings.pointout_ns == 5 * NS_PER_S
        assert daemon.app.session.settings.pointout_ns == 10 * NS_PER_S  # this game's
        assert page.locator("#rule-fields .differs").count() == 2
        # In words, the file's name for each where a pointer rests; and this game's value.
        pointout = page.locator("#rule-fields [data-key=pointout_s]")
        said = pointout.locator(".key").inner_text()
        assert said == "Seconds to show a SET · set on a phone ≠ this game: 10"
        assert pointout.get_attribute("title") == "pointout_s in the settings file's [rules]"
        keys = page.locator("#rule-fields .key").all_inner_texts()
        assert not [k for k in keys if "_" in k], keys  # no raw key where words go
        # At a phone's size and a TV's, as the other views' screenshots: the screen as
        # it is seen, from the rules on (above them, the names, the hint and the photo).
        widths = []
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.locator("#next").evaluate("(e) => e.scrollIntoView({block: 'start'})")
            box = page.locator("#rules button[type=submit]").bounding_box()
            assert box is not None and box["y"] + box["height"] <= height  # saving shown
            widths.append(box["width"])
            page.screenshot(path=str(shots / f"web-settings-{width}x{height}.png"))
        # On a TV the page grows with it, not a phone's column in the middle.
        assert widths[1] >= 1.3 * widths[0], widths
        page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
        page.click("#newgame")
        page.wait_for_selector("#newgamed >> text=end it at the box first", timeout=5000)
        daemon.press("END")
        page.wait_for_selector("#title >> text=game over", timeout=5000)
        page.click("#newgame")
        page.wait_for_selector("#newgamed >> text=game 2 is in its lobby", timeout=5000)
        page.wait_for_selector("#title >> text=lobby", timeout=5000)
        assert daemon.app.session.settings == daemon.app.requests.next_rules.settings
        assert daemon.app.session.settings.pointout_ns == 5 * NS_PER_S
        assert page.locator("#rule-fields .differs").count() == 0  # the lobby took them
    finally:
        page.close()  # its event stream, before the server stops
        stop()
        daemon.stop()
