"""The calls' clips on the page (docs/web.md, "Clips"): each game's clips with their
markers, the sound whole or a range of it, its envelope as the box draws it, deleting them
through the daemon with the PIN; every hostile name, range and query refused with a 4xx
in JSON, and nothing outside the clips' folder ever served. Real clips, real files."""

import asyncio
import contextlib
import functools
import http.client
import json
import os
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from referee.audio.clips import Clip, ClipStore, Marker
from referee.audio.onsets import find_onsets
from referee.audio.replay import waveform
from referee.audio.wav import read_mono
from referee.rules import Press, parse_script
from referee.store.paths import clips_folder, pin_path
from referee.store.pin import ensure_pin, read_pin
from referee.store.store import Store
from referee.web import clips_api
from referee.web.server import create_app
from referee.web.worker import Worker

from .conftest import ROOT, SAME
from .daemon import Daemon
from .test_web import TRAVERSALS, four_playing, raw, served, sign_in

RATE = 48_000
SECRET = b"RIFF not a clip: the box's secret"


def room_clip(
    game: int,
    call_s: float,
    presses: list[tuple[int, float]],
    seconds: float = 3.0,
    before_s: float = 1.0,
) -> tuple[Clip, np.ndarray]:
    """A call's clip as the box cuts it, from before_s before its first press: a room's murmur,
    each press's click at its place and a "Set!" just before it (the hiss of its /s/, then
    a voiced vowel dying away), with the voice onsets the box's detector finds in it.

    The same for the same arguments (its noise is seeded by them), so each is made once a
    process: the store fixture's two clips, for some fifty tests, took a tenth of a second
    of CPU each time (most of it the onsets' detection). The samples are read-only, as the
    tests that ask for the same clip share them."""
    return _room_clip(game, call_s, tuple(presses), seconds, before_s)


@functools.cache
def _room_clip(
    game: int,
    call_s: float,
    presses: tuple[tuple[int, float], ...],
    seconds: float,
    before_s: float,
) -> tuple[Clip, np.ndarray]:
    rng = np.random.default_rng(round(call_s * 1000) + game)
    n = round(seconds * RATE)
    t = np.arange(n) / RATE
    samples = 0.01 * rng.standard_normal(n)
    markers = []
    for player, at_s in presses:
        at = round((before_s + at_s) * RATE)
        voice = max(0, at - round(0.004 * RATE))
        tail = t[: n - voice]
        hiss = np.diff(rng.standard_normal(len(tail) + 1)) * (tail < 0.06)  # high-passed
        pitch = 140 + 40 * player
        vowel = sum(np.sin(2 * np.pi * k * pitch * tail) / k for k in range(1, 6))
        vowel *= (tail >= 0.06) * np.exp(-np.maximum(tail - 0.06, 0) / 0.12)
        samples[voice:] += 0.12 * hiss + 0.3 * vowel
        samples[at : at + 48] += 0.9  # the buzzer's click
        markers.append(Marker(player, at))
    samples = np.clip(samples, -1, 1)
    call_ns = round(call_s * 1e9)
    onsets = tuple(o.sample for o in find_onsets(samples, RATE))
    first_ns = call_ns - round(before_s * 1e9)
    clip = Clip(game, call_ns, RATE, first_ns, tuple(markers), onsets)
    samples.setflags(write=False)
    return clip, samples


@pytest.fixture
def store(store):
    """Game 1: P2's call at 1 s, P4 4.2 ms after; its clip, and one of another game."""
    with Store.open(store) as opened:
        opened.append(1, Press(player=4, t_ns=1_004_200_000))
    clips = ClipStore(clips_folder(store), max_bytes=10**9)
    clips.save(*room_clip(1, 1.0, [(2, 0.0), (4, 0.0042)]))
    clips.save(*room_clip(2, 5.0, [(1, 0.0)]))
    return store


@pytest.fixture
def kept(store):
    [kept] = ClipStore(clips_folder(store), max_bytes=0).clips(1)
    return kept


