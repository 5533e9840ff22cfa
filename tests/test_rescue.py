"""Inputs a full disk refused: kept in a file at exit, named in one line, put back later.

The refusing disk here is SQLite's query_only on a real file (SQLITE_READONLY, as a
read-only disk gives); test_full_disk.py does it with a real full filesystem.
"""

import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cli import main
from referee.errors import EXIT_UNSAVED, UnsavedInputs
from referee.rules import Press, Settings, Super, Verdict, replay, report
from referee.store import rescue
from referee.store.ledger import Ledger
from referee.store.store import Store

from .processes import Output, namespaces

S = 1_000_000_000
PLAYED = (Press(1, 1 * S), Press(2, 2 * S), Super(3 * S), Press(2, 4 * S + 123_456_789))
REFUSED = (Verdict(True, 5 * S), Press(1, 6 * S))


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path, monkeypatch):
    """The service's /run/referee, in the test's own folder."""
    (tmp_path / "run" / "referee").mkdir(parents=True)
    monkeypatch.setattr(rescue, "RUN", tmp_path / "run")


def refusing(store: Store) -> None:
    store._conn.execute("PRAGMA query_only = 1")


def writable(store: Store) -> None:
    store._conn.execute("PRAGMA query_only = 0")


THREE = Settings(players=3)


def a_game_the_disk_refused(path, settings=THREE) -> tuple[Store, Ledger]:
    store = Store.open(path)
    ledger = Ledger(store, store.new_game(settings, lobby=True))
    for inp in PLAYED:
        assert ledger.append(inp)
    refusing(store)
    for inp in REFUSED:
        assert not ledger.append(inp)
    return store, ledger


def test_waiting_inputs_go_to_a_file_named_in_one_line(tmp_path):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    unsaved = rescue.keep(ledger)
    store.close()
    assert isinstance(unsaved, UnsavedInputs) and unsaved.exit_status == EXIT_UNSAVED
    line = str(unsaved)
    assert "\n" not in line
    assert line.startswith(f"referee: 2 inputs could not be saved to {tmp_path}/referee.db")
    assert "(read-only storage)" in line
    path = next((tmp_path).glob("referee-unsaved-game1-*.txt"))  # beside the store first
    assert f"they are in {path}: `referee recover {path}` puts them back" in line
    kept = rescue.read(path)
    assert kept.inputs == PLAYED + REFUSED and kept.first == 1 and kept.game.id == 1
    assert kept.game.settings == Settings(players=3) and kept.game.lobby


def test_the_file_goes_where_it_can(tmp_path, monkeypatch):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    gone = tmp_path / "gone"  # a place that takes nothing: the first choices fail
    monkeypatch.setattr(rescue, "places", lambda path: [gone, tmp_path / "run" / "referee"])
    unsaved = rescue.keep(ledger)
    store.close()
    path = next((tmp_path / "run" / "referee").glob("referee-unsaved-*.txt"))
    assert str(path) in str(unsaved)
    monkeypatch.setattr(rescue, "places", lambda path: [gone])
    nowhere = str(rescue.keep(ledger))
    # Nowhere at all: the message itself carries them, for the journal to keep.
    assert "no file could hold them; here they are:" in nowhere
    assert "6.000000000 press 1  # 6\n# sha256: " in nowhere


def test_a_rescue_file_is_a_replay_script_of_the_game(tmp_path, capsys):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db", Settings(players=2))
    game = store.game(1)
    rescue.keep(ledger)
    store.close()
    path = next(tmp_path.glob("referee-unsaved-*.txt"))
    assert main(["replay", str(path)]) == 0
    state = replay(Settings(players=2), PLAYED + REFUSED, lobby=True)
    assert json.loads(capsys.readouterr().out) == report(game.settings, state)


def test_recover_puts_back_what_the_store_lacks_once(tmp_path, capsys):
    path = tmp_path / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    store.close()
    kept = next(tmp_path.glob("referee-unsaved-*.txt"))
    copy = kept.read_text()
    assert main(["recover", str(kept)]) == 0
    assert capsys.readouterr().out == (
        f"{kept}: put back 2 inputs into game 1 of {path}; the file is removed\n"
    )
    assert not kept.exists()
    with Store.open_readonly(path) as reader:
        assert reader.game(1).inputs == PLAYED + REFUSED
    kept.write_text(copy)  # a second time: nothing is added twice
    assert main(["recover", str(kept)]) == 0
    assert "put back 0 inputs into game 1" in capsys.readouterr().out
    with Store.open_readonly(path) as reader:
        assert reader.game(1).inputs == PLAYED + REFUSED


