"""The phone as the camera (issue 32, item 7; docs/web.md, "Photo"): a judge's photo sent
through the page's server (Starlette's test client, and a real uvicorn for what only a
socket can send), read by the real daemon's camera's process where the box has no camera
of its own, and what the box sees shown back; hostile uploads refused, one line each."""

import asyncio
import os
import signal
import socket
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.audio.clips import SNAPSHOT, clip_name
from referee.camera.sources import FolderSource
from referee.config import CameraJudge
from referee.rules import Judgement
from referee.store.paths import clips_folder, phone_path, pin_path
from referee.store.pin import read_pin
from referee.view import TableSeen
from referee.web import photo_api
from referee.web.photo_api import ARRIVING, PHOTO_MAX

from .camera_frames import (
    WAIT_S,
    damaged_inside,
    flat,
    no_set_table,
    set_table,
    set_table_taken,
    show,
)
from .conftest import SAME, also_suppressed
from .daemon import Daemon
from .test_web import served, sign_in

SET = (0, 1, 10)  # three of SETS_FACES that make a SET (tests/test_camera_judge_daemon.py)
JPEG = {**SAME, "Content-Type": "image/jpeg"}


def photo(client, data: bytes, headers=JPEG):
    return client.post("/api/photo", content=data, headers=headers)


@pytest.fixture
def phone(store):
    """The daemon with no camera of its own ([camera] source = "off"), hint_where on."""
    running = Daemon(store, hint_where=True)
    yield running
    running.stop()


def _sent(judge, phone, data: bytes, cards: int):
    """A photo sent, answered once the box read it; the loop has it as its latest."""
    answer = photo(judge, data)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["read"] is True and body["camera"] == "phone" and len(body["cards"]) == cards
    phone.wait_for(lambda: (phone.app.watching.view() or TableSeen(0, 0, 0)).cards == cards, "in")
    return body


@pytest.mark.slow  # the camera's own process, OpenCV loaded: conftest.py
def test_a_phones_photo_is_what_the_box_sees_and_the_set_only_once_asked(judge, phone):
    assert phone.app.watching.pid is None  # no OpenCV before a phone is used
    before = judge.post("/api/table", json={}, headers=SAME).json()
    assert (before["camera"], before["cards"], before["age_s"]) == (None, [], None)
    body = _sent(judge, phone, set_table(), 12)
    assert phone.app.watching.pid is not None
    assert all(card["sure"] for card in body["cards"])
    assert body["cards"][0].keys() == {"number", "color", "shading", "shape", "sure"}
    assert (body["hint"], body["set"]) == (None, None)  # the table has not asked
    assert 0 <= body["age_s"] < WAIT_S
    assert judge.post("/api/hint", json={}, headers=SAME).json() == {"hint": "there is a SET"}
    asked = judge.post("/api/table", json={}, headers=SAME).json()
    assert (asked["hint"], asked["set"]) == ("there is a SET", None)  # never which one
    judge.post("/api/hint", json={}, headers=SAME)  # again within 5 s: where
    where = judge.post("/api/table", json={}, headers=SAME).json()
    assert where["hint"].startswith("there is a SET · ") and len(where["set"]) == 3
    # A new photo: what was asked of the last one is not said of it.
    again = _sent(judge, phone, no_set_table(), 12)
    assert (again["hint"], again["set"]) == (None, None)
    assert "● cam" in phone.shown()


@pytest.mark.slow  # the camera's own process, OpenCV loaded: conftest.py
def test_a_reading_is_stamped_when_its_photo_arrived_not_when_it_was_read(
    judge, phone, monkeypatch
):
    """The camera's process stopped while a photo arrives: read once it goes on, the
    reading is stamped before the page's answer, which did not wait for it."""
    _sent(judge, phone, set_table(), 12)
    pid, last = phone.app.watching.pid, phone.app.watching._seen[-1].t_ns
    assert pid is not None
    monkeypatch.setattr(photo_api, "READ_S", 0.3)
    os.kill(pid, signal.SIGSTOP)
    try:
        sent_ns = time.monotonic_ns()
        answer = photo(judge, no_set_table())
        answered_ns = time.monotonic_ns()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert answer.status_code == 200 and answer.json()["read"] is False
    readings = phone.app.watching._seen
    phone.wait_for(lambda: readings[-1].t_ns > last, "the photo read", WAIT_S)
    assert sent_ns <= readings[-1].t_ns <= answered_ns


