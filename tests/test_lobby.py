"""How a phone joins the page (daemon/lobby.py): the address the lobby shows for `[web]
listen`, the box's own on the local network for an address of every interface, and the
PIN, looked at again while the lobby is shown."""

import fcntl
import io
import ipaddress
import logging
import os
import subprocess
import sys

import pytest

from referee.config import default_config
from referee.daemon.app import App, RunOptions
from referee.daemon.lobby import CHECK_NS, UNSERVED_CHECK_NS, JoinSign, _routed, lan_ipv4, page_url
from referee.store import mark
from referee.store.mark import marked, served_at
from referee.store.paths import mark_path, pin_path
from referee.store.pin import new_pin, read_pin
from referee.view import Join

from .test_app import Clock


@pytest.mark.parametrize(
    ("listen", "shown"),
    [
        ("0.0.0.0:8080", ("http://192.168.1.23:8080/", "")),
        ("[::]:8080", ("http://192.168.1.23:8080/", "")),
        ("10.0.0.5:80", ("http://10.0.0.5:80/", "")),
        ("[fd00::5]:8080", ("http://[fd00::5]:8080/", "")),
        ("box.local:8080", ("http://box.local:8080/", "")),
        ("127.0.0.1:8080", ("http://127.0.0.1:8080/", "this computer only")),
        ("[::1]:8080", ("http://[::1]:8080/", "this computer only")),
        ("localhost:8080", ("http://localhost:8080/", "this computer only")),
    ],
)
def test_the_address_a_phone_types(listen, shown):
    assert page_url(listen, lambda: "192.168.1.23") == shown


def test_no_address_on_a_network_is_no_network():
    assert page_url("0.0.0.0:8080", lambda: None) == (None, "no network")


def test_the_boxs_address_is_one_of_its_own_never_loopback(tmp_path):
    found = lan_ipv4()
    if found is None:
        pytest.skip("this machine has no route to a local network")
    address = ipaddress.IPv4Address(found)
    assert not address.is_loopback and not address.is_unspecified
    # Reached through a route of the routing table's too, when no private one is routed.
    routes = tmp_path / "route"
    routes.write_text("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n")
    assert lan_ipv4(routes) in (found, None)


def test_a_box_without_a_default_route_is_found_through_its_networks(tmp_path):
    """Its own access point, say: an address in each network it routes to is tried."""
    routes = tmp_path / "route"
    routes.write_text(
        "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n"
        "eth0\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\n"  # the default: skipped
        "wlan0\t00002A0A\t00000000\t0001\t0\t0\t0\t0000FFFF\n"  # 10.42.0.0/16
        "lo\t0000007F\t00000000\t0001\t0\t0\t0\t000000FF\n"
        "eth1\tnothex\t00000000\t0001\t0\t0\t0\t00FFFFFF\n"
        "short\tline\n"
    )
    assert _routed(routes) == ["10.42.0.1"]
    assert _routed(tmp_path / "none") == []


def test_the_sign_looks_again_only_when_due(tmp_path):
    pin, clock, lan = pin_path(tmp_path / "referee.db"), Clock(), ["192.168.1.23"]
    sign = JoinSign("0.0.0.0:8080", pin, clock, lambda: lan[0])
    first = sign.join()
    assert first == Join("http://192.168.1.23:8080/", read_pin(pin))  # made the first time
    assert sign.due_ns == clock.now + CHECK_NS
    lan[0] = "10.0.0.9"  # the Wi-Fi changed
    new = new_pin(pin)  # `referee pin --new`
    clock.now += CHECK_NS - 1
    assert sign.join() == first  # not looked at yet
    clock.now += 1
    assert sign.join() == Join("http://10.0.0.9:8080/", new)


def test_a_pin_that_cannot_be_read_is_no_pin_and_said_once(tmp_path, caplog):
    pin = pin_path(tmp_path / "referee.db")
    pin.write_text("123456\n")
    pin.chmod(0o644)  # others may read it: refused (web/login.py)
    clock = Clock()
    sign = JoinSign("10.0.0.5:8080", pin, clock)
    assert sign.join() == Join("http://10.0.0.5:8080/", None)
    clock.now += CHECK_NS
    sign.join()
    said = [r.message for r in caplog.records if "PIN" in r.message]
    assert len(said) == 1 and "others may read the PIN" in said[0] and "123456" not in said[0]