def test_a_games_clips_with_their_markers_and_where_to_get_them(client, kept):
    answer = client.get("/api/games/1/clips")
    assert answer.status_code == 200
    name = "game00001-call000001000000000"
    [clip] = answer.json()["clips"]
    assert clip == {
        "name": name,
        "call_ms": 1000,
        "first_ms": 0,
        "sample_rate": RATE,
        "samples": 3 * RATE,
        "presses": [{"player": 2, "sample": RATE}, {"player": 4, "sample": RATE + 202}],
        "onsets": list(kept.clip.onsets),
        "soft": list(kept.clip.soft),
        "gaps": [],
        "wav": f"/api/clips/{name}.wav",
        "envelope": f"/api/clips/{name}/envelope",
    }
    assert kept.clip.onsets  # the shouts were heard
    # The call it belongs to, as the game's history has it.
    assert client.get("/api/games/1").json()["calls"][0]["at_ms"] == clip["call_ms"]
    assert client.get("/api/games/3/clips").json() == {"game": 3, "clips": []}


def test_the_sound_is_the_clips_wav_to_play_and_download(client, kept):
    data = kept.sound.read_bytes()
    answer = client.get(f"/api/clips/{kept.clip.name}.wav")
    assert answer.status_code == 200 and answer.content == data
    assert answer.headers["content-type"] == "audio/wav"
    assert answer.headers["accept-ranges"] == "bytes"
    disposition = f'attachment; filename="{kept.clip.name}.wav"'
    assert answer.headers["content-disposition"] == disposition
    head = client.head(f"/api/clips/{kept.clip.name}.wav")
    assert head.status_code == 200 and head.headers["content-length"] == str(len(data))


@pytest.mark.parametrize(
    ("asked", "first", "last"),
    [
        ("bytes=0-99", 0, 99),
        ("bytes=100-", 100, None),
        ("bytes=-10", -10, None),
        ("bytes=5-5", 5, 5),
        ("bytes=0-999999999", 0, None),  # past the end: to the end
        ("bytes=-999999999", 0, None),  # more than there is: all of it
    ],
)
def test_a_range_of_the_sound_is_a_206(client, kept, asked, first, last):
    data = kept.sound.read_bytes()
    answer = client.get(f"/api/clips/{kept.clip.name}.wav", headers={"Range": asked})
    want = data[first : None if last is None else last + 1]
    assert answer.status_code == 206 and answer.content == want  # the whole file too
    start = first % len(data)
    end = start + len(want) - 1
    assert answer.headers["content-range"] == f"bytes {start}-{end}/{len(data)}"


@pytest.mark.parametrize(
    "asked",
    ["bytes=0-1,5-9", "items=0-9", "bytes=9-1", "bytes=-", "bytes 0-9", "bytes=x-"],
)
def test_a_range_this_server_does_not_take_is_ignored_as_rfc_9110_allows(client, kept, asked):
    answer = client.get(f"/api/clips/{kept.clip.name}.wav", headers={"Range": asked})
    assert answer.status_code == 200 and answer.content == kept.sound.read_bytes()


def test_a_range_past_the_end_is_a_416_in_json(client, kept):
    size = kept.sound.stat().st_size
    for asked in (f"bytes={size}-", "bytes=-0", f"bytes={10**18}-{10**18 + 5}"):
        answer = client.get(f"/api/clips/{kept.clip.name}.wav", headers={"Range": asked})
        assert answer.status_code == 416 and answer.headers["content-range"] == f"bytes */{size}"
        assert answer.json() == {"error": f"the clip has {size} bytes"}


def test_if_range_gets_the_whole_sound(client, kept):
    """The server gives no validator, so a range If-Range guards is never known good."""
    answer = client.get(
        f"/api/clips/{kept.clip.name}.wav", headers={"Range": "bytes=0-9", "If-Range": '"x"'}
    )
    assert answer.status_code == 200 and answer.content == kept.sound.read_bytes()


@pytest.mark.parametrize("columns", [1, 7, 600, 4096])
def test_the_envelope_is_the_boxs_waveform_of_the_clip(client, kept, columns):
    samples, _ = read_mono(kept.sound)
    lows, highs = waveform(samples, columns)
    body = client.get(f"/api/clips/{kept.clip.name}/envelope?columns={columns}").json()
    assert (body["from"], body["to"], body["columns"]) == (0, len(samples), columns)
    assert np.allclose(body["low"], lows, atol=1e-4) and np.allclose(body["high"], highs, atol=1e-4)


