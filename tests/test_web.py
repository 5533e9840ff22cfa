"""The page's server (docs/web.md): the state as `referee state` prints it, its events
when the daemon writes the store, the PIN and its sessions, and every hostile request
refused with a 4xx in JSON. Against a real store, and a real uvicorn where it streams."""

import http.client
import json
import os
import socket
import stat
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx2 as httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from referee import cli
from referee.page_socket import bind, resolve_listen
from referee.rules import Press, Settings, Verdict, parse_script
from referee.store.paths import pin_path
from referee.store.pin import ensure_pin, new_pin, read_pin
from referee.store.store import Store
from referee.web.guard import Guard
from referee.web.serve import PageServer, uvicorn_config
from referee.web.server import BODY_MAX, COOKIE, create_app

from .conftest import ROOT, also_suppressed

ORIGIN = "http://testserver"
SAME = {"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"}


class Clock:
    def __init__(self):
        self.ns = 1_000_000_000_000

    def __call__(self):
        return self.ns


@pytest.fixture
def store(store):
    """P2's call, and P4 pressed 4.2 ms after."""
    with Store.open(store) as opened:
        opened.append(1, Press(player=4, t_ns=1_004_200_000))
    return store


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def client(store, clock):
    ensure_pin(pin_path(store))
    with TestClient(create_app(store, pin_path(store), clock=clock)) as client:
        yield client


def served(store, guard=None, **kwargs):
    """A real uvicorn on a port of its own, in a thread, as `referee web` runs it (its
    guard's bounds: default ones unless given); its address, and how to stop it."""
    ensure_pin(pin_path(store))
    sock = bind("127.0.0.1:0")
    guard = guard or Guard()
    app = create_app(store, pin_path(store), guard=guard, **kwargs)
    # log_level: its start and stop, into a test's log that may be closed
    server = PageServer(uvicorn_config(app, guard, log_level="warning"), guard)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()  # connections wait in the socket's backlog until it serves

    def stop():
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive()

    return sock.getsockname()[:2], stop


def events(response):
    """The server-sent events as (name, data), and comments as (":", text)."""
    name = data = None
    for line in response.iter_lines():
        if line.startswith(":"):
            yield ":", line[1:].strip()
        elif line.startswith("event: "):
            name = line[len("event: ") :]
        elif line.startswith("data: "):
            data = json.loads(line[len("data: ") :])
        elif line == "" and name is not None:
            yield name, data
            name = data = None


def referee_state(store, capsys):
    capsys.readouterr()
    assert cli.main(["state", "--store", str(store)]) == 0
    return json.loads(capsys.readouterr().out)


# The state and its events


def test_the_state_is_referee_states_json_with_the_game_and_its_timers(client, store, capsys):
    answer = client.get("/api/state")
    assert answer.status_code == 200
    body = answer.json()
    game, timers = body.pop("game"), body.pop("timers")
    assert body == referee_state(store, capsys)
    assert game["id"] == 1 and "started_at" in game
    # P2 called at 1 s; at the latest input (P4's press, 4.2 ms later) 9995.8 ms were left.
    assert timers == {
        "at_ms": 1004.2,
        "left_ms": {"pointout": 9995.8},
        "paused_ms": {},
        "running": False,  # no daemon has the store: nothing counts down
    }


def test_no_store_and_no_game_are_said_in_json(tmp_path, capsys):
    missing = tmp_path / "none.db"
    ensure_pin(pin_path(missing))
    with TestClient(create_app(missing, pin_path(missing))) as client:
        answer = client.get("/api/state")
        assert answer.status_code == 503 and answer.json() == {"error": "no such file"}
    empty = tmp_path / "empty.db"
    Store.open(empty).close()
    with TestClient(create_app(empty, pin_path(missing))) as client:
        answer = client.get("/api/state")
        assert answer.status_code == 404
        assert answer.json() == {"error": "no game in this store yet"}


