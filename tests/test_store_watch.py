"""When the loop looks whether the store is still at its path: at once when its folder
changes (inotify), else once a second."""

from referee.linux import inotify
from referee.store.watch import LOOK_NS, StoreWatch

NOW = 5_000_000_000


def test_a_change_in_the_folder_is_due_at_once_and_nothing_else_is(tmp_path):
    watch = StoreWatch(tmp_path / "referee.db", lambda: NOW)
    try:
        assert watch.fileno() is not None and watch.wake_ns is None  # nothing to do at idle
        assert not watch.due(NOW + 10 * LOOK_NS)
        (tmp_path / "referee.db").write_bytes(b"")
        assert watch.due(NOW)
        assert not watch.due(NOW)
        (tmp_path / "referee.db").rename(tmp_path / "old.db")
        assert watch.due(NOW)
    finally:
        watch.close()


def test_a_folder_gone_is_looked_at_every_second_until_it_is_back(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    watch = StoreWatch(folder / "referee.db", lambda: NOW)
    try:
        folder.rmdir()
        assert watch.due(NOW)
        assert watch.wake_ns == NOW + LOOK_NS and not watch.due(NOW + LOOK_NS - 1)
        folder.mkdir()  # as a store written anew makes it again
        assert watch.due(NOW + LOOK_NS)
        assert watch.wake_ns is None
        (folder / "referee.db").write_bytes(b"")
        assert watch.due(NOW + LOOK_NS)
    finally:
        watch.close()


def test_without_inotify_the_store_is_looked_at_every_second(tmp_path, monkeypatch):
    monkeypatch.setattr(inotify, "_libc", lambda: None)
    watch = StoreWatch(tmp_path / "referee.db", lambda: NOW)
    assert watch.fileno() is None and watch.wake_ns == NOW + LOOK_NS
    assert not watch.due(NOW + LOOK_NS - 1)
    assert watch.due(NOW + LOOK_NS) and watch.wake_ns == NOW + 2 * LOOK_NS
    watch.close()


def test_a_write_counts_only_to_a_name_watched_for_it(tmp_path):
    wal, log = tmp_path / "referee.db-wal", tmp_path / "referee.log"
    wal.write_bytes(b""), log.write_bytes(b"")
    watch = StoreWatch(tmp_path / "referee.db", lambda: NOW, written=[wal.name])
    try:
        with log.open("ab") as file:
            file.write(b"a line\n")
        assert not watch.due(NOW)  # the daemon's log, written at every input
        with wal.open("ab") as file:
            file.write(b"frames")
        assert watch.due(NOW)
        assert not watch.due(NOW)
    finally:
        watch.close()
    unwritten = StoreWatch(tmp_path / "referee.db", lambda: NOW)
    try:
        with wal.open("ab") as file:
            file.write(b"frames")
        assert not unwritten.due(NOW)  # the main loop's watch: names alone
    finally:
        unwritten.close()
