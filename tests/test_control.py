"""The daemon's control socket, for real in a temporary folder: requests parsed and
bounded, handed to the inbox, answered; the page's client; hostile peers."""

import asyncio
import json
import re
import select
import socket
import stat
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.control import (
    ANSWER_S,
    REQUEST_MAX,
    NotRunning,
    RequestError,
    ask,
    parse_request,
    wire,
)
from referee.daemon.control_socket import (
    BUSY,
    MAX_ASKS,
    STOPPED,
    Answer,
    ControlSocket,
    open_control,
)
from referee.inbox import (
    Asked,
    DeleteClips,
    FileRules,
    Hint,
    Inbox,
    NameSeat,
    NewGame,
    SetRules,
)
from referee.names import check_name
from referee.store.paths import socket_path
from referee.units import MAX_SEATS
from referee.web.server import ASK_S

WAIT_S = 5.0  # a bound for a thread's answer, never reached when all is well

# What a JSON request's values may be: the right kinds, and wrong ones.
json_values = (
    st.none()
    | st.booleans()
    | st.integers(-2, 10)
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.lists(st.integers(), max_size=2)
)


@given(st.binary(max_size=200) | st.binary(min_size=REQUEST_MAX - 50, max_size=REQUEST_MAX + 50))
def test_any_bytes_are_a_request_or_one_line_saying_why_not(data):
    try:
        request = parse_request(data)
    except RequestError as err:
        assert str(err) and "\n" not in str(err)
        return
    match request:
        case NameSeat(seat, name):
            assert 1 <= seat <= MAX_SEATS and check_name(name) == name
        case SetRules(values):
            assert isinstance(values, dict)  # the loop checks them (config/next_rules.py)
        case NewGame():
            pass
        case DeleteClips(game):
            assert 1 <= game < 2**63
        case FileRules() | Hint():
            pass


@given(
    st.fixed_dictionaries(
        {"op": st.just("name") | json_values, "seat": json_values, "name": json_values},
        optional={"more": json_values},
    )
)
def test_a_request_is_taken_exactly_when_each_part_is_right(value):
    data = json.dumps(value).encode()
    seat, name = value["seat"], value["name"]
    try:
        checked = check_name(name) if isinstance(name, str) else None
    except ValueError:
        checked = None
    right = (
        value["op"] == "name"
        and "more" not in value
        and type(seat) is int
        and 1 <= seat <= MAX_SEATS
        and checked is not None
        and len(data) <= REQUEST_MAX
    )
    if right:
        assert parse_request(data) == NameSeat(seat, checked)
    else:
        with pytest.raises(RequestError):
            parse_request(data)


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        ({"op": "name", "seat": 9, "name": "Ann"}, "seat out of range: 1 to 8"),
        ({"op": "name", "seat": 2, "name": ""}, "a name cannot be empty"),
        ({"op": "name", "seat": 2, "name": "x" * 30}, "a name is at most 24 characters"),
        ({"op": "name", "seat": 2, "name": "A\x00n"}, "control characters (U+0000)"),
        ({"op": "name", "seat": True, "name": "Ann"}, '"seat" must be'),
        ({"op": "names", "seat": 2, "name": "Ann"}, 'unknown "op"'),
        ({"op": "rules", "values": [1]}, '"values" must be a JSON object of rule keys'),
        ({"op": "rules", "values": {}, "seat": 1}, 'unknown key "seat": give the values'),
        ({"op": "newgame", "now": True}, 'unknown key "now": a new game takes none'),
        ({"op": "filerules", "values": {}}, 'unknown key "values": it takes none'),
        ({"op": "clips"}, '"game" must be a game\'s id, 1 to 9223372036854775807'),
        ({"op": "clips", "game": 0}, '"game" must be'),
        ({"op": "clips", "game": 2**63}, '"game" must be'),
        ({"op": "clips", "game": "3"}, '"game" must be'),
        ({"op": "clips", "game": True}, '"game" must be'),
        ({"op": "clips", "game": 3, "all": True}, 'unknown key "all": give the game'),
        ({"op": "hint", "where": True}, 'unknown key "where": it takes none'),
    ],
)
def test_what_is_wrong_with_a_request_is_said(request_, said):
    with pytest.raises(RequestError, match=re.escape(said)):
        parse_request(json.dumps(request_).encode())


def test_a_games_clips_are_asked_by_its_id():
    assert parse_request(b'{"op": "clips", "game": 3}') == DeleteClips(3)


def test_a_hint_is_answered_with_what_the_box_said(control):
    """The one request whose asker reads an answer: the hint's words, as the screen's."""
    sock, loop = control()
    answer = Answer()
    assert answer.take()
    answer.give(None, said="there is a SET")
    assert answer.wait(0) == {"ok": True, "said": "there is a SET"}
    assert exchange(sock.path, b'{"op": "hint"}\n') == {"ok": True}  # this loop says nothing
    assert loop.seen == [Hint()]