@pytest.mark.slow  # the camera's own process, OpenCV loaded: conftest.py
def test_a_claim_and_its_verdict_from_the_phones_photos(judge, two_seats):
    """Judge = "decide": a photo before the call, two after three cards were taken; and
    the call's snapshot, the photo at its press, beside its clip as the box's camera's."""
    game = two_seats
    from referee.store.pin import ensure_pin

    ensure_pin(pin_path(game))
    daemon = Daemon(game, judge=CameraJudge.DECIDE, players=2)
    try:
        from starlette.testclient import TestClient

        from referee.web.server import create_app

        with TestClient(create_app(game, pin_path(game))) as client:
            pin = read_pin(pin_path(game))
            assert client.post("/api/login", json={"pin": pin}, headers=SAME).status_code == 200
            _sent(client, daemon, set_table(), 12)
            daemon.press("P1")
            daemon.wait_for(lambda: daemon.app.session.state.pending, "P1's call")
            _sent(client, daemon, set_table_taken(SET), 9)
            _sent(client, daemon, set_table_taken(SET), 9)
        state = lambda: daemon.app.session.state  # noqa: E731
        daemon.wait_for(lambda: state().calls.last.verdicts == (Judgement.VALID,), "valid")
        assert "SET · 3 red striped ovals" in flat(daemon.shown())
        name = clip_name(daemon.app.session.ledger.game_id, state().calls.last.first_ns)
        snapshot = clips_folder(game) / f"{name}{SNAPSHOT}"
        daemon.wait_for(snapshot.exists, "the call's snapshot", WAIT_S)
    finally:
        daemon.stop()


@pytest.mark.slow  # the camera's own process, OpenCV loaded: conftest.py
def test_a_box_looking_for_its_own_camera_says_how_the_phones_become_it(judge, store):
    """`auto` with no camera found: the phones are not its camera, and the answer says
    what makes them so, not that the box reads the table itself."""
    if list(Path("/dev").glob("video*")):
        pytest.skip("a camera here: `auto` may find it")
    daemon = Daemon(store, camera="auto")
    try:
        answer = photo(judge, no_set_table())
        assert answer.status_code == 409
        assert answer.json()["error"] == (
            'the box looks for its own camera ([camera] source = "auto") and has none'
            ' now: with source = "off" the phones are its camera'
        )
        assert list(phone_path(store).iterdir()) == []  # nothing kept
    finally:
        daemon.stop()


def test_a_box_with_its_own_camera_reads_no_phone(judge, store, frames):
    show(frames, "sets.jpg", set_table(), mtime_ns=10**18)
    daemon = Daemon(store, camera=str(frames))
    try:
        answer = photo(judge, no_set_table())
        assert answer.status_code == 409
        assert "its own camera" in answer.json()["error"]
        assert list(phone_path(store).iterdir()) == []  # nothing kept
    finally:
        daemon.stop()


@pytest.mark.parametrize(
    ("data", "headers", "status", "said"),
    [
        (b"GIF89a" + bytes(100), JPEG, 400, "the photo: not a JPEG or PNG image"),
        (b"", JPEG, 400, "the photo: an empty file"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", JPEG, 400, "the photo: a JPEG cut short"),
        (b"x", {**SAME, "Content-Type": "image/heic"}, 415, "not image/heic"),
        (b"x", {**JPEG, "Content-Length": str(PHOTO_MAX + 1)}, 413, "at most 16 MB"),
    ],
)
def test_what_is_not_a_photo_is_refused_in_one_line(judge, store, data, headers, status, said):
    """No daemon needed: each is refused before the box is asked."""
    answer = photo(judge, data, headers)
    assert answer.status_code == status and said in answer.json()["error"]
    assert not (phone_path(store) / ARRIVING).exists()


@settings(
    max_examples=40, suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture)
)
@given(
    st.sampled_from([b"", b"\xff\xd8", b"\x89PNG\r\n\x1a\n"]),
    st.binary(max_size=4000),
    st.sampled_from(["image/jpeg", "image/png", "image/gif", "text/plain", ""]),
)
def test_whatever_is_sent_as_a_photo_is_refused_in_a_line_or_taken(judge, store, head, body, kind):
    """No daemon runs: a photo that passes every check is 503 when the box is asked; the
    rest are refused before, in one line; nothing is left behind either way."""
    answer = photo(judge, head + body, {**SAME, "Content-Type": kind})
    assert answer.status_code in (400, 415, 503), answer.text
    said = answer.json()["error"]
    assert "\n" not in said and len(said) < 200
    left = list(phone_path(store).iterdir()) if phone_path(store).exists() else []
    assert left == []