def test_an_event_comes_when_the_daemon_writes_an_input(store):
    (host, port), stop = served(store)
    try:
        with httpx.stream("GET", f"http://{host}:{port}/api/events", timeout=5) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            stream = events(response)
            name, first = next(stream)
            assert name == "state" and first["calls"][0]["verdicts"] == []
            assert not first["timers"]["running"]
            with Store.open(store) as daemon:  # holds the store, as `referee run` does
                name, held = next(stream)
                assert held["timers"]["running"]  # the daemon runs the timers now
                daemon.append(1, Verdict(valid=True, t_ns=2_000_000_000))
                name, judged = next(stream)  # a read timeout (5 s) fails the test
                assert judged["calls"][0]["verdicts"] == ["valid"]
                assert judged["players"][1]["points"] == 1
                assert judged["timers"]["left_ms"] == {}
    finally:
        stop()


def test_an_idle_stream_gets_a_keep_alive_comment(store):
    (host, port), stop = served(store, keep_alive_s=0.05)
    try:
        with httpx.stream("GET", f"http://{host}:{port}/api/events", timeout=5) as response:
            stream = events(response)
            assert next(stream)[0] == "state"
            assert next(stream) == (":", "keep-alive")
    finally:
        stop()


def test_running_timers_count_down_from_the_read(store, clock):
    ensure_pin(pin_path(store))
    app = create_app(store, pin_path(store), clock=clock)
    with Store.open(store), TestClient(app) as c:  # a daemon holds the store: timers run
        assert c.get("/api/state").json()["timers"]["left_ms"] == {"pointout": 9995.8}
        clock.ns += 2_500_000_000
        assert c.get("/api/state").json()["timers"]["left_ms"] == {"pointout": 7495.8}
        clock.ns += 60_000_000_000
        assert c.get("/api/state").json()["timers"]["left_ms"] == {"pointout": 0.0}


# The page


def test_the_page_is_served_whole_with_nothing_from_elsewhere(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert len(page.content) < 200_000
    assert "http://" not in page.text and "https://" not in page.text  # no CDN, no fonts
    assert "/*SEATS*/[]" not in page.text and "●" in page.text  # the screens' symbols
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "'sha256-" in policy
    assert client.get("/index.html").content == page.content


def test_the_page_says_the_cameras_frames_never_leave_the_box(client):
    """Issue 32: the table must be told on the page, as in the README, what the camera
    keeps and where its frames go."""
    text = " ".join(client.get("/").text.split())
    assert "its frames never leave the box, except each call's snapshot" in text
    assert "which only a judge signed in with the PIN sees here" in text


# The PIN


def test_the_pin_file_is_the_owners_alone_and_new_replaces_it(tmp_path, capsys):
    store = tmp_path / "box" / "referee.db"
    assert cli.main(["pin", "--store", str(store)]) == 0
    pin = capsys.readouterr().out.strip()
    path = pin_path(store)
    assert path == tmp_path / "box" / "referee.pin"
    assert len(pin) == 6 and pin.isdigit() and read_pin(path) == pin
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert cli.main(["pin", "--store", str(store)]) == 0
    assert capsys.readouterr().out.strip() == pin  # the same, until --new
    pins = set()
    for _ in range(5):  # five alike out of a million PINs: never
        assert cli.main(["pin", "--store", str(store), "--new"]) == 0
        pins.add(capsys.readouterr().out.strip())
    assert len(pins) > 1 and read_pin(path) in pins
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["referee.pin"]  # no leftovers
    path.chmod(0o644)
    assert cli.main(["pin", "--store", str(store)]) == 2
    said = f"{path}: others may read the PIN: `referee pin --new` makes a new one\n"
    assert capsys.readouterr().err == said
    path.write_text("12345\n")
    path.chmod(0o600)
    assert cli.main(["pin", "--store", str(store)]) == 2
    assert "not a PIN of 6 digits" in capsys.readouterr().err


def login(client, pin, headers=SAME):
    return client.post("/api/login", json={"pin": pin}, headers=headers)


def sign_in(page, store: Path) -> None:
    """A judge's PIN typed on the page in a browser, as a judge signs in."""
    page.fill("#pin", read_pin(pin_path(store)))
    page.click("#login")


def test_the_pin_opens_a_session_in_an_httponly_strict_cookie(client, store, caplog):
    pin = read_pin(pin_path(store))
    assert client.get("/api/session").json() == {"session": False}
    wrong = login(client, "000000" if pin != "000000" else "111111")
    assert wrong.status_code == 401 and wrong.json() == {"error": "wrong PIN"}
    answer = login(client, pin)
    assert answer.status_code == 200
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    assert client.get("/api/session").json() == {"session": True}
    assert pin not in caplog.text  # never logged
    new_pin(pin_path(store))  # `referee pin --new`: the old PIN's sessions end
    assert client.get("/api/session").json() == {"session": False}
    assert login(client, read_pin(pin_path(store))).status_code == 200
    assert client.post("/api/logout", headers=SAME).json() == {"session": False}
    assert client.get("/api/session").json() == {"session": False}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "http://evil.example"},
        {"Origin": ORIGIN, "Sec-Fetch-Site": "cross-site"},
        {"Origin": ORIGIN, "Sec-Fetch-Site": "same-site"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "same-origin"},  # an Origin is every browser's on a POST
    ],
    ids=["nothing", "another origin", "cross-site", "same-site", "null", "no origin"],
)
def test_a_write_from_another_site_is_refused_with_or_without_the_session(client, store, headers):
    pin = read_pin(pin_path(store))
    assert login(client, pin, headers).status_code == 403
    assert login(client, pin).status_code == 200
    refused = client.post("/api/logout", headers=headers)
    assert refused.status_code == 403 and "own page" in refused.json()["error"]
    assert client.get("/api/session").json() == {"session": True}