def test_the_envelope_of_a_part_of_the_clip_zooms_in(client, kept):
    """Around the presses, as the page's zoom draws them: fewer samples than columns too."""
    samples, _ = read_mono(kept.sound)
    for start, end, columns in [(RATE - 7200, RATE + 17000, 600), (RATE, RATE + 100, 300)]:
        lows, highs = waveform(samples[start:end], columns)
        path = f"/api/clips/{kept.clip.name}/envelope?columns={columns}&from={start}&to={end}"
        body = client.get(path).json()
        assert np.allclose(body["low"], lows, atol=1e-4)
        assert np.allclose(body["high"], highs, atol=1e-4)
    assert client.get(f"/api/clips/{kept.clip.name}/envelope").json()["columns"] == 600


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("columns=0", "columns must be a whole number from 1 to 4096; got '0'"),
        ("columns=4097", "columns must be a whole number from 1 to 4096; got '4097'"),
        ("columns=1e3", "columns must be"),
        ("from=144000", "from (a sample) must be a whole number from 0 to 143999"),
        ("from=10&to=10", "to (a sample) must be a whole number from 11 to 144000"),
        ("to=144001", "to (a sample) must be"),
        ("columns=5&columns=6", "columns given twice"),
        ("start=1", "unknown parameter 'start': this route takes columns and from and to"),
    ],
)
def test_a_bad_envelope_query_is_a_400_that_says_why(client, kept, query, said):
    answer = client.get(f"/api/clips/{kept.clip.name}/envelope?{query}")
    assert answer.status_code == 400 and answer.json()["error"].startswith(said)


@pytest.mark.parametrize(
    ("path", "status", "said"),
    [
        ("/api/clips/game00001-call000001000000001.wav", 404, "no clip"),
        ("/api/clips/game1-call000001000000000.wav", 404, "no clip"),  # not its spelling
        ("/api/clips/game000001-call000001000000000.wav", 404, "no clip"),
        ("/api/clips/game00001-call000001000000000.json", 404, "no clip"),
        ("/api/clips/game00001-call000001000000000", 404, "no clip"),
        ("/api/clips/game00001-call000001000000000.WAV", 404, "no clip"),
        ("/api/clips/" + "9" * 5000 + ".wav", 404, "no clip '999999999999999999999999...'"),
        ("/api/clips/game00001-call000001000000000.wav?x=1", 400, "unknown parameter 'x'"),
        ("/api/clips/nothing/envelope", 404, "no clip 'nothing'"),
        ("/api/games/0/clips", 400, "a game's id must be a whole number from 1 to"),
        ("/api/games/9223372036854775808/clips", 400, "a game's id must be"),
        ("/api/games/1/clips?all=1", 400, "unknown parameter 'all'"),
    ],
)
def test_a_name_that_is_no_clip_is_a_4xx_in_json(client, kept, path, status, said):
    answer = client.get(path)
    assert answer.status_code == status and answer.json()["error"].startswith(said)


@pytest.fixture
def planted(store, tmp_path):
    """A secret beside the store and outside the clips' folder, and links to it in the
    folder under a clip's own names: the box never writes a link there."""
    secret = tmp_path / "secret.wav"
    secret.write_bytes(SECRET)
    folder = clips_folder(store)
    clip, _ = room_clip(1, 9.0, [(3, 0.0)])
    (folder / f"{clip.name}.wav").symlink_to(secret)
    (folder / f"{clip.name}.json").write_text(clip.to_json())
    other, samples = room_clip(1, 11.0, [(3, 0.0)])
    ClipStore(folder, max_bytes=10**9).save(other, samples)
    (folder / f"{other.name}.json").rename(tmp_path / "other.json")
    (folder / f"{other.name}.json").symlink_to(tmp_path / "other.json")
    return [clip.name, other.name]


def test_a_link_in_the_clips_folder_is_no_clip_and_never_followed(client, planted):
    listed = client.get("/api/games/1/clips").json()["clips"]
    assert [c["name"] for c in listed] == ["game00001-call000001000000000", *planted]
    assert "damaged" not in listed[0]
    assert [c["damaged"] for c in listed[1:]] == [
        "its sound: a link, not a file the box wrote",
        "its JSON: a link, not a file the box wrote",
    ]
    for name in planted:
        for path in (f"/api/clips/{name}.wav", f"/api/clips/{name}/envelope"):
            answer = client.get(path)
            assert answer.status_code == 404 and SECRET not in answer.content