@pytest.mark.parametrize("display", ["terminal", "window"])
def test_the_daemon_shows_the_pin_and_never_logs_it(tmp_path, caplog, display):
    """The daemon's lobby, as `referee run --web` has it, on the terminal's line or the
    screen with its QR code (SDL's dummy driver): the PIN made, shown, a new one from
    `referee pin --new` shown in its place, then one it may not trust said in the log;
    with every logger at DEBUG, no record holds either PIN's digits."""
    caplog.set_level(logging.DEBUG)
    clock, (keys, typing), screen = Clock(), os.pipe(), io.StringIO()
    options = RunOptions(default_config(), tmp_path / "referee.db", "keyboard", display)
    app = App(options, clock=clock, stdin_fd=keys, stdout=screen)
    try:
        path = pin_path(app.store.path)
        assert not path.exists()
        app.page_at("0.0.0.0:8080")
        app.present(app.view())  # the lobby: the PIN made the first time it is shown
        made = read_pin(path)
        assert app.view().join.pin == made
        new = new_pin(path)  # `referee pin --new`
        clock.now += CHECK_NS
        app.step(clock.now)
        app.present(app.view())
        assert app.view().join.pin == new != made
        path.chmod(0o644)  # others may read it: no PIN shown, and the log says why
        clock.now += CHECK_NS
        app.step(clock.now)
        app.present(app.view())
        assert app.view().join.pin is None
        if display == "terminal":
            assert f"PIN {made}" in screen.getvalue() and f"PIN {new}" in screen.getvalue()
        else:
            assert app.screen.frames >= 3  # each lobby drawn, its QR code and PIN with it
    finally:
        app.close()
        os.close(keys)
        os.close(typing)
    logged = [r.getMessage() for r in caplog.records]
    assert any("the lobby shows no PIN" in said for said in logged)  # the log was heard
    for pin in (made, new):
        assert pin not in caplog.text
        assert not any(pin in said for said in logged), f"the PIN {pin} is in the log"


def test_a_page_is_served_while_its_server_holds_the_mark(tmp_path):
    store = tmp_path / "referee.db"
    assert served_at(store) is None  # no mark: nothing serves it
    with marked(store, "0.0.0.0:8080"):
        assert served_at(store) == "0.0.0.0:8080"
    assert mark_path(store).exists() and served_at(store) is None  # the file: no lock held
    with marked(store, "not an address"):
        assert served_at(store) == ""  # served; where is not known: [web] listen's


def test_a_server_killed_at_once_lets_the_mark_go(tmp_path):
    """SIGKILL: no code of the server's runs, and the kernel lets the lock go."""
    store = tmp_path / "referee.db"
    holding = (
        "import sys; from pathlib import Path; from referee.store.mark import marked\n"
        "with marked(Path(sys.argv[1]), '127.0.0.1:8080'):\n"
        "    print('held', flush=True); sys.stdin.read()\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", holding, str(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout.readline() == "held\n"
        assert served_at(store) == "127.0.0.1:8080"
        server.kill()
        server.wait(10)
        assert served_at(store) is None
    finally:
        server.kill()
        server.wait(10)
        server.stdin.close()
        server.stdout.close()


def test_a_server_starting_while_the_daemon_looks_takes_the_mark_after_it(tmp_path, monkeypatch):
    store = tmp_path / "referee.db"
    looking = os.open(tmp_path / "referee.page", os.O_RDONLY | os.O_CREAT)
    fcntl.flock(looking, fcntl.LOCK_SH)  # the daemon's look, held as the server starts
    waited = []

    def look_done(seconds):
        waited.append(seconds)
        fcntl.flock(looking, fcntl.LOCK_UN)

    monkeypatch.setattr(mark.time, "sleep", look_done)
    try:
        with marked(store, "127.0.0.1:8080"):
            assert waited == [mark.TRY_S] and served_at(store) == "127.0.0.1:8080"
    finally:
        os.close(looking)


def test_a_mark_another_holds_or_none_can_make_is_said_and_the_page_served(
    tmp_path, monkeypatch, caplog
):
    store = tmp_path / "referee.db"
    monkeypatch.setattr(mark.time, "sleep", lambda seconds: None)
    # A second server: the first's address stays.
    with marked(store, "127.0.0.1:8080"), marked(store, "127.0.0.1:9090"):
        assert served_at(store) == "127.0.0.1:8080"
    with marked(tmp_path / "none" / "referee.db", "127.0.0.1:8080"):
        pass
    said = [r.getMessage() for r in caplog.records]
    assert said[0].endswith(
        "referee.page: another page's server holds it; the lobby shows that one"
    )
    assert "the box's lobby will not show the page (" in said[1]


def test_the_sign_of_a_page_served_elsewhere_shows_only_while_it_is(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    pin, clock, where = pin_path(tmp_path / "referee.db"), Clock(), [None]
    sign = JoinSign("0.0.0.0:8080", pin, clock, lambda: "10.0.0.5", served=lambda: where[0])
    assert sign.join() is None
    assert not pin.exists()  # no PIN made for a page nobody serves
    assert sign.due_ns == clock.now + UNSERVED_CHECK_NS  # sooner while none is
    where[0] = "0.0.0.0:9090"  # referee-web.service started, at another port
    clock.now += UNSERVED_CHECK_NS - 1
    assert sign.join() is None  # looked at again only when due
    clock.now += 1
    assert sign.join() == Join("http://10.0.0.5:9090/", read_pin(pin))
    assert sign.due_ns == clock.now + CHECK_NS
    where[0] = ""  # served, where not written: [web] listen's
    clock.now += CHECK_NS
    assert sign.join() == Join("http://10.0.0.5:8080/", read_pin(pin))
    said = [r.getMessage() for r in caplog.records if "served" in r.getMessage()]
    assert said == [
        "no page is served for this store (referee-web.service, `referee web` or `referee run"
        " --web`): the lobby shows no address until one is",
        "the page is served at 0.0.0.0:9090: the lobby shows how to join",
        "the page is served at 0.0.0.0:8080: the lobby shows how to join",
    ]