def test_a_write_without_the_session_is_refused(client):
    answer = client.post("/api/logout", headers=SAME)
    assert answer.status_code == 401
    assert answer.json() == {"error": "the PIN first: POST /api/login"}
    client.cookies.set(COOKIE, "made-up")
    assert client.post("/api/logout", headers=SAME).status_code == 401


# Bad requests


@pytest.mark.parametrize(
    ("content", "content_type", "status"),
    [
        (b"x" * (BODY_MAX + 1), "application/json", 413),
        (b'{"pin": "1"}', "text/plain", 415),
        (b'{"pin": "1"}', "application/x-www-form-urlencoded", 415),
        (b"{", "application/json", 400),
        (b"[1]", "application/json", 400),
        (b'{"pin": 123456}', "application/json", 400),
        (b'{"pin": "\\ud800"}', "application/json", 401),
        (b"[" * 100_0 + b"]" * 100_0, "application/json", 400),
    ],
)
def test_a_bad_body_is_a_4xx_in_json(client, content, content_type, status):
    answer = client.post(
        "/api/login", content=content, headers={**SAME, "Content-Type": content_type}
    )
    assert answer.status_code == status and set(answer.json()) == {"error"}


def test_a_body_without_its_length_is_still_bounded(client):
    def chunks():
        for _ in range(10):
            yield b" " * 1000

    answer = client.post(
        "/api/login", content=chunks(), headers={**SAME, "Content-Type": "application/json"}
    )
    assert answer.status_code == 413


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"])
def test_only_get_and_post(client, method):
    answer = client.request(method, "/api/state")
    assert answer.status_code == 405 and set(answer.json()) == {"error"}
    assert client.post("/api/state", headers=SAME).status_code == 405
    assert client.get("/api/login").status_code == 405


def raw(address, request: bytes):
    """Send the bytes as they are (no client normalises the path), and the answer."""
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(request)
        answer = http.client.HTTPResponse(sock, method=request.split(b" ")[0].decode())
        answer.begin()
        return answer.status, answer.getheader("content-type") or "", answer.read()