def test_a_link_put_in_after_the_listing_is_not_followed(store, kept, tmp_path):
    """Between the clip's lookup and its sending, the sound becomes a link: O_NOFOLLOW."""
    secret = tmp_path / "secret.wav"
    secret.write_bytes(SECRET)
    sound = clips_api._Sound(kept, Worker(), None, None)
    kept.sound.unlink()
    kept.sound.symlink_to(secret)
    with pytest.raises(clips_api.HTTPException) as refused:
        asyncio.run(sound({"type": "http", "method": "GET"}, None, None))
    assert refused.value.status_code == 404


def test_a_hundred_downloads_of_a_sound_leave_the_history_to_the_other_phones(store, kept):
    """The attack: 100 connections (ten phones, ten each) download one clip's WAV. Before,
    its reads waited on the history's one reading thread, and while 8 waited every
    history, stats and clips request of the other phones was a 503; sounds have a lane of
    their own now."""
    (host, port), stop = served(store)
    try:
        request = f"GET /api/clips/{kept.clip.name}.wav HTTP/1.1\r\nHost: localhost\r\n\r\n"
        downloads = []
        for n in range(100):
            sock = socket.create_connection(
                (host, port), source_address=(f"127.0.0.{20 + n % 10}", 0)
            )
            downloads.append(sock)
        for sock in downloads:
            sock.sendall(request.encode())
        asked = ["/api/games", "/api/stats", "/api/games/1/clips", "/api/games/1"] * 5
        others = [
            raw(
                (host, port),
                f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode(),
            )
            for path in asked
        ]
        assert [status for status, _, _ in others] == [200] * len(asked)
        for sock in downloads:  # and every download is whole
            sock.settimeout(10)
            answer = http.client.HTTPResponse(sock, method="GET")
            answer.begin()
            assert answer.status == 200 and answer.read() == kept.sound.read_bytes()
            sock.close()
    finally:
        stop()


def test_a_damaged_clip_is_listed_as_such_and_has_nothing_to_play(client, kept):
    """A flipped bit of its fmt chunk's size: `wave` raised RuntimeError, and the game's
    list of clips was a 500 (issue 29)."""
    data = bytearray(kept.sound.read_bytes())
    data[19] ^= 0x80
    kept.sound.write_bytes(bytes(data))
    answer = client.get("/api/games/1/clips")
    assert answer.status_code == 200
    [listed] = answer.json()["clips"]
    assert listed["name"] == kept.clip.name and listed["call_ms"] == 1000
    assert listed["damaged"].startswith("its sound: not a PCM WAV file that can be read (")
    for path in (f"/api/clips/{kept.clip.name}.wav", f"/api/clips/{kept.clip.name}/envelope"):
        assert client.get(path).status_code == 404


def test_a_fifo_named_like_a_clip_never_holds_the_pages_reader(store, kept):
    """It froze the page's history, stats and clips for good: its one reading thread
    waited on the FIFO for a writer that never came."""
    folder = clips_folder(store)
    os.mkfifo(folder / "game00001-call000002000000000.json")
    kept.sound.unlink()
    os.mkfifo(kept.sound)
    address, stop = served(store)
    get = b"GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    try:
        for path in (b"/api/games/1/clips", b"/api/clips/%s.wav" % kept.clip.name.encode()):
            raw(address, get % path)  # within raw's 5 s, or a timeout
        status, _, body = raw(address, get % b"/api/games/1/clips")
        assert status == 200
        assert [c["damaged"] for c in json.loads(body)["clips"]] == [
            "its sound: not a regular file (a FIFO)",
            "its JSON: not a regular file (a FIFO)",
        ]
        assert raw(address, get % b"/api/games")[0] == 200  # the history still answers
    finally:
        for fifo in (kept.sound, folder / "game00001-call000002000000000.json"):
            with contextlib.suppress(OSError):  # ENXIO: nobody waits on it
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let a reader go
        stop()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    store = four_playing(folder)
    clip, samples = room_clip(1, 1.0, [(2, 0.0)], seconds=0.5, before_s=0.2)
    sound = ClipStore(clips_folder(store), max_bytes=10**9).save(clip, samples)
    (folder / "secret.txt").write_bytes(SECRET)
    address, stop = served(store)
    yield address, clip.name, sound.read_bytes()
    stop()


CLIP_ROUTES = ["/api/clips/{}.wav", "/api/clips/{}/envelope", "/api/clips/{}"]


