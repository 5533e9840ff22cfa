"""`referee run --web`: the page's server as a process beside the daemon (referee/web/child.py)."""

import json
import re
import urllib.request

from referee.rules import Press, Settings
from referee.store import Store
from referee.web.child import PageProcess
from referee.web.listen import bind
from referee.web.mark import served_at

STARTS_S = 30.0  # a fresh interpreter importing the server, on a busy machine


def state_from(address: str) -> dict:
    """GET /api/state: the socket listens from the start, so the request waits in its
    backlog until the page's process, still starting, takes it."""
    with urllib.request.urlopen(f"{address}api/state", timeout=STARTS_S) as answer:
        return json.load(answer)


def test_the_page_is_served_beside_the_daemon_and_stops_with_it(tmp_path):
    store = tmp_path / "referee.db"
    with Store.open(store) as opened:
        game = opened.new_game(Settings(players=4), lobby=False)
        opened.append(game, Press(player=2, t_ns=1_000_000_000))
    with PageProcess(store, None, "127.0.0.1:0") as page:
        address = re.fullmatch(r"the page on the phones: (http://127\.0\.0\.1:\d+/)", page.said)
        assert address, page.said
        assert state_from(address[1])["calls"][0]["callers"] == [2]
        assert page.process is not None and page.process.poll() is None
        # Marked served, where it is, as referee-web.service marks it (web/mark.py).
        assert served_at(store) == page.listening
    assert page.process.poll() is not None  # stopped with the daemon
    assert served_at(store) is None
    assert (tmp_path / "referee.pin").exists()  # the page made the box's PIN


def test_an_address_in_use_is_told_and_the_daemon_goes_on(tmp_path):
    taken = bind("127.0.0.1:0")
    try:
        port = taken.getsockname()[1]
        with PageProcess(tmp_path / "referee.db", None, f"127.0.0.1:{port}") as page:
            assert page.process is None
            assert page.said == (
                f"web: listen 127.0.0.1:{port}: in use by another program: stop it, or "
                "choose another port: the page is not served"
            )
    finally:
        taken.close()
