"""Each call's snapshot (issue 32, item 8): the camera's process writes the frame it saw at
the call's first press beside the call's clip (camera/snapshot.py), in the clips' budget
(audio/clips.py); read as hostile as a clip is; listed, served and deleted for a judge
signed in alone (docs/web.md, "Snapshots"); the whole daemon writing one from a folder of
rendered tables."""

import logging
import os
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.audio.clips import (
    SNAPSHOT,
    SNAPSHOT_MAX,
    ClipStore,
    Damaged,
    Deleted,
    Snapshot,
    clip_name,
)
from referee.camera import snapshot
from referee.camera.snapshot import AFTER_NS, SIDE_PX, Snapshots
from referee.cli import main
from referee.store.paths import clips_folder
from referee.units import NS_PER_S
from referee.vision.layout import read_frame
from referee.web.snapshots_api import SnapshotsApi
from referee.web.worker import Worker

from .camera_frames import WAIT_S, no_set_table, set_table, show
from .conftest import ROOT, SAME, also_suppressed
from .daemon import Daemon
from .test_web import served, sign_in
from .test_web_clips import clips_store, open_game, room_clip

NAME = clip_name(3, 12_300_000_000)
JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 100 + b"\xff\xd9"  # begins and ends as a JPEG does


def grey(level: int, size: tuple[int, int] = (960, 1280)) -> np.ndarray:
    """A frame of one shade: which frame a snapshot is, told by its shade."""
    return np.full((*size, 3), level, np.uint8)


def shade(path: Path) -> float:
    image = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    return float(image.mean())


@pytest.fixture
def clips(tmp_path):
    return ClipStore(tmp_path / "clips", max_bytes=10**9)


# The frame chosen


def test_the_snapshot_is_the_latest_frame_at_or_before_the_press_shrunk(clips):
    snaps = Snapshots(clips)
    for i, level in enumerate((50, 100, 150)):
        snaps.frame((i + 1) * NS_PER_S, grey(level))
    snaps.told(f"snap {NAME} {2 * NS_PER_S + 400_000_000}".encode())
    snaps.wait()
    path = clips.folder / f"{NAME}{SNAPSHOT}"
    assert abs(shade(path) - 100) < 2  # the frame of 2 s, not the one after the press
    image = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (600, SIDE_PX, 3)
    snaps.told(f"snap {clip_name(3, 1)} {2 * NS_PER_S}".encode())  # at its very time: that one
    snaps.wait()
    assert abs(shade(clips.folder / f"{clip_name(3, 1)}{SNAPSHOT}") - 100) < 2


def test_a_camera_without_a_frame_before_the_press_gives_the_first_after_it(clips, caplog):
    snaps = Snapshots(clips)
    snaps.told(f"snap {NAME} {NS_PER_S}".encode())
    assert not clips.folder.exists()  # waits for a frame
    snaps.frame(NS_PER_S + AFTER_NS, grey(80))
    snaps.wait()
    assert abs(shade(clips.folder / f"{NAME}{SNAPSHOT}") - 80) < 2
    # Too long after (the camera lost meanwhile): none.
    snaps.lost()
    late = clip_name(3, 99)
    snaps.told(f"snap {late} {10 * NS_PER_S}".encode())
    with caplog.at_level(logging.INFO, logger=snapshot.__name__):
        snaps.frame(10 * NS_PER_S + AFTER_NS + 1, grey(200))
    snaps.wait()
    assert not (clips.folder / f"{late}{SNAPSHOT}").exists()
    assert f"snapshot {late}: no frame within 2 s of its press" in caplog.text
    assert snaps.written == 1


def test_a_lost_camera_drops_what_it_saw(clips):
    snaps = Snapshots(clips)
    snaps.frame(NS_PER_S, grey(50))
    snaps.lost()
    snaps.told(f"snap {NAME} {2 * NS_PER_S}".encode())
    assert not clips.folder.exists()