@pytest.mark.parametrize("route", CLIP_ROUTES)
@pytest.mark.parametrize(
    "name",
    [
        "../secret.txt",
        "..%2fsecret.txt",
        "..%2F..%2Fsecret",
        "%2e%2e%2fsecret.txt",
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "..",
        ".",
        "%00",
        "game00001-call000001000000000%00",
        "game00001-call000001000000000%2f..",
        "..%5csecret.txt",
        "game99999999999999999999-call000001000000000",
        "game00001-call99999999999999999999999999999999999999",
        "*",
        "game*",
    ],
)
def test_no_clip_name_leaves_the_clips_folder(hostile, route, name):
    address, _, _ = hostile
    path = route.format(name)
    status, kind, body = raw(
        address, f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
    )
    assert status in (400, 404, 405), (path, status, body)
    assert kind == "application/json" or status == 400  # uvicorn's own 400: a text line
    assert SECRET not in body and b"RIFF" not in body


def test_the_traversals_of_the_pages_folder_do_not_reach_the_clips_either(hostile):
    address, _, _ = hostile
    for path in TRAVERSALS:
        for prefix in ("/api/clips", "/api/clips/x"):
            request = f"GET {prefix}{path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            status, _, body = raw(address, request.encode())
            assert status in (400, 404, 405) and SECRET not in body and b"RIFF" not in body


@settings(max_examples=150)
@given(name=st.text(max_size=60), route=st.sampled_from(CLIP_ROUTES))
def test_any_name_is_the_clip_or_a_4xx_in_json(hostile, name, route):
    address, real, data = hostile
    path = route.format(quote(name, safe=""))
    status, kind, body = raw(
        address, f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()
    )
    if name == real and route != "/api/clips/{}":
        assert status == 200
        assert body == data or "low" in json.loads(body)
        return
    assert 400 <= status < 500, (path, status, body)
    if kind == "application/json":
        assert set(json.loads(body)) == {"error"}
    assert SECRET not in body and b"RIFF" not in body


RANGE = st.one_of(
    st.builds(
        "bytes={}-{}".format,
        st.one_of(st.just(""), st.integers(0, 2**70).map(str)),
        st.one_of(st.just(""), st.integers(0, 2**70).map(str)),
    ),
    st.text(alphabet="bytes=0123456789-, ", max_size=24),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30),
)


@settings(max_examples=200)
@given(asked=RANGE)
def test_any_range_is_the_bytes_it_names_the_whole_file_or_a_416(hostile, asked):
    address, name, data = hostile
    request = (
        f"GET /api/clips/{name}.wav HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        f"Range: {asked}\r\n\r\n"
    )
    status, kind, body = raw(address, request.encode())
    assert status in (200, 206, 416), (asked, status, body)
    if status == 200:
        assert body == data
    elif status == 206:
        first, last = _asked_range(asked, len(data))
        assert body == data[first : last + 1]
    else:
        assert kind == "application/json" and set(json.loads(body)) == {"error"}


def _asked_range(asked: str, size: int) -> tuple[int, int]:
    """The bytes a single range names, as RFC 9110 says (a test's own reading of it)."""
    first, _, last = asked.strip().removeprefix("bytes=").partition("-")
    if first == "":
        return size - min(int(last), size), size - 1
    return int(first), min(int(last), size - 1) if last else size - 1


QUERY = st.lists(
    st.tuples(
        st.sampled_from(["columns", "from", "to", "x"]),
        st.one_of(
            st.integers(-(2**70), 2**70).map(str),
            st.text(max_size=10),
            st.sampled_from(["", "0", "1", "4096", "24000", "1e3", " 1", "\u0661"]),
        ),
    ),
    max_size=3,
)


@settings(max_examples=100)
@given(asked=QUERY)
def test_any_envelope_query_is_an_envelope_or_a_400(hostile, asked):
    address, name, _ = hostile
    status, kind, body = raw(
        address,
        f"GET /api/clips/{name}/envelope?{'&'.join(f'{k}={quote(v)}' for k, v in asked)}"
        " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode(),
    )
    assert status in (200, 400) and kind == "application/json", (asked, status, body)
    answer = json.loads(body)
    if status == 200:
        assert len(answer["low"]) == len(answer["high"]) == answer["columns"]
        assert 0 <= answer["from"] < answer["to"] <= RATE // 2
        assert all(
            -1 <= lo <= hi <= 1 for lo, hi in zip(answer["low"], answer["high"], strict=True)
        )


