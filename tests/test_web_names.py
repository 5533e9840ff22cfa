"""Names from the page (docs/web.md, "Names"): POST /api/names through the daemon's
control socket to a real App (its loop run in a thread, as `referee run` runs it), the
known players, and every way a name request is refused."""

import pytest
from starlette.testclient import TestClient

from referee.store.paths import pin_path
from referee.store.pin import ensure_pin, read_pin
from referee.store.store import Store
from referee.web.server import create_app

from .conftest import SAME
from .test_web import served, sign_in


@pytest.fixture
def store(store):
    """The game under way, Dee at seat 4."""
    with Store.open(store) as opened:
        opened.name_seats(1, [(4, "Dee")])
    return store


def name(client, seat, name, headers=SAME):
    return client.post("/api/names", json={"seat": seat, "name": name}, headers=headers)


def test_a_name_typed_on_the_phone_is_on_the_box_and_in_the_state(judge, daemon):
    answer = name(judge, 2, "  Ann ")
    assert answer.status_code == 200
    assert answer.json()["names"] == {"2": "Ann", "4": "Dee"}  # the state, read once saved
    assert "Ann" in daemon.screen.getvalue()
    assert judge.get("/api/state").json()["names"] == {"2": "Ann", "4": "Dee"}
    assert judge.get("/api/players").json() == {"players": ["Ann", "Dee"]}


@pytest.mark.parametrize(
    ("seat", "typed", "status", "said"),
    [
        (5, "Eve", 409, "seat 5 is not at this table (seats 1 to 4)"),
        (1, "dee", 409, "Dee already sits at seat 4"),
        (9, "Eve", 400, "seat out of range: 1 to 8"),
        (1, "", 400, "a name cannot be empty"),
        (1, "x" * 25, 400, "a name is at most 24 characters (this one has 25)"),
        (1, "\u202eevE", 400, "a name cannot hold invisible characters (U+202E)"),
        (1, "\u3164", 400, "a name cannot hold invisible characters (U+3164)"),
        (1, "\u0301", 400, "a name needs something to see: a letter, a digit or a sign"),
        (
            1,
            "\uff30\uff16",  # full-width: NFKC reads it as P6
            400,
            "a name cannot be a seat's label (P6): it names a seat, not a player",
        ),
        (1, 7, 400, '"name" must be a string'),
        ("1", "Eve", 400, '"seat" must be a seat\'s number'),
    ],
)
def test_a_name_the_box_cannot_take_is_refused_with_why(judge, daemon, seat, typed, status, said):
    answer = name(judge, seat, typed)
    assert (answer.status_code, answer.json()) == (status, {"error": said})
    assert judge.get("/api/state").json()["names"] == {"4": "Dee"}


def test_names_need_the_session_and_the_pages_own_origin(client, store, daemon):
    assert name(client, 1, "Eve").status_code == 401
    client.post("/api/login", json={"pin": read_pin(pin_path(store))}, headers=SAME)
    assert name(client, 1, "Eve", headers={"Origin": "http://evil.example"}).status_code == 403
    assert "Eve" not in daemon.screen.getvalue()


def test_extra_keys_are_refused(judge):
    answer = judge.post("/api/names", json={"seat": 1, "name": "Eve", "op": "x"}, headers=SAME)
    assert answer.status_code == 400 and answer.json()["error"].startswith('unknown key "op"')


def test_without_a_daemon_a_name_is_503_and_the_players_still_read(judge):
    answer = name(judge, 1, "Eve")
    assert (answer.status_code, answer.json()) == (503, {"error": "the referee is not running"})
    assert judge.get("/api/players").json() == {"players": ["Dee"]}


def test_the_players_of_a_store_that_cannot_be_read_are_503(tmp_path):
    missing = tmp_path / "none.db"
    ensure_pin(pin_path(missing))
    with TestClient(create_app(missing, pin_path(missing))) as client:
        answer = client.get("/api/players")
        assert (answer.status_code, answer.json()) == (503, {"error": "no such file"})


# In a real browser: Debian's Chromium, never one downloaded (docs/web.md)


def test_a_name_typed_on_the_phone_shows_on_the_boxs_screen_in_a_browser(store, daemon, browser):
    (host, port), stop = served(store)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"http://{host}:{port}/")
        sign_in(page, store)
        page.select_option("#seat", "3")
        page.fill("#name", "Zoë")
        page.click("#naming button[type=submit]")
        daemon.wait_for(lambda: "Zoë" in daemon.screen.getvalue(), "on the box's screen")
        assert daemon.app.session.names[3] == "Zoë"
        page.wait_for_selector("#board >> text=Zoë", timeout=5000)  # and on the page
        assert page.locator("#named").inner_text() == "seat 3 is Zoë: on the box"
        assert page.locator("#name").input_value() == ""
        page.fill("#name", "dee")  # Dee sits at seat 4: refused, and why
        page.click("#naming button[type=submit]")
        page.wait_for_selector("#named >> text=Dee already sits at seat 4", timeout=5000)
    finally:
        page.close()
        stop()