def test_recover_refuses_a_game_that_went_on_without_them(tmp_path, capsys):
    path = tmp_path / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    writable(store)
    store.append(1, Press(3, 7 * S))  # the game resumed without the two refused inputs
    store.close()
    kept = next(tmp_path.glob("referee-unsaved-*.txt"))
    assert main(["recover", str(kept)]) == 2
    assert capsys.readouterr().err == (
        f"{kept}: game 1 in {path} went on without these inputs; the file keeps them\n"
    )
    assert kept.exists()


def test_recover_into_another_store_makes_it_a_new_game(tmp_path, capsys):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    rescue.keep(ledger)
    store.close()
    kept = next(tmp_path.glob("referee-unsaved-*.txt"))
    other = tmp_path / "new.db"
    with Store.open(other) as fresh:
        fresh.new_game(Settings(), lobby=True)  # game 1 there is another game
    assert main(["recover", str(kept), "--store", str(other)]) == 0
    assert "put back 6 inputs into game 2 of" in capsys.readouterr().out
    with Store.open_readonly(other) as reader:
        game = reader.latest_game()
    assert game.id == 2 and game.inputs == PLAYED + REFUSED and game.settings.players == 3


def test_what_is_not_a_rescue_file_is_one_line(tmp_path, capsys):
    script = tmp_path / "game.txt"
    script.write_text("0 press 1\n")
    assert main(["recover", str(script)]) == 2
    assert capsys.readouterr().err == f"{script}: not a rescue file of referee (no store line)\n"


def test_an_unreadable_store_keeps_only_what_waits(tmp_path):
    store, ledger = a_game_the_disk_refused(tmp_path / "referee.db")
    store._conn.close()  # the store cannot be read any more either
    rescue.keep(ledger)
    store.close()
    kept = rescue.read(next(tmp_path.glob("referee-unsaved-*.txt")))
    # What only memory has, numbered after what the store has: the game is known all the same.
    assert (kept.first, kept.inputs, kept.game.settings) == (len(PLAYED) + 1, REFUSED, THREE)
    with Store.open(tmp_path / "referee.db") as again:
        assert rescue.recover(kept, again, tmp_path / "f") == (1, 2)
        assert again.game(1).inputs == PLAYED + REFUSED


def test_run_puts_them_back_when_it_starts(tmp_path):
    from referee.cli import _put_back_waiting

    path = tmp_path / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    store.close()
    _put_back_waiting(path)
    assert not list(tmp_path.glob("referee-unsaved-*.txt"))
    with Store.open_readonly(path) as reader:
        assert reader.game(1).inputs == PLAYED + REFUSED


# --- where rescue files go, and which are trusted -------------------------------------------


def test_the_places_are_the_stores_and_its_owners_whatever_the_environment(tmp_path, monkeypatch):
    """The service (its /tmp private, its $RUNTIME_DIRECTORY set) and a run by hand look
    in the same places for a store's rescue files."""
    store = tmp_path / "referee.db"
    users = tmp_path / "run" / "user" / str(os.geteuid())
    users.mkdir(parents=True, mode=0o700)
    places = [tmp_path, tmp_path / "run" / "referee", users]
    assert rescue.places(store) == places
    for name in ("RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR", "TMPDIR"):
        monkeypatch.setenv(name, str(tmp_path / name))
        (tmp_path / name).mkdir(mode=0o700)
    monkeypatch.setattr("tempfile.tempdir", None)
    assert rescue.places(store) == places