# Deleting: a write, through the daemon


def delete(client, game, headers=SAME):
    return client.post("/api/clips/delete", json={"game": game}, headers=headers)


def test_a_judge_deletes_a_games_clips_through_the_daemon(judge, store, daemon):
    folder = clips_folder(store)
    answer = delete(judge, 1)
    assert (answer.status_code, answer.json()) == (200, {"game": 1, "clips": []})
    assert sorted(p.name for p in folder.iterdir()) == [
        "game00002-call000005000000000.json",
        "game00002-call000005000000000.wav",
    ]
    assert "a phone deleted the clips of game 1" in daemon.app.messages
    daemon.wait_for(lambda: "deleted the clips" in daemon.screen.getvalue(), "shown")
    assert delete(judge, 1).status_code == 200  # none left: nothing to do


def test_deleting_needs_the_pin_and_the_pages_own_origin(client, store, daemon):
    folder = clips_folder(store)
    before = sorted(folder.iterdir())
    answer = delete(client, 1)
    assert (answer.status_code, answer.json()) == (401, {"error": "the PIN first: POST /api/login"})
    client.post("/api/login", json={"pin": read_pin(pin_path(store))}, headers=SAME)
    assert delete(client, 1, headers={"Origin": "http://evil.example"}).status_code == 403
    assert sorted(folder.iterdir()) == before
    assert not any("clips" in m for m in daemon.app.messages)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({}, '"game" must be a game\'s id, 1 to 9223372036854775807'),
        ({"game": "1"}, '"game" must be'),
        ({"game": 1.0}, '"game" must be'),
        ({"game": -1}, '"game" must be'),
        ({"game": 1, "all": True}, 'unknown key "all": give the game'),
    ],
)
def test_a_bad_delete_is_a_400(judge, store, body, said):
    answer = judge.post("/api/clips/delete", json=body, headers=SAME)
    assert answer.status_code == 400 and answer.json()["error"].startswith(said)
    assert len(list(clips_folder(store).iterdir())) == 4


def test_without_a_daemon_nothing_is_deleted(judge, store):
    answer = delete(judge, 1)
    assert (answer.status_code, answer.json()) == (503, {"error": "the referee is not running"})
    assert len(list(clips_folder(store).iterdir())) == 4


# The page's budget


def test_the_pages_server_serves_clips_without_numpy(tmp_path):
    """numpy is 15 MB of the page process's 40 (docs/design.md, "The page")."""
    script = (
        "import sys; from referee.web.server import create_app; "
        "assert 'numpy' not in sys.modules, 'numpy imported'"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)


def test_the_pages_server_reads_the_boxs_settings_without_gpiozero(tmp_path):
    """gpiozero's package is 2.5 MB of it, for pin names `referee web` never drives: the
    settings the box installs name the pin map's own pins, taken as they are."""
    script = (
        "import sys; from pathlib import Path; from referee import cli; "
        "from referee.web.serve import serve; from referee.config import load_config; "
        f"load_config(Path({str(ROOT / 'referee.example.toml')!r})); "
        "imported = {'gpiozero', 'numpy', 'pygame'} & set(sys.modules); "
        "assert not imported, f'imported {imported}'"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)


def test_every_clips_route_is_in_the_contract(tmp_path):
    contract = (ROOT / "docs" / "web.md").read_text()
    api = clips_api.ClipsApi(tmp_path / "referee.db", Worker(), Worker("sounds"))
    for route in api.routes:
        shown = route.path.replace("{file}", "{name}.wav")
        assert f"`GET {shown}" in contract, route.path
    assert "`POST /api/clips/delete`" in contract


def test_no_store_no_clips(tmp_path):
    missing = tmp_path / "none.db"
    ensure_pin(pin_path(missing))
    with TestClient(create_app(missing, pin_path(missing))) as client:
        assert client.get("/api/games/1/clips").json() == {"game": 1, "clips": []}
        assert client.get("/api/clips/game00001-call000001000000000.wav").status_code == 404
    assert not clips_folder(missing).exists()


# In a real browser: Debian's Chromium, never one downloaded (docs/web.md)