@given(line=st.one_of(st.binary(max_size=200), st.text(max_size=120).map(str.encode)))
@settings(
    max_examples=200,
    suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture),
)
def test_any_other_word_from_the_daemon_is_refused_and_writes_nothing(tmp_path, line):
    folder = tmp_path / "words"
    snaps = Snapshots(ClipStore(folder, max_bytes=10**9))
    snaps.frame(NS_PER_S, grey(50, (48, 64)))
    words = line.split()
    named = len(words) == 3 and words[0] == b"snap" and words[2].isdigit()
    snaps.told(line)  # never raises
    snaps.wait()
    written = list(folder.iterdir()) if folder.exists() else []
    assert len(written) == snaps.written <= 1
    if written:  # only a word the daemon writes: its name is a call's, and the file is in it
        assert named and written[0].name == f"{words[1].decode()}{SNAPSHOT}"


def test_a_disk_that_holds_the_write_never_holds_the_frames(clips, monkeypatch):
    """A slow card's fsync (seconds, on a worn SD card) is the writer's, not the loop's."""
    held, release = threading.Event(), threading.Event()
    save = clips.save_snapshot

    def slow(name: str, jpeg: bytes) -> Path:
        held.set()
        release.wait(5)  # a loop that waited for it would see it written after this
        return save(name, jpeg)

    monkeypatch.setattr(clips, "save_snapshot", slow)
    snaps = Snapshots(clips)
    snaps.frame(NS_PER_S, grey(50))
    snaps.told(f"snap {NAME} {NS_PER_S}".encode())
    assert snaps.written == 0  # told, the loop goes on: not written yet
    assert held.wait(20)  # the writer is in the disk's hands...
    snaps.frame(2 * NS_PER_S, grey(60))  # ...and the frames go on
    snaps.told(f"snap {clip_name(3, 1)} {2 * NS_PER_S}".encode())
    release.set()
    snaps.wait()
    assert snaps.written == 2


def test_a_disk_that_refuses_the_snapshot_loses_it_said(tmp_path, caplog):
    (tmp_path / "clips").write_text("a file where the folder should be")
    snaps = Snapshots(ClipStore(tmp_path / "clips", max_bytes=10**9))
    snaps.frame(NS_PER_S, grey(50))
    snaps.told(f"snap {NAME} {NS_PER_S}".encode())
    snaps.wait()
    assert snaps.written == 0 and f"snapshot {NAME}: lost, the disk refused it" in caplog.text


# The disk: the clips' budget, a hostile file


def test_snapshots_count_in_the_clips_budget_and_the_oldest_calls_go_first(tmp_path):
    clip, samples = room_clip(1, 1.0, [(2, 0.0)])
    store = ClipStore(tmp_path / "clips", max_bytes=10**9)
    store.save(clip, samples)  # game 1's call at 1 s: a clip and a snapshot
    store.save_snapshot(clip.name, JPEG)
    clip_bytes = sum(p.stat().st_size for p in store.folder.iterdir())
    for call_s in (2, 3, 4):  # snapshots alone (the microphone off)
        store.save_snapshot(clip_name(1, call_s * NS_PER_S), JPEG)
    # Room for the clip and its snapshot, and two more snapshots: the oldest call goes,
    # clip and snapshot, to make room for the newest.
    store.max_bytes = clip_bytes + 2 * len(JPEG)
    store.save_snapshot(clip_name(1, 5 * NS_PER_S), JPEG)
    left = sorted(p.name for p in store.folder.iterdir())
    assert left == [f"{clip_name(1, s * NS_PER_S)}{SNAPSHOT}" for s in (2, 3, 4, 5)]
    # A clip saved makes room among the snapshots as among clips: the two oldest go.
    clip, samples = room_clip(1, 6.0, [(1, 0.0)])
    store.save(clip, samples)
    kept = sorted(p.name.removesuffix(p.suffix) for p in store.folder.iterdir())
    assert kept == [clip_name(1, 4 * NS_PER_S), clip_name(1, 5 * NS_PER_S), clip.name, clip.name]


def test_a_games_snapshots_go_with_its_clips(tmp_path):
    clip, samples = room_clip(1, 1.0, [(2, 0.0)])
    store = ClipStore(tmp_path / "clips", max_bytes=10**9)
    store.save(clip, samples)
    store.save_snapshot(clip.name, JPEG)
    store.save_snapshot(clip_name(1, 7 * NS_PER_S), JPEG)
    store.save_snapshot(clip_name(2, NS_PER_S), JPEG)
    assert store.delete(1) == Deleted(clips=1, snapshots=2)
    assert [p.name for p in store.folder.iterdir()] == [f"{clip_name(2, NS_PER_S)}{SNAPSHOT}"]