def test_a_photo_needs_the_pin_and_the_pages_origin(client, judge, store):
    assert photo(client.__class__(client.app), set_table()).status_code in (401, 403)
    other = {**JPEG, "Origin": "http://evil.example"}
    assert photo(judge, set_table(), other).status_code == 403
    assert judge.post("/api/table", json={}, headers={}).status_code == 403
    judge.post("/api/logout", headers=SAME)
    assert photo(judge, set_table()).status_code == 401
    assert judge.post("/api/table", json={}, headers=SAME).status_code == 401
    assert not phone_path(store).exists()  # nothing written before the PIN


def _raw(address, head: str, body: bytes = b"") -> socket.socket:
    sock = socket.create_connection(address)
    sock.sendall(head.encode() + b"\r\n" + body)
    return sock


def _login(address, store) -> str:
    pin = f'{{"pin": "{read_pin(pin_path(store))}"}}'
    sock = _raw(address, _head(address, "/api/login", "application/json", len(pin)), pin.encode())
    answer = sock.makefile("rb").read(4096).decode()
    sock.close()
    return answer.split("referee_session=")[1].split(";")[0]


def _head(address, path, kind, length=None, cookie=None) -> str:
    host = f"{address[0]}:{address[1]}"
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", f"Origin: http://{host}"]
    lines += [f"Content-Type: {kind}", "Connection: close"]
    lines.append(
        f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    )
    if cookie:
        lines.append(f"Cookie: referee_session={cookie}")
    return "\r\n".join(lines) + "\r\n"


def _status(sock: socket.socket) -> int:
    sock.settimeout(30)
    line = sock.makefile("rb").readline()
    return int(line.split()[1]) if line else 0


def test_a_huge_photo_sent_without_its_length_is_refused_past_the_bound(store):
    address, stop = served(store)
    try:
        cookie = _login(address, store)
        sock = _raw(address, _head(address, "/api/photo", "image/jpeg", cookie=cookie))
        chunk = b"\xff\xd8" + bytes(1 << 20)
        sent = 0
        try:
            while sent <= PHOTO_MAX + (1 << 20):
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused, and closed, before all of it came
        assert _status(sock) == 413
        sock.close()
        assert not (phone_path(store) / ARRIVING).exists()
    finally:
        stop()


def test_a_slow_sender_holds_one_photo_at_most_and_is_dropped(store):
    from referee.web.guard import Guard

    address, stop = served(store, Guard(request_s=1.0))
    try:
        cookie = _login(address, store)
        slow = _raw(address, _head(address, "/api/photo", "image/jpeg", 1000, cookie), b"\xff\xd8")
        deadline = time.monotonic() + 5
        while not (phone_path(store) / ARRIVING).exists():  # it is arriving
            assert time.monotonic() < deadline
            time.sleep(0.01)
        other = _raw(address, _head(address, "/api/photo", "image/jpeg", 2, cookie), b"\xff\xd8")
        assert _status(other) == 429  # one photo at a time
        assert _status(slow) in (0, 400)  # its 1 s ran out: closed, or told
        slow.close()
        deadline = time.monotonic() + 5
        while (phone_path(store) / ARRIVING).exists():  # and what it sent is gone
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        stop()


@settings(max_examples=60)
@given(st.binary(max_size=3000), st.sampled_from([b"\xff\xd8", b"\x89PNG\r\n\x1a\n"]))
def test_a_header_is_judged_alike_mapped_or_read(tmp_path_factory, data, start):
    """The page maps the upload; `referee look` reads it whole: the same verdict."""
    import mmap

    from referee.errors import PhotoFileError
    from referee.photo_header import photo_size

    path = tmp_path_factory.mktemp("h") / "p"
    path.write_bytes(start + data)

    def judged(of):
        try:
            return photo_size(of, "p")
        except PhotoFileError as err:
            return str(err)

    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ) as mapped:
        assert judged(mapped) == judged(start + data)