CLIPS_GAME = """config players=4 rules=super
4 press 2
4.0042 press 4
4.037 press 1
5.5 valid
9 press 3
10 invalid
15 press 1
16 valid
"""
SHORT_S = 1.2  # the clip played at 1x and at 0.25x: 6 s of the test


def clips_store(path):
    """A game with names, of three calls, two with clips: the first as the box cuts it
    by default (3 s), the second short, a clip whose window was set small."""
    script = parse_script(CLIPS_GAME)
    with Store.open(path) as opened:
        game = opened.new_game(
            script.settings,
            lobby=False,
            started_at=datetime(2025, 6, 1, 20, 0, tzinfo=UTC),
            inputs=[inp for _, inp in script.inputs],
            names={1: "Ann", 2: "Bob", 4: "Dee"},
        )
    clips = ClipStore(clips_folder(path), max_bytes=10**9)
    clips.save(*room_clip(game, 4.0, [(2, 0.0), (4, 0.0042), (1, 0.037)]))
    clips.save(*room_clip(game, 9.0, [(3, 0.0)], seconds=SHORT_S, before_s=0.3))
    return clips.clips(game)


def open_game(page, address, width, height):
    (host, port) = address
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"http://{host}:{port}/#history")
    page.click(".gamecard >> text=#1")
    page.wait_for_selector(".clip .wave.zoom .press", state="attached", timeout=5000)


# Every wave of the clip drawn: the cursor comes last.
DRAWN_ALL = "(clip) => [...clip.querySelectorAll('.wave')].every((w) => w.querySelector('.cursor'))"
# Each drawn wave's presses (player, sample, x), voices and span, as the page drew them.
DRAWN = """(clip) => [...clip.querySelectorAll(".wave")].map((w) => ({
  from: Number(w.dataset.from), to: Number(w.dataset.to), width: Number(w.dataset.width),
  presses: [...w.querySelectorAll("line.press")].map((l) =>
    [Number(l.dataset.player), Number(l.dataset.sample), Number(l.getAttribute("x1"))]),
  voices: w.querySelectorAll(".voice").length}))"""


def drawn(page, n: int) -> list[dict]:
    """The nth clip's waves as drawn, once it is scrolled to. The game's view may be drawn
    again as the page's fetches come in, replacing the element a locator had found (a
    clean clone's run met it): then it is found again."""
    from playwright.sync_api import Error

    for _ in range(5):
        clip = page.locator(".clip").nth(n)
        try:
            clip.scroll_into_view_if_needed()
            page.wait_for_function(DRAWN_ALL, arg=clip.element_handle())
            waves: list[dict] = clip.evaluate(DRAWN)
            return waves
        except Error as err:
            if "not attached" not in str(err):
                raise
    raise AssertionError(f"clip {n} was drawn again five times over")


def test_a_calls_clip_is_drawn_where_its_json_says_and_downloads_in_a_browser(tmp_path, browser):
    """Its screenshots go to docs/screens/ when REFEREE_SCREENS says so (`make screens`)."""
    shots = ROOT / os.environ["REFEREE_SCREENS"] if "REFEREE_SCREENS" in os.environ else tmp_path
    path = tmp_path / "referee.db"
    first, short = clips_store(path)
    address, stop = served(path)
    page = browser.new_page(accept_downloads=True)
    try:
        for width, height in [(1920, 1080), (390, 844)]:
            open_game(page, address, width, height)
            clips = page.locator(".clip")
            assert clips.count() == 2  # the third call has none
            for n, kept in enumerate((first, short)):
                waves = drawn(page, n)
                whole = waves[0]
                assert (whole["from"], whole["to"]) == (0, kept.samples)
                for wave in waves:
                    span = wave["to"] - wave["from"]
                    inside = [
                        m for m in kept.clip.presses if wave["from"] <= m.sample <= wave["to"]
                    ]
                    assert [(p, s) for p, s, _ in wave["presses"]] == [
                        (m.player, m.sample) for m in inside
                    ]
                    for _, sample, x in wave["presses"]:
                        assert x == pytest.approx(
                            (sample - wave["from"]) / span * wave["width"], abs=0.01
                        )
                    voices = [o for o in kept.clip.onsets if wave["from"] <= o <= wave["to"]]
                    assert wave["voices"] == len(voices)
            if width == 1920:
                assert len(clips.nth(0).evaluate(DRAWN)) == 2  # and around the presses
                zoom = clips.nth(0).evaluate(DRAWN)[1]
                xs = [x for _, _, x in zoom["presses"]]
                assert xs[1] - xs[0] > 20  # 4.2 ms apart, drawn apart
            page.locator(".clip").nth(0).scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"web-clips-{width}x{height}.png"))
        with page.expect_download() as downloading:
            page.locator(".clip").nth(0).get_by_text("download").click()
        download = downloading.value
        assert download.suggested_filename == f"{first.clip.name}.wav"
        assert Path(download.path()).read_bytes() == first.sound.read_bytes()
    finally:
        page.close()  # its event stream, before the server stops
        stop()