def test_referee_clips_delete_counts_clips_and_snapshots_apart(tmp_path, capsys):
    """A call with a snapshot and no clip (the microphone off, or lost) was counted as a
    clip deleted: `2 clips deleted` where one clip and two snapshots went."""
    store = tmp_path / "referee.db"
    clips = ClipStore(clips_folder(store), max_bytes=10**9)
    clip, samples = room_clip(1, 1.0, [(2, 0.0)])
    clips.save(clip, samples)
    clips.save_snapshot(clip.name, JPEG)
    clips.save_snapshot(clip_name(1, 7 * NS_PER_S), JPEG)  # a call with no clip
    assert main(["clips", "--store", str(store), "--delete", "--game", "1"]) == 0
    said = capsys.readouterr().out
    assert said == f"{clips.folder}: 1 clip and 2 snapshots deleted\n"
    assert not any(clips.folder.iterdir())
    assert main(["clips", "--store", str(store), "--delete", "--all"]) == 0
    assert capsys.readouterr().out == f"{clips.folder}: nothing to delete\n"


def _planted(folder: Path, name: str, make) -> None:
    folder.mkdir(exist_ok=True)
    make(folder / f"{name}{SNAPSHOT}")


HOSTILE = {
    "cut short": lambda p: p.write_bytes(JPEG[:-1]),
    "empty": lambda p: p.write_bytes(b""),
    "not a JPEG": lambda p: p.write_bytes(b"RIFF not a picture\xff\xd9"),
    "huge": lambda p: (p.write_bytes(JPEG[:4]), os.truncate(p, SNAPSHOT_MAX + 1)),
    "a FIFO": lambda p: os.mkfifo(p),
    "a folder": lambda p: p.mkdir(),
    "a link": lambda p: p.symlink_to("/etc/passwd"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_damaged_snapshot_is_listed_as_such_never_read_past(tmp_path, kind):
    folder = tmp_path / "clips"
    _planted(folder, NAME, HOSTILE[kind])
    _planted(folder, clip_name(3, 1), lambda p: p.write_bytes(JPEG))
    store = ClipStore(folder, max_bytes=0)
    whole, damaged = store.snapshots(3)  # the call at 1 ns first
    assert isinstance(damaged, Damaged) and (damaged.name, damaged.call_ns) == (
        NAME,
        12_300_000_000,
    )
    assert whole == Snapshot(clip_name(3, 1), 3, 1, JPEG)
    if kind == "a folder":  # not unlinked: said, every other one gone
        with pytest.raises(IsADirectoryError):
            store.delete(3)
        assert [p.name for p in folder.iterdir()] == [f"{NAME}{SNAPSHOT}"]
    else:
        assert store.delete(3) == Deleted(clips=0, snapshots=2) and not any(folder.iterdir())


@given(data=st.binary(max_size=300))
@settings(
    max_examples=300,
    suppress_health_check=also_suppressed(HealthCheck.function_scoped_fixture),
)
def test_any_file_named_like_a_snapshot_is_one_only_if_whole(tmp_path, data):
    folder = tmp_path / "any"
    _planted(folder, NAME, lambda p: p.write_bytes(data))
    [read] = ClipStore(folder, max_bytes=0).snapshots()
    whole = data.startswith(b"\xff\xd8\xff") and data.endswith(b"\xff\xd9")
    assert read == Snapshot(NAME, 3, 12_300_000_000, data) if whole else isinstance(read, Damaged)


# The page: a judge's alone


@pytest.fixture
def snapped(store):
    """The store's game 1 has a snapshot of its call at 1 s; game 2 one, and one damaged."""
    clips = ClipStore(clips_folder(store), max_bytes=10**9)
    clips.save_snapshot(clip_name(1, NS_PER_S), JPEG)
    clips.save_snapshot(clip_name(2, NS_PER_S), JPEG)
    (clips.folder / f"{clip_name(2, 2 * NS_PER_S)}{SNAPSHOT}").write_bytes(JPEG[:50])
    return store


ONE = clip_name(1, NS_PER_S)
NOT_SIGNED = (401, {"error": "the PIN first: POST /api/login"})


@pytest.mark.parametrize(
    "path",
    [
        "/api/games/1/snapshots",
        f"/api/snapshots/{ONE}.jpg",
        "/api/games/99/snapshots",  # the PIN first, before anything is looked up
        "/api/snapshots/game00009-call000000000000000.jpg",
        "/api/snapshots/..referee.pin",
    ],
)
def test_without_the_pin_no_snapshot_nor_whether_there_is_one(snapped, client, path):
    answer = client.get(path)
    assert (answer.status_code, answer.json()) == NOT_SIGNED


def test_a_judge_sees_a_games_snapshots_and_each_one(snapped, judge):
    answer = judge.get("/api/games/1/snapshots")
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    assert answer.json() == {
        "game": 1,
        "snapshots": [
            {"name": ONE, "call_ms": 1000, "bytes": len(JPEG), "jpg": f"/api/snapshots/{ONE}.jpg"}
        ],
    }
    # The call it belongs to, as the game's history has it.
    assert judge.get("/api/games/1").json()["calls"][0]["at_ms"] == 1000
    image = judge.get(f"/api/snapshots/{ONE}.jpg")
    assert image.status_code == 200 and image.content == JPEG
    assert image.headers["content-type"] == "image/jpeg"
    assert image.headers["x-content-type-options"] == "nosniff"
    assert image.headers["cache-control"] == "no-store"
    damaged = clip_name(2, 2 * NS_PER_S)
    [whole, bad] = judge.get("/api/games/2/snapshots").json()["snapshots"]
    assert bad == {"name": damaged, "call_ms": 2000, "damaged": "not a whole JPEG (cut short?)"}
    assert whole["jpg"] == f"/api/snapshots/{clip_name(2, NS_PER_S)}.jpg"


@pytest.mark.parametrize(
    "path",
    [
        f"/api/snapshots/{clip_name(2, 2 * NS_PER_S)}.jpg",  # damaged: nothing to show
        f"/api/snapshots/{clip_name(1, 5 * NS_PER_S)}.jpg",  # another call's
        f"/api/snapshots/{ONE}.wav",
        f"/api/snapshots/{ONE}",
        "/api/snapshots/..referee.pin",
        "/api/snapshots/..%2freferee.db.jpg",
        "/api/snapshots/%2e%2e%2freferee.db.jpg",
        f"/api/snapshots/game1-call{NS_PER_S}.jpg",  # not the box's spelling of it
    ],
)
def test_a_judge_asking_for_another_gets_a_404(snapped, judge, path):
    answer = judge.get(path)
    # An encoded slash is no route at all: Starlette's own 404, in JSON as every refusal.
    said = "Not Found" if "%2f" in path else "no snapshot"
    assert answer.status_code == 404 and answer.json()["error"].startswith(said)


def test_a_judge_deletes_a_games_snapshots_with_its_clips(snapped, judge, daemon, store):
    answer = judge.post("/api/clips/delete", json={"game": 2}, headers=SAME)
    assert answer.status_code == 200
    assert judge.get("/api/games/2/snapshots").json() == {"game": 2, "snapshots": []}
    assert [p.name for p in clips_folder(store).iterdir()] == [f"{ONE}{SNAPSHOT}"]


# The whole daemon, its camera a folder of rendered tables


def test_the_daemon_has_the_camera_write_the_table_at_a_calls_first_press(two_seats, frames):
    daemon = Daemon(two_seats, camera=str(frames), players=2)
    try:
        show(frames, "1.jpg", set_table(), mtime_ns=10**18 + 1)
        daemon.wait_for(lambda: daemon.app.watching.view() is not None, "the table read", WAIT_S)
        daemon.press("P1")
        daemon.wait_for(lambda: daemon.app.session.state.pending, "P1's call")
        # The caller's hand in the next frame: the table the call was made at is kept.
        show(frames, "2.jpg", no_set_table(), mtime_ns=10**18 + 2)
        call = daemon.app.session.state.pending
        path = (
            clips_folder(two_seats)
            / f"{clip_name(daemon.app.session.ledger.game_id, call.first_ns)}.jpg"
        )
        daemon.wait_for(path.exists, "the snapshot written", WAIT_S)
        daemon.press("P2")  # another press of the call: no other snapshot
        daemon.wait_for(lambda: len(daemon.app.session.state.pending.presses) == 2, "P2's press")
    finally:
        daemon.stop()
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    data = path.read_bytes()
    assert 10_000 < len(data) < 100_000
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert max(image.shape) == SIDE_PX
    layout = read_frame(image)  # the cards as the camera saw them at the call
    assert sum(card.sure for card in layout.cards) == 12 and len(layout.sets) == 3


def test_a_call_resumed_from_an_earlier_run_gets_no_snapshot_of_the_table_now(store, frames):
    """The store fixture's game: P2 called before the box started again."""
    daemon = Daemon(store, camera=str(frames))
    try:
        show(frames, "1.jpg", set_table(), mtime_ns=10**18 + 1)
        daemon.wait_for(lambda: daemon.app.watching.view() is not None, "the table read", WAIT_S)
        daemon.press("P4")  # joins the call P2 opened in the earlier run
        daemon.wait_for(lambda: len(daemon.app.session.state.pending.presses) == 2, "P4's press")
        asked = daemon.app.watching._snapped
    finally:
        daemon.stop()
    assert not asked and not clips_folder(store).exists()


def test_with_the_camera_off_nothing_is_asked_nor_written(two_seats):
    daemon = Daemon(two_seats, players=2)
    try:
        daemon.press("P1")
        daemon.wait_for(lambda: daemon.app.session.state.pending, "P1's call")
        assert daemon.app.watching._process is None
    finally:
        daemon.stop()
    assert not clips_folder(two_seats).exists()


def test_every_snapshots_route_is_in_the_contract(tmp_path):
    contract = (ROOT / "docs" / "web.md").read_text()
    api = SnapshotsApi(tmp_path / "referee.db", Worker(), lambda request: True)
    for route in api.routes:
        assert f"`GET {route.path.replace('{file}', '{name}.jpg')}`" in contract, route.path


# In a real browser (marked slow: `make test-slow`)


def test_a_judge_alone_sees_a_calls_snapshot_in_a_browser_and_deletes_it_with_the_clips(
    tmp_path, browser
):
    path = tmp_path / "referee.db"
    kept = clips_store(path)  # game 1: calls at 4 s and 9 s, each with its clip
    image = cv2.imdecode(np.frombuffer(set_table(), np.uint8), cv2.IMREAD_COLOR)
    clips = ClipStore(clips_folder(path), max_bytes=10**9)
    snaps = Snapshots(clips)
    snaps.frame(NS_PER_S, image)
    snaps.told(f"snap {kept[0].clip.name} {NS_PER_S}".encode())
    snaps.wait()
    daemon = Daemon(path)
    address, stop = served(path)
    page = browser.new_page()
    try:
        open_game(page, address, 390, 844)
        assert page.locator(".snapshot").count() == 0  # no PIN: nothing of it
        sign_in(page, path)
        page.wait_for_function(
            "() => document.querySelector('.snapshot img')?.naturalWidth === 800", timeout=5000
        )
        assert page.locator(".event, #events > li").nth(0).locator(".snapshot").count() == 1
        page.click("#delete-clips >> text=Delete this game's clips and snapshots")
        page.click("#delete-clips >> text=Delete 2 clips and 1 snapshot: tap again")
        page.wait_for_selector("#clips-said >> text=the clips of game 1 are deleted")
        assert page.locator(".snapshot").count() == 0 and not any(clips.folder.iterdir())
        page.click("#logout")
    finally:
        page.close()  # its event stream, before the server stops
        stop()
        daemon.stop()


def test_referee_clips_lists_the_snapshots_and_deletes_them(tmp_path, capsys):
    from referee.cli import main

    store = tmp_path / "referee.db"
    clips = ClipStore(clips_folder(store), max_bytes=10**9)
    clips.save_snapshot(clip_name(1, 65_250_000_000), JPEG)
    (clips.folder / f"{clip_name(2, 3 * NS_PER_S)}{SNAPSHOT}").write_bytes(b"no JPEG")
    assert main(["clips", "--store", str(store)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"game 1, call at 1:05.2: {clip_name(1, 65_250_000_000)}.jpg, snapshot of the table:"
        f" {len(JPEG)} bytes",
        f"game 2, call at 0:03.0: {clip_name(2, 3 * NS_PER_S)}.jpg, snapshot of the table:"
        " damaged, not a whole JPEG (cut short?)",
    ]
    assert main(["clips", "--store", str(store), "--delete", "--game", "2"]) == 0
    assert main(["clips", "--store", str(store), "--delete", "--all"]) == 0
    assert not any(clips.folder.iterdir())