def four_playing(folder: Path) -> Path:
    """A store in the folder, its game of four under way."""
    store = folder / "referee.db"
    with Store.open(store) as opened:
        opened.new_game(Settings(players=4), lobby=False)
    return store


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    store = four_playing(tmp_path_factory.mktemp("hostile"))
    address, stop = served(store)
    page = raw(address, b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")[2]
    yield Hostile(address, page, read_pin(pin_path(store)))
    stop()


@dataclass(repr=False)  # Hypothesis prints its arguments: not the whole page
class Hostile:
    address: tuple[str, int]
    page: bytes
    pin: str


TRAVERSALS = [
    "/../../../../etc/passwd",
    "/..%2f..%2f..%2fetc%2fpasswd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "//etc/passwd",
    "/%2fetc%2fpasswd",
    "/api/../../referee.pin",
    "/referee.pin",
    "/..%5c..%5creferee.pin",
    "/page/index.html",
    "/./index.html/..",
    "/index.html%00.png",
    "/%252e%252e%252fetc%252fpasswd",
    "/C:%5cWindows%5cwin.ini",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_no_path_leaves_the_pages_folder(hostile, path):
    address, pin = hostile.address, hostile.pin
    request = f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
    status, kind, body = raw(address, request)
    assert status in (400, 404), (path, status, body)
    assert kind == "application/json" or status == 400
    assert b"root:" not in body and pin.encode() not in body


# Paths as a URL may write them: unreserved, sub-delims, ':', '@', '/', and %XX.
PATH = st.lists(
    st.one_of(
        st.sampled_from(["/", "..", ".", "%2f", "%2e", "%00", "%5c", "api", "index.html"]),
        st.text(alphabet="abcz09-._~!$&'()*+,;=:@/", max_size=8),
        st.integers(0, 255).map(lambda b: f"%{b:02X}"),
    ),
    max_size=8,
).map(lambda parts: "/" + "".join(parts))
METHOD = st.sampled_from(["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "FOO"])
HEADER = st.tuples(
    st.sampled_from(
        ["Origin", "Cookie", "Content-Type", "Sec-Fetch-Site", "Accept", "X-Forwarded-For", "Range"]
    ),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40),
)


@settings(max_examples=150)
@given(
    method=METHOD,
    path=PATH,
    headers=st.lists(HEADER, max_size=4),
    body=st.one_of(st.binary(max_size=BODY_MAX + 100), st.just(b'{"pin": "123456"}')),
)
def test_any_request_is_a_4xx_or_a_200_never_a_500_nor_a_file_from_elsewhere(
    hostile, method, path, headers, body
):
    address, page, pin = hostile.address, hostile.page, hostile.pin
    head = "".join(f"{name}: {value}\r\n" for name, value in headers)
    request = (
        f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{head}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    if path.startswith("/api/events") and method == "GET":
        return  # a stream: never ends by itself (its own test reads it)
    status, kind, answer = raw(address, request)
    assert status == 200 or 400 <= status < 500, (status, answer)
    if method == "HEAD":
        return
    if kind.startswith("text/html"):
        assert status == 200 and answer == page
    elif status != 400 or kind == "application/json":  # uvicorn's own 400: a text line
        assert kind == "application/json", (status, kind, answer)
        assert isinstance(json.loads(answer), dict)
    assert pin.encode() not in answer


# The box's own names (DNS rebinding)

REBOUND = "attacker.example:8080"  # a page there, its name now resolving to the box
READS = [
    "/",
    "/tv",
    "/api/state",
    "/api/events",
    "/api/session",
    "/api/settings",
    "/api/players",
    "/api/games",
    "/api/games/1",
    "/api/stats",
    "/api/export/calls.csv",
    "/api/games/1/clips",
    "/api/clips/game00001-call000001000000000.wav",
    "/api/clips/game00001-call000001000000000/envelope",
]
NOT_A_NAME = {"error": "not a name of this box: open the page at its address"}


def test_a_page_whose_name_rebinds_to_the_box_gets_nothing(client, store):
    """Before, every route answered any Host: through a player's phone, a page elsewhere
    read the game, the history and the clips' speech, and tried PINs."""
    for path in READS:
        answer = client.get(path, headers={"Host": REBOUND})
        assert (answer.status_code, answer.json()) == (421, NOT_A_NAME), path
    origin = {"Origin": f"http://{REBOUND}", "Sec-Fetch-Site": "same-origin"}
    guess = client.post(
        "/api/login", json={"pin": read_pin(pin_path(store))}, headers={"Host": REBOUND, **origin}
    )
    assert (guess.status_code, guess.json()) == (421, NOT_A_NAME)
    assert "set-cookie" not in guess.headers
    assert client.get("/api/state").status_code == 200  # at its own name: the same client


def test_the_box_answers_its_address_its_names_and_the_one_listen_names(store):
    (host, port), stop = served(store, listen="referee.lan:8080")
    hostname = socket.gethostname()
    try:
        for asked, status in [
            (f"{host}:{port}", 200),  # the address the request reached, as the QR code's
            (host, 200),
            ("localhost", 200),
            (f"LocalHost.:{port}", 200),
            (hostname, 200),
            (f"{hostname}.local:{port}", 200),
            ("referee.lan:8080", 200),  # what [web] listen (or run --web) names
            ("127.0.0.2", 421),  # another address: not the one reached
            ("[::1]", 421),
            ("attacker.example", 421),
            (f"{hostname}.attacker.example", 421),
            ("", 421),
            ("localhost:8080:8080", 421),
        ]:
            request = f"GET /api/state HTTP/1.1\r\nHost: {asked}\r\nConnection: close\r\n\r\n"
            assert raw((host, port), request.encode())[0] == status, asked
        no_host = raw((host, port), b"GET /api/state HTTP/1.0\r\n\r\n")
        assert no_host[0] == 421
    finally:
        stop()


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCZ0123456789.-_", min_size=1, max_size=30)


# The client is not changed by a refused request: one for every example.
@settings(
    max_examples=200, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)
@given(name=NAME, port=st.one_of(st.just(""), st.integers(0, 65535).map(lambda p: f":{p}")))
def test_any_other_name_is_421(client, name, port):
    hostname = socket.gethostname().lower()
    own = {"testserver", "localhost", hostname, f"{hostname}.local"}
    assume(name.lower().removesuffix(".") not in own)
    answer = client.get("/api/state", headers={"Host": name + port})
    assert (answer.status_code, answer.json()) == (421, NOT_A_NAME)


# The address


def test_the_address_is_the_local_network_on_a_pi_else_this_computer():
    assert resolve_listen("auto", on_a_pi=True) == "0.0.0.0:8080"
    assert resolve_listen("auto", on_a_pi=False) == "127.0.0.1:8080"
    assert resolve_listen("[::1]:9000", on_a_pi=True) == "[::1]:9000"


def test_a_port_in_use_or_a_bad_address_is_one_line(tmp_path, capsys):
    taken = bind("127.0.0.1:0")
    try:
        port = taken.getsockname()[1]
        store = str(tmp_path / "referee.db")
        for listen, said in [
            (f"127.0.0.1:{port}", "in use by another program: stop it, or choose another port"),
            ("192.0.2.1:8080", "not an address of this computer"),
            ("nowhere", "must be HOST:PORT, [IPv6]:PORT or off"),
            ("127.0.0.1:70000", "must be HOST:PORT, [IPv6]:PORT or off"),
        ]:
            assert cli.main(["web", "--store", store, "--listen", listen]) == 2
            err = capsys.readouterr().err.splitlines()
            assert err[-1].endswith(said), err
    finally:
        taken.close()
    elsewhere = tmp_path / "off" / "referee.db"
    assert cli.main(["web", "--store", str(elsewhere), "--listen", "off"]) == 0
    assert not elsewhere.parent.exists()  # off: nothing made


# In a real browser: Debian's Chromium (the browser fixture, tests/conftest.py)


def test_a_press_written_to_the_store_shows_on_the_page_in_a_browser(store, browser):
    (host, port), stop = served(store)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_selector("#call >> text=+4.2 ms", timeout=5000)
        with Store.open(store) as daemon:
            daemon.append(1, Verdict(valid=True, t_ns=2_000_000_000))
            page.wait_for_selector("#call >> text=valid", timeout=5000)
    finally:
        page.close()  # its event stream, before the server stops
        stop()


# A super round of 30 s flipped at 12 s by P1 and P2 (after a SET each, for the bank).
SUPER_ROUND = """config players=3 super_s=30
0 press 1
1 valid
2 press 2
3 valid
10 super
11 press 1
11.5 press 2
12 super
"""


def test_the_super_rounds_countdown_runs_on_the_page_and_pauses_at_a_call_in_a_browser(
    tmp_path,
    browser,
):
    """The countdown as the page shows it: counting down while the daemon runs the game
    (derived in the page from the time left at the latest input), paused with its time
    left at a participant's call, beside the call's own timer."""
    path = tmp_path / "referee.db"
    script = parse_script(SUPER_ROUND)
    with Store.open(path) as daemon:  # the daemon holds the store: its timers run
        daemon.new_game(script.settings, lobby=False, inputs=[i for _, i in script.inputs])
        (host, port), stop = served(path)
        page = browser.new_page(viewport={"width": 390, "height": 844})
        try:
            page.goto(f"http://{host}:{port}/")
            page.wait_for_selector("#title >> text=super round", timeout=5000)
            # Who is in it, beside its countdown.
            assert page.locator("#round").inner_text() == "Super round: only P1 ●, P2 ▲ may call"
            countdown = page.locator("#timers > div", has_text="super round")
            assert countdown.count() == 1
            first = int(countdown.inner_text().split()[-1])
            assert 25 <= first <= 30  # whole seconds, from 30 at the flip (a slow start)
            page.wait_for_function(
                "() => Number(document.querySelector('#timers > div').lastChild"
                f".textContent) <= {first - 2}",
                timeout=5000,
            )  # counting down a second a second, with no event since
            daemon.append(1, Press(player=1, t_ns=20_000_000_000))  # 22 s before time
            page.wait_for_selector("#timers >> text=super round (paused)", timeout=5000)
            paused = page.locator("#timers > div", has_text="super round (paused)")
            assert paused.inner_text().split()[-1] == "22"
            assert page.locator("#timers >> text=to point out").is_visible()
            assert page.locator("#title").inner_text().endswith("a super call")
            page.wait_for_timeout(1500)
            assert paused.inner_text().split()[-1] == "22"  # held while the call lasts
        finally:
            page.close()  # its event stream, before the server stops
            stop()


# A game of four under way, three of them named: P2's call, P4 4.2 ms and P1 37 ms after.
LIVE_GAME = """config players=4 rules=super
2 press 1
3 valid
6 press 3
7 valid
11 press 1
12 valid
20 press 4
21 invalid
30 press 2
30.0042 press 4
30.037 press 1
"""


def live_game(tmp_path: Path) -> tuple[Path, Path]:
    """LIVE_GAME in a store, named, at a fixed start; and where its screenshots go:
    docs/screens/ when REFEREE_SCREENS says so (`make screens`), else beside the test."""
    shots = ROOT / os.environ["REFEREE_SCREENS"] if "REFEREE_SCREENS" in os.environ else tmp_path
    path = tmp_path / "referee.db"
    script = parse_script(LIVE_GAME)
    with Store.open(path) as opened:
        opened.new_game(
            script.settings,
            lobby=False,
            started_at=datetime(2025, 6, 1, 20, 0, tzinfo=UTC),
            inputs=[inp for _, inp in script.inputs],
            names={1: "Ann", 2: "Bob", 4: "Dee"},
        )
    return shots, path


def test_the_live_page_at_a_phones_size_in_a_browser(tmp_path, browser):
    """The scores, the call's photo finish and its timer on a phone's screen, none of them
    cut off; the screenshot goes to docs/screens/ when REFEREE_SCREENS says so (`make
    screens`), else beside the test. The store is not held: its timer shows the time left
    at the last press, the same picture at every run."""
    shots, path = live_game(tmp_path)
    width, height = 390, 844
    (host, port), stop = served(path)
    page = browser.new_page(viewport={"width": width, "height": height})
    failed = []  # every request of the page's own that is refused
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_selector("#status >> text=live", timeout=5000)
        page.wait_for_selector("#call >> text=+37.0 ms", timeout=5000)
        assert page.locator("#tally").inner_text() == "· bank 6"  # super's
        notes = page.locator("#board .note").all_inner_texts()
        assert notes == ["", "", "", "LOCKED"]  # Dee, as the box says it
        rows = page.locator("#call tr").all_inner_texts()
        assert [r.split()[0] for r in rows] == ["Bob", "Dee", "Ann"]
        assert page.locator("#call .first").inner_text().startswith("Bob")
        assert page.locator("#board .seat").count() == 4
        assert page.locator("#timers >> text=to point out").is_visible()
        for part in ("#timers", "#board", "#call"):
            box = page.locator(part).bounding_box()
            assert box is not None and box["y"] + box["height"] <= height, part
            assert box["x"] + box["width"] <= width, part
        page.screenshot(path=str(shots / f"web-live-{width}x{height}.png"))
        # Its icon is its own, inline (a browser with a window asks /favicon.ico, a 404 at
        # every load, of a page that names none; headless Chromium asks nothing), and
        # the page's Content-Security-Policy lets it show.
        icon = page.locator("link[rel=icon]")
        assert icon.count() == 1 and icon.get_attribute("href").startswith("data:image/svg+xml,")
        shown = (
            "(src) => new Promise((done) => { const i = new Image(); i.onload = () => done(true);"
        )
        shown += " i.onerror = () => done(false); i.src = src; })"
        assert page.evaluate(shown, icon.get_attribute("href"))
        assert failed == []
    finally:
        page.close()  # its event stream, before the server stops
        stop()


# Each rule set's line under the scores, and the lobby, as the box's screens say them.
AT_THE_TABLE = [
    # An official match: its deal, never a bank (it has none).
    (
        "config players=3 rules=official deals=2\n1 press 2\n2 valid\n",
        "Scores",
        "· deal 1 of 2 · dealer P1",
        ["0", "1", "0"],
        ["DEALS", "", ""],
    ),
    # Solitaire: the cards the box counts.
    (
        "config players=1 rules=solitaire\n1 press 1\n2 valid\n",
        "Scores",
        "· deck 66 · table 12 · owed 0",
        ["1"],
        [""],
    ),
    # A lobby: who has joined, not a board of noughts; nothing dealt yet.
    ("0 press 1\n1 press 3\n", "Joined", "", ["IN", "IN"], ["", ""]),
    # Over: a lock no longer matters, and is not said (the box says nothing of it then).
    (
        "config players=2\n1 press 1\n2 invalid\n3 end\n",
        "Scores",
        "· bank 0",
        ["0", "0"],
        ["", ""],
    ),
]


@pytest.mark.parametrize(("script", "title", "tally", "points", "notes"), AT_THE_TABLE)
def test_each_rule_set_and_the_lobby_on_the_page_in_a_browser(
    tmp_path, browser, script, title, tally, points, notes
):
    path = tmp_path / "referee.db"
    parsed = parse_script(script)
    with Store.open(path) as opened:
        opened.new_game(parsed.settings, lobby=parsed.lobby, inputs=[i for _, i in parsed.inputs])
    (host, port), stop = served(path)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_selector("#status >> text=live", timeout=5000)
        page.wait_for_selector("#board .seat", timeout=5000)
        assert page.locator("#scores-title").inner_text() == title
        assert page.locator("#tally").inner_text() == tally
        assert page.locator("#board .points").all_inner_texts() == points
        assert page.locator("#board .note").all_inner_texts() == notes
        assert page.locator("#board .seat.locked").count() == notes.count("LOCKED")
        assert page.locator("#nobody").is_hidden()
    finally:
        page.close()
        stop()


def test_a_lobby_nobody_has_joined_says_so_on_the_page_in_a_browser(tmp_path, browser):
    path = tmp_path / "referee.db"
    with Store.open(path) as opened:
        opened.new_game(Settings(players=4), lobby=True)
    (host, port), stop = served(path)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_selector("#nobody", state="visible", timeout=5000)
        assert page.locator("#nobody").inner_text().startswith("nobody has joined yet")
        assert page.locator("#board .seat").count() == 0
    finally:
        page.close()
        stop()