def test_a_folder_other_users_may_write_to_is_no_place(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp
    assert rescue.places(shared / "referee.db") == [tmp_path / "run" / "referee"]


def test_a_rescue_file_in_a_shared_tmp_is_never_put_back(tmp_path, monkeypatch):
    from referee.cli import _put_back_waiting

    store, kept = kept_file(tmp_path)
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setattr("tempfile.tempdir", str(shared))
    planted = kept.rename(shared / kept.name)  # anyone could have written it there
    _put_back_waiting(store)
    assert planted.exists() and inputs_of(store) == PLAYED


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file of another user's")
def test_a_rescue_file_another_user_wrote_is_said_and_kept(tmp_path, caplog):
    from referee.cli import _put_back_waiting

    store, kept = kept_file(tmp_path)
    os.chown(kept, 4242, 4242)
    _put_back_waiting(store)
    assert kept.exists() and inputs_of(store) == PLAYED
    assert [r.getMessage() for r in caplog.records if r.name == "referee.store.rescue"] == [
        f"{kept}: not put back: written by user 4242, not by root who owns the store;"
        " `referee recover` it if you trust it"
    ]


# In a namespace of the test's own, /run/referee is a read-only folder that holds a rescue
# file: it can be read, never removed (as root's in a folder the daemon cannot write to).
READ_ONLY_RUN = """
set -e
mount -t tmpfs tmpfs /run
mkdir /run/referee
mount --bind "$KEPT" /run/referee
mount -o remount,bind,ro /run/referee
set +e
"$PY" -m referee recover "/run/referee/$NAME"
echo "recover: exit status $?"
exec "$PY" -m referee run --store "$STORE" --display none --input serial:/no-such-board
"""


@pytest.mark.skipif(bool(why := namespaces()), reason=why or "")
def test_a_rescue_file_that_cannot_be_removed_is_put_back_once_and_the_box_goes_on(tmp_path):
    store, kept = kept_file(tmp_path)
    folder = tmp_path / "kept"
    folder.mkdir()
    kept = kept.rename(folder / kept.name)
    env = dict(os.environ, PY=sys.executable, KEPT=str(folder), NAME=kept.name, STORE=str(store))
    box = subprocess.Popen(
        ["unshare", "-Urm", "sh", "-c", READ_ONLY_RUN],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        output = Output(box.stdout.fileno())
        output.wait_for("recover: exit status 0")
        output.wait_for("display none")  # the daemon runs
        box.send_signal(signal.SIGTERM)
        assert box.wait(timeout=10) == 0
    finally:
        box.kill()
        box.wait()
        box.stdout.close()
    named = f"/run/referee/{kept.name}"
    cannot = "the file cannot be removed (Read-only file system): remove it by hand"
    assert f"{named}: put back 2 inputs into game 1 of {store}; {cannot}\n" in output.text
    assert f"{named}: put back 0 inputs into game 1 of {store}; {cannot}\n" in output.text
    assert "Traceback" not in output.text
    assert kept.exists() and inputs_of(store) == PLAYED + REFUSED


# --- a rescue file puts back exactly what was lost, or nothing -----------------------------


def kept_file(tmp_path) -> tuple[Path, Path]:
    """The store (PLAYED in it) and the rescue file of its game (PLAYED and REFUSED)."""
    path = tmp_path / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    store.close()
    return path, next(tmp_path.glob("referee-unsaved-*.txt"))


def inputs_of(path, game=1):
    with Store.open_readonly(path) as reader:
        return reader.game(game, accepted=True).inputs


def resealed(text: str) -> str:
    """The file with its checksum made right again: what a careful editor would do."""
    end = text.rfind("# sha256: ")
    body = text if end < 0 else text[:end]
    return body + f"# sha256: {hashlib.sha256(body.encode()).hexdigest()}\n"


def refused(capsys, kept: Path, store: Path, why: str) -> None:
    """recover says why in one line, keeps the file as it is and leaves the store alone."""
    text = kept.read_bytes()
    assert main(["recover", str(kept)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"{kept}: ") and why in err, err
    assert kept.read_bytes() == text
    assert inputs_of(store) == PLAYED


def test_a_file_cut_short_at_a_line_end_is_refused_and_kept(tmp_path, capsys):
    store, kept = kept_file(tmp_path)
    lines = kept.read_text().splitlines(keepends=True)
    kept.write_text("".join(lines[:-2]))  # the last input and the checksum are gone
    refused(capsys, kept, store, "not whole (cut short?): its last line is not its checksum")


def test_a_repeated_line_is_refused_and_kept(tmp_path, capsys):
    store, kept = kept_file(tmp_path)
    lines = kept.read_text().splitlines(keepends=True)
    kept.write_text("".join([*lines[:-2], lines[-2], *lines[-2:]]))
    refused(capsys, kept, store, "damaged: its checksum does not match what it holds")
    kept.write_text(resealed(kept.read_text()))
    refused(capsys, kept, store, "a damaged rescue file: line 16 has no number of its own ('6')")


@pytest.mark.parametrize(
    ("line", "edited", "why"),
    [
        ("# first: 1", "# first: 0", "first must be a number from 1 to"),
        ("# first: 1", "# first: -3", "first must be a number from 1 to"),
        ("# first: 1", "# first: 99", "its inputs are not numbered 99 on"),
        ("# game: 1", "# game: 1" + "0" * 30, "game must be a number from 1 to"),
        ('"players": 3', '"players": 1e999', "players: must be a whole number of seats"),
        ('"players": 3', '"players": "3"', "players: must be a whole number of seats"),
        ('"players": 3', '"players": 10' + "0" * 400, "a damaged rescue file"),
        ("# lobby: true", "# lobby: maybe", "lobby must be true or false, not 'maybe'"),
        ("# store: /", "# store: ", "the store must be an absolute path"),
    ],
)
def test_an_edited_header_is_refused_in_one_line(tmp_path, capsys, line, edited, why):
    store, kept = kept_file(tmp_path)
    text = kept.read_text()
    assert line in text
    kept.write_text(text.replace(line, edited, 1))
    refused(capsys, kept, store, "damaged: its checksum does not match what it holds")
    kept.write_text(resealed(kept.read_text()))  # the values themselves are checked too
    refused(capsys, kept, store, why)


def test_a_file_put_back_halfway_is_finished_once(tmp_path, capsys):
    store, kept = kept_file(tmp_path)
    with Store.open(store) as opened:
        opened.append(1, REFUSED[0])  # a recover stopped after one of the two
    assert main(["recover", str(kept)]) == 0
    assert "put back 1 input into game 1" in capsys.readouterr().out
    assert inputs_of(store) == PLAYED + REFUSED


def test_the_whole_game_goes_into_another_store_once(tmp_path, capsys):
    _, kept = kept_file(tmp_path)
    copy = kept.read_bytes()
    other = tmp_path / "other.db"
    for count in (6, 0):  # the second time, the game written anew there is found again
        kept.write_bytes(copy)
        assert main(["recover", str(kept), "--store", str(other)]) == 0
        assert f"put back {count} inputs into game 1 of {other}" in capsys.readouterr().out
    assert inputs_of(other) == PLAYED + REFUSED
    with Store.open_readonly(other) as reader:
        assert reader.latest_game().id == 1


def test_a_late_input_keeps_its_place_in_the_ledger(tmp_path, capsys):
    """The numbers say the order the ledger took them in; the lines go forward in time."""
    path = tmp_path / "referee.db"
    store = Store.open(path)
    ledger = Ledger(store, store.new_game(THREE, lobby=True))
    late = (Press(1, 1 * S), Press(2, 3 * S), Press(3, 2 * S))  # P3's came after P2's
    assert ledger.append(late[0])
    refusing(store)
    for inp in late[1:]:
        assert not ledger.append(inp)
    rescue.keep(ledger)
    writable(store)
    store.close()
    kept = next(tmp_path.glob("referee-unsaved-*.txt"))
    assert kept.read_text().splitlines()[-4:-1] == [
        "1.000000000 press 1  # 1",
        "2.000000000 press 3  # 3",
        "3.000000000 press 2  # 2",
    ]
    assert main(["recover", str(kept)]) == 0
    assert inputs_of(path) == late


def test_a_damaged_file_found_at_the_start_is_kept_and_said(tmp_path, caplog):
    from referee.cli import _put_back_waiting

    store, kept = kept_file(tmp_path)
    kept.write_text(resealed(kept.read_text().replace("# game: 1", "# game: 1" + "0" * 30)))
    _put_back_waiting(store)  # goes on: the game resumes without them
    assert kept.exists() and inputs_of(store) == PLAYED
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith(str(kept))]
    assert said == [
        f"{kept}: a damaged rescue file: game must be a number from 1 to {2**63 - 1},"
        f" not '1{'0' * 30}'"
    ]


DAMAGES = ("cut", "cut at a line end", "a line twice", "a line dropped", "two lines swapped")
DAMAGES += ("a byte flipped", "a value edited", "bytes inserted")


@st.composite
def damaged(draw, text: bytes) -> bytes:
    lines = text.splitlines(keepends=True)
    line = draw(st.integers(0, len(lines) - 1))
    damage = draw(st.sampled_from(DAMAGES))
    if damage == "cut":
        return text[: draw(st.integers(0, len(text) - 1))]
    if damage == "cut at a line end":
        return b"".join(lines[:line])
    if damage == "a line twice":
        return b"".join([*lines[: line + 1], *lines[line:]])
    if damage == "a line dropped":
        return b"".join(lines[:line] + lines[line + 1 :])
    if damage == "two lines swapped":
        other = draw(st.integers(0, len(lines) - 1))
        lines[line], lines[other] = lines[other], lines[line]
        return b"".join(lines)
    if damage == "a byte flipped":
        at = draw(st.integers(0, len(text) - 1))
        bit = 1 << draw(st.integers(0, 7))
        return text[:at] + bytes([text[at] ^ bit]) + text[at + 1 :]
    if damage == "a value edited":
        head, sep, _ = lines[line].partition(b": ")
        value = draw(st.sampled_from([b"0", b"-3", b"99", b"1" + b"0" * 30, b"", b"x"]))
        lines[line] = head + sep + value + b"\n" if sep else value + b" " + lines[line]
        return b"".join(lines)
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(st.binary(min_size=1, max_size=8)) + text[at:]


@pytest.fixture(scope="module")
def left_at_exit(tmp_path_factory):
    """A store as a full disk left it (PLAYED) and its rescue file (PLAYED and REFUSED), in
    a folder for the examples' copies."""
    folder = tmp_path_factory.mktemp("left")
    path = folder / "referee.db"
    store, ledger = a_game_the_disk_refused(path)
    rescue.keep(ledger)
    store.close()
    return folder, path, next(folder.glob("referee-unsaved-*.txt"))


def recover_quietly(kept: Path, store: Path) -> tuple[int, str, str]:
    with redirect_stdout(io.StringIO()) as out, redirect_stderr(io.StringIO()) as err:
        code = main(["recover", str(kept), "--store", str(store)])
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=40)
@given(data=st.data(), first_put_back=st.booleans(), reseal=st.booleans())
def test_any_damage_puts_back_exactly_once_or_is_refused(
    left_at_exit, data, first_put_back, reseal
):
    """Damaged as a disk or an editor damages a file: put back exactly once, or refused in
    one line with the file and the store as they were. Resealed (its checksum made right
    after the damage), what it says is put back, never twice, or it is refused."""
    left, store_left, kept_left = left_at_exit
    text = kept_left.read_bytes()
    broken = data.draw(damaged(text))
    if reseal:
        broken = resealed(broken.decode(errors="replace")).encode()
    with tempfile.TemporaryDirectory(dir=left) as folder:
        store, kept = Path(folder) / "referee.db", Path(folder) / "rescue.txt"
        store.write_bytes(store_left.read_bytes())
        if first_put_back:  # the file was put back once already: it is found again
            kept.write_bytes(text)
            assert recover_quietly(kept, store)[0] == 0
        before = inputs_of(store)
        kept.write_bytes(broken)
        code, out, err = recover_quietly(kept, store)
        if code != 0:  # refused in one line, and nothing changed
            assert code == 2 and err.count("\n") == 1 and not out, err
            assert kept.read_bytes() == broken and inputs_of(store) == before
        elif not reseal:  # put back: the store's game is all of it
            assert not kept.exists() and inputs_of(store) == PLAYED + REFUSED
        else:  # what the file says, in its places, once
            said = rescue.parse(broken, kept)
            game = int(re.search(r"into game (\d+) ", out).group(1))
            got = inputs_of(store, game)
            assert got[said.first - 1 : said.last] == said.inputs
            assert len(got) == max(said.last, len(before) if game == 1 else 0)
        if not reseal:
            kept.write_bytes(text)  # the file whole again: never twice
            assert recover_quietly(kept, store)[0] == 0
            assert inputs_of(store) == PLAYED + REFUSED
