"""The camera's hint from the page (docs/web.md, "Hint"): POST /api/hint through the
daemon's control socket to a real App watching a folder of rendered tables
(tests/camera_frames.py), answered with what the box's screen says; refused as every write
is without the PIN's session or from another origin."""

import pytest

from referee.store.paths import pin_path
from referee.store.pin import read_pin
from referee.view import TableSeen

from .camera_frames import WAIT_S, flat, set_table, show
from .conftest import SAME
from .daemon import Daemon
from .test_web import served, sign_in

SET = "there is a SET"


@pytest.fixture
def seeing(store, frames):
    """The daemon watching a table of twelve cards with SETs, read; hint_where on."""
    show(frames, "sets.jpg", set_table(), mtime_ns=10**18)
    running = Daemon(store, camera=str(frames), hint_where=True)
    running.wait_for(
        lambda: running.app.watching.view() == TableSeen(12, 12, 3), "the table, read", WAIT_S
    )
    yield running
    running.stop()


def hint(client, headers=SAME, body=None):
    return client.post("/api/hint", json={} if body is None else body, headers=headers)


def test_a_hint_is_answered_as_the_box_says_it_and_asked_again_where(judge, seeing):
    answer = hint(judge)
    assert (answer.status_code, answer.json()) == (200, {"hint": SET})
    seeing.wait_for(lambda: f"> {SET}" in flat(seeing.shown()), "on the box's screen")
    where = hint(judge).json()["hint"]  # asked again within the 5 s: where, three cards
    assert where.startswith(f"{SET} · ") and where.count(",") == 2, where


def test_with_no_camera_the_page_is_told_so(judge, daemon):
    answer = hint(judge)
    assert answer.json() == {"hint": "no camera watches the table: no hint"}


def test_a_hint_needs_the_session_and_the_pages_own_origin(client, store, daemon):
    assert hint(client).status_code == 401
    client.post("/api/login", json={"pin": read_pin(pin_path(store))}, headers=SAME)
    assert hint(client, headers={"Origin": "http://evil.example"}).status_code == 403
    assert "hint" not in daemon.screen.getvalue() and "camera" not in daemon.screen.getvalue()
    answer = hint(client, body={"where": True})
    assert answer.status_code == 400 and answer.json()["error"].startswith('unknown key "where"')


def test_without_a_daemon_a_hint_is_503(judge):
    answer = hint(judge)
    assert (answer.status_code, answer.json()) == (503, {"error": "the referee is not running"})


# In a real browser: Debian's Chromium, never one downloaded (docs/web.md)


def test_the_pages_hint_button_shows_the_boxs_answer_in_a_browser(store, seeing, browser):
    (host, port), stop = served(store)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"http://{host}:{port}/")
        assert not page.locator("#hint").is_visible()  # judges only
        sign_in(page, store)
        page.click("#hint")
        page.wait_for_selector(f"#hinted >> text={SET}", timeout=5000)
        seeing.wait_for(lambda: f"> {SET}" in flat(seeing.shown()), "on the box's screen")
    finally:
        page.close()
        stop()