def test_the_folder_of_photos_stamps_a_frame_when_its_file_was_written(tmp_path):
    # The table drawn first: drawn between the two clocks' readings (half a second where no
    # test of this worker drew it before), it moved the frame's time that far off.
    table = set_table()
    written_ns = time.time_ns() - 3_000_000_000  # three seconds ago
    show(tmp_path, "phone.jpg", table, mtime_ns=written_ns)
    before = time.monotonic_ns()
    frame = FolderSource(tmp_path, arrived=True).read()
    assert frame is not None
    assert before - 3_000_000_000 - 50_000_000 <= frame.t_ns <= before - 3_000_000_000 + 50_000_000
    # The tests' folder camera stamps when it reads, as before.
    os.utime(tmp_path / "phone.jpg", ns=(written_ns + 1, written_ns + 1))
    plain = FolderSource(tmp_path).read()
    assert plain is not None and plain.t_ns >= before


# In a real browser: Debian's Chromium, never one downloaded (docs/web.md)


def test_a_photo_taken_on_the_page_is_shown_as_the_box_reads_it_in_a_browser(
    store, phone, browser, tmp_path
):
    """A photo larger than the box reads (a 4096-pixel table) is shrunk by the page, sent,
    read, and drawn: twelve cards, the SET's three outlined once the table asked where."""
    import cv2
    import numpy as np

    big = cv2.resize(cv2.imdecode(np.frombuffer(set_table(), np.uint8), 1), (4096, 3072))
    path = tmp_path / "table.jpg"
    assert cv2.imwrite(str(path), big, [cv2.IMWRITE_JPEG_QUALITY, 95])
    (host, port), stop = served(store)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.goto(f"http://{host}:{port}/")
        assert not page.locator("#photographing").is_visible()  # judges only
        sign_in(page, store)
        page.set_input_files("#photo", str(path))
        page.wait_for_selector("#photoed >> text=12 cards, 12 read surely", timeout=WAIT_S * 1000)
        assert page.locator("#layout .tile").count() == 12
        assert page.locator("#layout .tile.inset").count() == 0  # the table has not asked
        sent = next(phone_path(store).glob("phone.*")).stat().st_size
        assert sent < path.stat().st_size / 4  # shrunk to the box's 2048 pixels
        page.click("#hint")
        page.click("#hint")  # again within 5 s: where, on the screen and on the page
        page.wait_for_selector("#layout .tile.inset >> nth=2", timeout=5000)
        assert page.locator("#layout .tile.inset").count() == 3
        label = page.locator("#layout .tile >> nth=0").get_attribute("aria-label")
        assert label.split()[1] in ("red", "green", "purple")
    finally:
        page.close()
        stop()


def test_a_photo_the_camera_cannot_read_is_answered_at_once_in_words(tmp_path):
    """The camera's process could not read the photo that just arrived (its header whole,
    its data damaged): the phone's answer says why at once, not "read: false" ten seconds
    later; a photo it could not read before this one arrived is not this one's."""
    arrived_ns = 50 * 10**9
    asked: list[object] = []
    unread = {"t_ns": arrived_ns + 1000, "why": "a damaged JPEG (Corrupt JPEG data: ...)"}
    said = {"camera": "phone", "watching": True, "t_ns": arrived_ns - 10**9, "age_ms": 1000}

    async def ask(request):
        asked.append(request)
        return {"said": {**said, "cards": [], "hint": None, "set": None, "unread": unread}}

    api = photo_api.PhotoApi(tmp_path / "referee.db", lambda r: None, ask, lambda: 0, ValueError)
    answer = photo_api._for_page(asyncio.run(api._reading(arrived_ns)))
    assert len(asked) == 1  # at once
    assert answer["read"] is False and answer["unread"] == unread["why"]
    unread["t_ns"] = arrived_ns - 10**9  # an older photo's: this one is still awaited
    clock = iter([0, 0, photo_api.READ_S * 2e9])
    api = photo_api.PhotoApi(
        tmp_path / "referee.db", lambda r: None, ask, lambda: int(next(clock)), ValueError
    )
    answer = photo_api._for_page(asyncio.run(api._reading(arrived_ns)))
    assert answer["read"] is False and "unread" not in answer


@pytest.mark.slow  # the camera's own process, OpenCV loaded: conftest.py
def test_a_damaged_photo_is_answered_in_a_line_and_the_table_kept(judge, phone):
    _sent(judge, phone, set_table(), 12)
    sent = time.monotonic()
    answer = photo(judge, damaged_inside(no_set_table()))
    took = time.monotonic() - sent
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["read"] is False and body["unread"].startswith("a damaged JPEG (Corrupt JPEG")
    assert took < photo_api.READ_S  # not the whole wait: told
    assert len(judge.post("/api/table", json={}, headers=SAME).json()["cards"]) == 12