# Set before the click, read after: how long the player played, from `playing` to `ended`.
HEARD = """() => { window.heard = new Promise((done, failed) => {
  let started = null, times = [];
  player.addEventListener("playing", () => { started = performance.now(); }, {once: true});
  const look = setInterval(() => started !== null && times.push(player.currentTime), 50);
  player.addEventListener("ended", () => {
    clearInterval(look);
    done({seconds: (performance.now() - started) / 1000, duration: player.duration,
          rate: player.playbackRate, pitch: player.preservesPitch, times});
  }, {once: true});
  setTimeout(() => failed(new Error("not ended within 30 s")), 30000);
}); }"""


def test_a_clip_plays_at_1x_and_4x_slower_with_its_cursor_in_a_browser(tmp_path, browser):
    path = tmp_path / "referee.db"
    _, short = clips_store(path)
    duration = short.samples / short.clip.sample_rate
    address, stop = served(path)
    page = browser.new_page()
    try:
        open_game(page, address, 390, 844)
        drawn(page, 1)
        clip = page.locator(".clip").nth(1)
        heard = {}
        for speed in (1, 0.25):
            page.evaluate(HEARD)
            clip.locator(f"button[data-rate='{speed}']").click()
            if speed == 0.25:  # the cursor moves across the whole clip as it plays
                page.wait_for_function(
                    "() => Number(document.querySelectorAll('.clip')[1]"
                    ".querySelector('.wave .cursor').getAttribute('x1')) > 0",
                    timeout=5000,
                )
            heard[speed] = page.evaluate("window.heard")
        for speed, got in heard.items():
            assert got["rate"] == speed and got["pitch"] is False  # varispeed
            assert got["duration"] == pytest.approx(duration, abs=0.01)
            assert got["times"] == sorted(got["times"]) and len(set(got["times"])) > 5
            # A loaded machine's browser plays late, never early (1.43 s for 1.2 at a load
            # of 6.5): bounded tightly below, loosely above, still far from 4x off.
            assert duration / speed * 0.85 <= got["seconds"] <= duration / speed * 2
        assert 2.5 <= heard[0.25]["seconds"] / heard[1]["seconds"] <= 4.6  # not 1, not 16
        cursor = clip.locator(".wave .cursor").first.get_attribute("x1")
        width = clip.locator(".wave").first.get_attribute("data-width")
        assert float(cursor) == pytest.approx(float(width), abs=1)  # at the end
    finally:
        page.close()  # its event stream, before the server stops
        stop()


def test_a_judge_deletes_a_games_clips_in_a_browser_and_without_the_pin_cannot(tmp_path, browser):
    path = tmp_path / "referee.db"
    kept = clips_store(path)
    daemon = Daemon(path)
    address, stop = served(path)
    page = browser.new_page()
    try:
        open_game(page, address, 390, 844)
        assert page.locator("#delete-clips").is_hidden()  # no PIN: nothing to delete
        refused = page.evaluate(
            """fetch("/api/clips/delete", {method: "POST", body: '{"game": 1}',
                 headers: {"Content-Type": "application/json"}}).then((r) => r.status)"""
        )
        assert refused == 401 and all(k.sound.exists() for k in kept)
        sign_in(page, path)
        page.click("#delete-clips >> text=Delete this game's clips")
        page.click("#delete-clips >> text=Delete 2 clips: tap again")
        page.wait_for_selector("#clips-said >> text=the clips of game 1 are deleted")
        assert page.locator(".clip").count() == 0
        assert not any(k.sound.exists() for k in kept)
        assert "a phone deleted the clips of game 1" in daemon.app.messages
    finally:
        page.close()  # its event stream, before the server stops
        stop()
        daemon.stop()
