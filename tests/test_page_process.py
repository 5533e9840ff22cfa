"""`referee run --web`: the page's server as a process beside the daemon
(referee/daemon/page_process.py)."""

import contextlib
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import urllib.request

import pytest

from referee.daemon.page_process import PAGE, PageProcess
from referee.inbox import SourceStatus
from referee.page_socket import bind
from referee.rules import Press, Settings
from referee.store.mark import served_at
from referee.store.store import Store

from .processes import Output

STARTS_S = 30.0  # a fresh interpreter importing the server, on a busy machine
KILLED_S = 10.0  # a process the kernel kills: at once, but a loaded machine


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
        # Marked served, where it is, as referee-web.service marks it (store/mark.py).
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


class WebDaemon:
    """`referee run --web 127.0.0.1:0` as a real process, no screen, no microphone, its log
    on stderr: the page's process, its pid and its address read from that log."""

    SERVED = re.compile(r"the page on the phones: (http://127\.0\.0\.1:(\d+)/) \(process (\d+)\)")

    def __init__(self, tmp_path) -> None:
        config = tmp_path / "referee.toml"
        config.write_text('[audio]\nmicrophone = "off"\n')
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "DISPLAY")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "run", "--web", "127.0.0.1:0",
             "--input", f"serial:{tmp_path / 'no-board'}", "--display", "none",
             "--config", str(config), "--store", str(tmp_path / "referee.db")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=env,
        )  # fmt: skip
        assert self.proc.stderr is not None
        self.output = Output(self.proc.stderr.fileno())
        self.pages: list[int] = []  # every page's process, for the end of the test

    def page(self, served: int = 1) -> tuple[str, int, int]:
        """The address, port and pid of the `served`th page the daemon started, once it
        answers."""
        said = self.output.wait_until(
            lambda text: len(self.SERVED.findall(text)) >= served, "the page served", STARTS_S
        )
        address, port, pid = self.SERVED.findall(said)[served - 1]
        self.pages.append(int(pid))
        state_from(address)
        return address, int(port), int(pid)

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pid in self.pages:  # one that outlived the daemon: this test's failure
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def web_daemon(tmp_path):
    made = WebDaemon(tmp_path)
    yield made
    made.end()


def ended(pid: int, timeout_s: float) -> bool:
    """Whether the process (not this one's child) ends within timeout_s: its pidfd is
    readable once it has."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


def test_a_killed_daemons_page_dies_with_it_and_frees_its_port(web_daemon):
    _, port, page = web_daemon.page()
    web_daemon.proc.kill()  # SIGKILL: no stop of its own, no __exit__
    web_daemon.proc.wait()
    assert ended(page, KILLED_S)
    bind(f"127.0.0.1:{port}").close()  # a daemon started again serves the page there


def test_a_page_that_dies_is_started_again_and_still_dies_with_the_daemon(web_daemon):
    _, port, first = web_daemon.page()
    os.kill(first, signal.SIGKILL)
    web_daemon.output.wait_for(f"the page's process {first} ended (killed by SIGKILL)")
    address, again_port, again = web_daemon.page(served=2)  # answers again
    assert (again_port, state_from(address)["game"] is not None) == (port, True)
    assert again != first
    web_daemon.proc.kill()
    web_daemon.proc.wait()
    assert ended(again, KILLED_S)  # started by the daemon's watching thread, not its main


def test_a_page_that_dies_is_told_and_served_again_and_its_stop_is_no_death(tmp_path, monkeypatch):
    monkeypatch.setattr("referee.daemon.page_process.RESTART_S", 0.01)
    told: queue.SimpleQueue[SourceStatus] = queue.SimpleQueue()
    store = tmp_path / "referee.db"
    with Store.open(store) as opened:
        opened.new_game(Settings(players=4), lobby=False)
    with PageProcess(store, None, "127.0.0.1:0", told.put) as page:
        address = page.said.removeprefix("the page on the phones: ")
        state_from(address)
        first = page.process
        assert first is not None
        first.kill()
        died = told.get(timeout=STARTS_S)
        assert (died.source, died.ok, died.condition) == (PAGE, False, "link")
        assert died.text.startswith(f"the page's process {first.pid} ended (killed by SIGKILL)")
        assert told.get(timeout=STARTS_S) == SourceStatus(PAGE, page.said, ok=True)
        assert page.process.pid != first.pid
        state_from(address)  # the same address, served again
    assert page.process.poll() is not None
    assert told.empty()  # the daemon's own stop is not told as a death