class Loop:
    """The main loop's side: takes each request from the inbox and answers it."""

    def __init__(self, inbox: Inbox, answer) -> None:
        self.inbox, self.answer, self.seen = inbox, answer, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            select.select([self.inbox.fileno()], [], [], 0.05)  # woken by a put
            for item in self.inbox.drain():
                assert isinstance(item, Asked)
                asked = item.request
                seen = (asked.seat, asked.name) if isinstance(asked, NameSeat) else asked
                self.seen.append(seen)
                if item.reply.take() and self.answer is not None:
                    item.reply.give(self.answer(asked))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture
def control(tmp_path):
    made = []

    def make(answer=lambda item: None, **kwargs):
        inbox = Inbox()
        path = socket_path(tmp_path / "referee.db")
        sock = ControlSocket(path, inbox, **kwargs)
        loop = Loop(inbox, answer)
        made.append((sock, loop, inbox))
        return sock, loop

    yield make
    for sock, loop, inbox in made:
        sock.close()
        loop.stop()
        inbox.close()


def exchange(path, data: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
        peer.settimeout(WAIT_S)
        peer.connect(str(path))
        peer.sendall(data)
        return json.loads(peer.makefile("rb").readline())


def test_a_request_reaches_the_loop_and_its_answer_the_peer(control, tmp_path):
    sock, loop = control()
    assert sock.path == tmp_path / "referee.sock"
    assert stat.S_IMODE(sock.path.stat().st_mode) == 0o600  # the daemon's user alone
    assert exchange(sock.path, b'{"op": "name", "seat": 2, "name": " Ann "}\n') == {"ok": True}
    assert loop.seen == [(2, "Ann")]


def test_the_rules_and_a_new_game_reach_the_loop_as_what_they_ask(control):
    sock, loop = control()
    said = exchange(sock.path, b'{"op": "rules", "values": {"pointout_s": 5}}\n')
    assert said == {"ok": True}
    assert exchange(sock.path, b'{"op": "newgame"}\n') == {"ok": True}
    assert exchange(sock.path, b'{"op": "filerules"}\n') == {"ok": True}
    assert loop.seen == [SetRules({"pointout_s": 5}), NewGame(), FileRules()]


@pytest.mark.parametrize(
    "request_",
    [
        NameSeat(2, "Ann"),
        SetRules({"pointout_s": 5}),
        FileRules(),
        NewGame(),
        DeleteClips(3),
        Hint(),
    ],
)
def test_every_request_reads_back_from_its_line_as_itself(request_):
    assert parse_request(json.dumps(wire(request_)).encode()) == request_


def test_the_loops_refusal_is_the_answer(control):
    sock, _ = control(answer=lambda item: "seat 5 is not at this table (seats 1 to 4)")
    said = exchange(sock.path, b'{"op": "name", "seat": 5, "name": "Ann"}\n')
    assert said == {"error": "seat 5 is not at this table (seats 1 to 4)"}


def test_a_bad_request_never_reaches_the_loop(control):
    sock, loop = control()
    assert exchange(sock.path, b"not json\n") == {"error": "a request is one line of JSON"}
    too_long = b'{"op": "name", "seat": 2, "name": "' + b"x" * REQUEST_MAX + b'"}\n'
    assert exchange(sock.path, too_long) == {"error": f"a request is at most {REQUEST_MAX} bytes"}
    assert loop.seen == []


def test_a_silent_peer_is_dropped_and_the_next_one_served(control, monkeypatch):
    monkeypatch.setattr("referee.daemon.control_socket.READ_S", 0.05)
    sock, loop = control()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.settimeout(WAIT_S)
        silent.connect(str(sock.path))
        silent.sendall(b'{"op": "na')  # and nothing more
        assert silent.recv(100) == b""  # closed on it
        assert exchange(sock.path, b'{"op": "name", "seat": 1, "name": "Bo"}\n') == {"ok": True}
    assert loop.seen == [(1, "Bo")]


def test_an_answer_not_taken_in_time_is_dropped():
    answer = Answer()
    said = answer.wait(0.001)
    assert said == {"error": "the referee did not take it within 0.001 s", "trouble": True}
    assert not answer.take()  # the loop, later: it does not apply it


def test_an_answer_taken_but_not_saved_in_time_says_so():
    answer = Answer()
    assert answer.take()
    said = answer.wait(0.001)
    assert said["trouble"] and said["error"].startswith("on the box's screen, not saved yet")
    answer.give(None)
    answer.give("too late")  # the first answer is the one
    assert answer.wait(0) == {"ok": True}


def test_a_dead_daemons_socket_is_replaced_and_a_stranger_file_kept(tmp_path):
    path = tmp_path / "referee.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # its file stays, as a killed daemon's does
    inbox = Inbox()
    sock = ControlSocket(path, inbox)
    sock.close()
    assert not path.exists()  # removed at the close
    path.write_text("mine")
    assert open_control(path, inbox) is None  # said in the log; the game goes on
    assert path.read_text() == "mine"
    inbox.close()


def test_a_long_folder_is_no_obstacle(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    inbox = Inbox()
    sock = ControlSocket(socket_path(deep / "referee.db"), inbox)
    loop = Loop(inbox, lambda item: None)
    try:
        said = asyncio.run(ask(sock.path, {"op": "name", "seat": 3, "name": "Cy"}, WAIT_S))
        assert said == {"ok": True} and loop.seen == [(3, "Cy")]
    finally:
        sock.close()
        loop.stop()
        inbox.close()


def test_the_pages_client_says_when_no_daemon_answers(tmp_path):
    path = tmp_path / "referee.sock"
    with pytest.raises(NotRunning, match=r"^the referee is not running$"):
        asyncio.run(ask(path, {"op": "name", "seat": 1, "name": "Ann"}, WAIT_S))
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(path))
    mute.listen(1)  # listens, never answers
    try:
        with pytest.raises(NotRunning, match=r"did not answer within 0\.05 s"):
            asyncio.run(ask(path, {"op": "name", "seat": 1, "name": "Ann"}, 0.05))
    finally:
        mute.close()


class SlowDisk:
    """The main loop's side with a slow SD card: it takes every request that waits, shows
    them, and answers them all once the ledger has written them together, disk_s later."""

    def __init__(self, inbox: Inbox, disk_s: float) -> None:
        self.inbox, self.disk_s, self.applied = inbox, disk_s, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            select.select([self.inbox.fileno()], [], [], 0.05)
            taken = [item for item in self.inbox.drain() if item.reply.take()]
            self.applied += [item.request.name for item in taken]
            if taken:
                self._stop.wait(self.disk_s)  # one transaction for all of them
            for item in taken:
                item.reply.give(None)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def test_judges_writing_at_once_are_each_applied_or_told_busy_never_unanswered(tmp_path):
    # Two dozen phones' writes at once, each waiting as the page waits for the daemon
    # (ASK_S), the daemon answering within its ANSWER_S, the ledger taking 0.15 s a write.
    # Served one at a time, a phone was told "the referee did not answer" and its write
    # then applied behind its back (at 0.15 s each, 3 s is 20 writes). Scaled down to 1.5
    # and 1.0 s, a loaded machine's threads took the half second between the two: 15 of
    # 24 went unanswered though served at once.
    clients, wait_s = 24, ASK_S
    inbox = Inbox()
    sock = ControlSocket(socket_path(tmp_path / "referee.db"), inbox, answer_s=ANSWER_S)
    loop = SlowDisk(inbox, disk_s=0.15)
    start = threading.Barrier(clients)
    answers: dict[str, dict | str] = {}

    def judge(n: int) -> None:
        name = f"Judge{n}"
        start.wait()
        try:
            answers[name] = asyncio.run(
                ask(sock.path, {"op": "name", "seat": 1 + n % MAX_SEATS, "name": name}, wait_s)
            )
        except NotRunning as err:
            answers[name] = str(err)

    threads = [threading.Thread(target=judge, args=(n,)) for n in range(clients)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_S)
    finally:
        sock.close()
        loop.stop()
        inbox.close()
    assert len(answers) == clients
    unanswered = {name: said for name, said in answers.items() if isinstance(said, str)}
    assert unanswered == {}
    ok = {name for name, said in answers.items() if said == {"ok": True}}
    busy = {name for name, said in answers.items() if said != {"ok": True}}
    for name in busy:
        assert answers[name] == {"error": BUSY, "trouble": True}
    assert sorted(loop.applied) == sorted(ok)  # nothing lost, nothing applied unsaid
    assert len(ok) >= MAX_ASKS  # as many as may wait at once are served


def test_the_daemons_stop_cuts_off_peers_halfway_and_tells_them(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "referee.daemon.control_socket.READ_S", 60.0
    )  # they would hold the stop that long
    inbox = Inbox()
    sock = ControlSocket(socket_path(tmp_path / "referee.db"), inbox)
    peers = []
    for _ in range(MAX_ASKS):
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.settimeout(WAIT_S)
        peer.connect(str(sock.path))
        peer.sendall(b'{"op": "na')
        peers.append(peer)
    closing = threading.Thread(target=sock.close)
    closing.start()
    closing.join(WAIT_S)
    assert not closing.is_alive()
    stopped = json.dumps({"error": STOPPED, "trouble": True}).encode() + b"\n"
    for peer in peers:  # told, or never accepted: cut off with the listening socket
        with peer:
            try:
                said = peer.makefile("rb").readline()
            except ConnectionResetError:
                said = b""
        assert said in (b"", stopped)
    inbox.close()
