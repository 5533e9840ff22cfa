"""The calls' clips on disk: written whole or not at all, bounded, listed and deleted."""

import json
import os
import subprocess
import sys
import threading
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.audio.clips import (
    LONGEST_S,
    Clip,
    ClipStore,
    ClipWindow,
    Damaged,
    Deleted,
    Kept,
    Marker,
)
from referee.audio.wav import read_mono
from referee.cli import main
from referee.config import load_config
from referee.errors import RefereeError
from referee.store.paths import clips_folder

from .conftest import ROOT

RATE = 48_000


def clip(game: int = 1, call_s: float = 12.3, presses: tuple[Marker, ...] = ()) -> Clip:
    call_ns = round(call_s * 1e9)
    return Clip(
        game=game,
        call_ns=call_ns,
        sample_rate=RATE,
        first_ns=call_ns - 1_000_000_000,
        presses=presses or (Marker(2, RATE), Marker(4, RATE + 202)),
        onsets=(RATE - 480,),
        gaps=((RATE * 2, 96),),
    )


def tone(seconds: float = 3.0) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return 0.5 * np.sin(2 * np.pi * 440 * t)


def test_a_clip_is_its_sound_and_what_it_shows(tmp_path):
    clips = ClipStore(tmp_path / "clips", max_bytes=10**9)
    made = clip()
    sound = clips.save(made, tone())
    samples, rate = read_mono(sound)
    assert rate == RATE and len(samples) == 3 * RATE
    assert np.max(np.abs(samples - tone())) < 1e-4  # 16 bits
    [kept] = clips.clips()
    assert kept.clip == made and kept.sound == sound and kept.samples == 3 * RATE
    assert json.loads(sound.with_suffix(".json").read_text())["presses"][1] == {
        "player": 4,
        "sample": RATE + 202,
    }


def test_16_bit_samples_are_written_as_they_are(tmp_path):
    """The ring's own samples, as the clips' cutter has them."""
    ring = (tone() * 32768).astype(np.int16)
    sound = ClipStore(tmp_path / "clips", max_bytes=10**9).save(clip(), ring)
    samples, _ = read_mono(sound)
    assert np.array_equal(samples * 32768, ring)


def test_clips_are_kept_beside_the_store(tmp_path):
    assert clips_folder(tmp_path / "referee.db") == tmp_path / "clips"


def test_the_oldest_clips_go_first_when_they_take_too_much(tmp_path):
    one = ClipStore(tmp_path / "clips", max_bytes=10**9).save(clip(call_s=1), tone())
    size = one.stat().st_size + one.with_suffix(".json").stat().st_size
    clips = ClipStore(tmp_path / "clips", max_bytes=int(2.5 * size))
    for call_s in (2, 3):
        clips.save(clip(call_s=call_s), tone())
    assert [k.clip.call_ns for k in clips.clips()] == [2 * 10**9, 3 * 10**9]


def test_a_clip_whose_json_is_damaged_still_takes_room_and_goes_first(tmp_path):
    """Room is made by the files' names and sizes: no JSON is read at a save."""
    one = ClipStore(tmp_path / "clips", max_bytes=10**9).save(clip(call_s=1), tone())
    one.with_suffix(".json").write_text('{"game": "one"')
    size = one.stat().st_size + len('{"game": "one"')
    clips = ClipStore(tmp_path / "clips", max_bytes=int(2.5 * size))
    for call_s in (2, 3):
        clips.save(clip(call_s=call_s), tone())
    assert not one.exists() and not one.with_suffix(".json").exists()
    assert [k.clip.call_ns for k in clips.clips()] == [2 * 10**9, 3 * 10**9]


def test_a_part_left_by_a_cut_and_a_sound_without_its_json_are_no_clips(tmp_path):
    folder = tmp_path / "clips"
    clips = ClipStore(folder, max_bytes=10**9)
    clips.save(clip(call_s=1), tone())
    (folder / "game00001-call000000002000000.wav").write_bytes(b"RIFF")  # its JSON never came
    (folder / "game00001-call000000003000000.wav.part").write_bytes(b"RIFF")
    assert [k.clip.call_ns for k in clips.clips()] == [10**9]
    clips.save(clip(call_s=4), tone())
    assert not list(folder.glob("*.part"))


def test_a_sound_a_cut_left_without_its_json_takes_room_and_goes_with_its_call(tmp_path):
    """A power cut between a clip's sound and its JSON leaves the sound alone: no clip, but
    its bytes are on the card, counted in the budget, deleted first as the oldest call's
    and by `referee clips --delete`."""
    folder = tmp_path / "clips"
    sound = ClipStore(folder, max_bytes=10**9).save(clip(call_s=1), tone())
    sound.with_suffix(".json").unlink()  # as if the cut came before its rename
    size = sound.stat().st_size
    clips = ClipStore(folder, max_bytes=int(2.5 * size))
    for call_s in (2, 3):
        clips.save(clip(call_s=call_s), tone())
    assert not sound.exists()
    assert [k.clip.call_ns for k in clips.clips()] == [2 * 10**9, 3 * 10**9]
    (folder / "game00002-call000000001000000.wav").write_bytes(sound.name.encode())
    clips.delete(2)
    assert not (folder / "game00002-call000000001000000.wav").exists()


@settings(max_examples=30)
@given(seconds=st.lists(st.sampled_from([0.1, 0.5, 1.0, 3.0]), min_size=1, max_size=8))
def test_whatever_is_saved_the_clips_fit_and_are_the_newest(tmp_path_factory, seconds):
    folder = tmp_path_factory.mktemp("clips")
    budget = 250_000  # bytes: a 3 s clip is 288 kB, more than the whole budget alone
    clips = ClipStore(folder, max_bytes=budget)
    for n, s in enumerate(seconds):
        clips.save(clip(call_s=n + 1), tone(s))
    kept = clips.clips()
    assert sum(k.bytes for k in kept) <= budget
    names = [k.clip.call_ns for k in kept]
    assert names == [round((n + 1) * 1e9) for n in range(len(seconds))][len(seconds) - len(names) :]


# A 64 kB disk of its own (a user and mount namespace): a 3 s clip does not fit.
FULL_DISK = """
set -e
mount -t tmpfs -o size=64k tmpfs "$DISK"
"$PY" - <<'EOF'
import os, numpy as np
from pathlib import Path
from referee.audio.clips import ClipStore
from tests.test_clips import clip, tone
clips = ClipStore(Path(os.environ["DISK"]) / "clips", max_bytes=10**9)
clips.save(clip(call_s=1), tone(0.2))
try:
    clips.save(clip(call_s=2), tone(3.0))
except OSError as err:
    print("refused:", err.strerror)
print("left:", sorted(p.name for p in (Path(os.environ["DISK"]) / "clips").iterdir()))
print("kept:", [k.clip.call_ns for k in clips.clips()])
EOF
"""


def test_a_full_disk_loses_the_clip_whole_and_keeps_the_others(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", FULL_DISK],
        env={
            "DISK": str(disk),
            "PY": sys.executable,
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
        },
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    if done.returncode and "unshare" in done.stderr:
        pytest.skip(f"no user namespaces here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert "refused: No space left on device" in done.stdout
    lines = done.stdout.splitlines()
    assert (
        "left: ['game00001-call000001000000000.json', 'game00001-call000001000000000.wav']" in lines
    )
    assert "kept: [1000000000]" in lines


def test_referee_clips_lists_and_deletes(tmp_path, capsys):
    store = tmp_path / "referee.db"
    clips = ClipStore(clips_folder(store), max_bytes=10**9)
    clips.save(clip(game=1, call_s=65.25), tone())
    clips.save(clip(game=2, call_s=3), tone(1.0))
    assert main(["clips", "--store", str(store)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "game 1, call at 1:05.2: game00001-call000065250000000.wav, 3.0 s;"
        " presses P2 +0.0 ms, P4 +4.2 ms; 1 voice onset(s); 1 gap(s)",
        "game 2, call at 0:03.0: game00002-call000003000000000.wav, 1.0 s;"
        " presses P2 +0.0 ms, P4 +4.2 ms; 1 voice onset(s); 1 gap(s)",
    ]
    assert main(["clips", "--store", str(store), "--delete"]) == 2
    assert "name a game (--game N) or --all" in capsys.readouterr().err
    assert main(["clips", "--store", str(store), "--delete", "--game", "1"]) == 0
    assert "1 clip deleted" in capsys.readouterr().out
    assert [k.clip.game for k in clips.clips()] == [2]
    assert main(["clips", "--store", str(store), "--delete", "--all"]) == 0
    assert main(["clips", "--store", str(store)]) == 0
    assert capsys.readouterr().out.endswith("no clips\n")


def test_a_clip_whose_json_is_damaged_is_listed_as_such_and_said_once(tmp_path, caplog):
    clips = ClipStore(tmp_path / "clips", max_bytes=10**9)
    sound = clips.save(clip(call_s=1), tone(0.5))
    clips.save(clip(call_s=2), tone(0.5))
    sound.with_suffix(".json").write_text('{"game": "one"')
    for _ in range(2):  # the page lists a game's clips at every look
        damaged, kept = clips.clips()
        assert isinstance(damaged, Damaged) and (damaged.game, damaged.call_ns) == (1, 10**9)
        assert damaged.why.startswith("its JSON: ") and kept.clip.call_ns == 2 * 10**9
    assert caplog.text.count("a damaged clip, skipped") == 1


def flipped(path, at: int, bit: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 1 << bit
    path.write_bytes(bytes(data))


def test_any_flipped_bit_of_the_fmt_chunks_size_is_a_damaged_clip(tmp_path):
    """14 of its 32 bits made `wave` raise RuntimeError: REPLAY crashed the box, the page's
    list was a 500 and `referee clips` a traceback (issue 29)."""
    clips = ClipStore(tmp_path / "clips", max_bytes=10**9)
    sound = clips.save(clip(), tone(0.2))
    whole = sound.read_bytes()
    for bit in range(32):
        sound.write_bytes(whole)
        flipped(sound, 16 + bit // 8, bit % 8)
        [listed] = clips.clips()
        assert isinstance(listed, Damaged) and listed.why.startswith("its sound: "), bit
        assert clips.load(listed.name) == listed


def test_a_json_nested_too_deep_is_a_damaged_clip(tmp_path):
    """json raised RecursionError, which nothing caught."""
    clips = ClipStore(tmp_path / "clips", max_bytes=10**9)
    sound = clips.save(clip(), tone(0.2))
    sound.with_suffix(".json").write_text("[" * 100_000)
    [listed] = clips.clips()
    assert isinstance(listed, Damaged) and listed.why == "its JSON: nested too deep"


def test_a_clip_larger_than_its_window_allows_is_refused_unread(tmp_path):
    clips = ClipStore(tmp_path / "clips", max_bytes=10**9)
    sound = clips.save(clip(), tone(0.2))
    with sound.open("r+b") as f:
        f.truncate(2**40)  # holes: were it read, a terabyte
    [listed] = clips.clips()
    assert isinstance(listed, Damaged) and f"{2**40} bytes" in listed.why
    meta = sound.with_suffix(".json")
    with meta.open("r+b") as f:
        f.truncate(2**40)
    [listed] = clips.clips()
    assert isinstance(listed, Damaged) and f"{2**40} bytes" in listed.why


def test_the_longest_clip_the_settings_make_fits_longest_s(tmp_path):
    settings = tmp_path / "referee.toml"
    settings.write_text("[audio]\nclip_before_s = 10\nclip_after_s = 10\n")
    window = ClipWindow.of(load_config(settings).audio)
    assert window.before_ns + window.after_ns <= LONGEST_S * 1e9
    for key in ("clip_before_s", "clip_after_s"):
        settings.write_text(f"[audio]\n{key} = 10.001\n")
        with pytest.raises(RefereeError):
            load_config(settings)


_WHOLE: dict[str, bytes] = {}


def _a_clip_in(folder):
    """A clip saved once a process, its files copied for each example."""
    if not _WHOLE:
        sound = ClipStore(folder / "made", max_bytes=10**9).save(clip(), tone(0.1))
        _WHOLE.update(wav=sound.read_bytes(), json=sound.with_suffix(".json").read_bytes())
    return dict(_WHOLE)


@settings(max_examples=150)  # tests/test_wavfile.py flips the WAV 300 more
@given(
    which=st.sampled_from(["wav", "json"]),
    at=st.integers(0, 400),
    bit=st.integers(0, 7),
    cut=st.one_of(st.none(), st.integers(0, 400)),
    junk=st.binary(max_size=40),
)
def test_any_flip_cut_or_junk_in_a_clip_is_the_clip_or_damaged(
    tmp_path_factory, which, at, bit, cut, junk
):
    folder = tmp_path_factory.mktemp("clips")
    files = _a_clip_in(folder)
    data = bytearray(files[which])
    data[at % len(data)] ^= 1 << bit
    files[which] = bytes(data[:cut]) + junk
    clips = ClipStore(folder / "clips", max_bytes=10**9)
    made = clip()
    clips.folder.mkdir()
    for kind, data in files.items():
        (clips.folder / f"{made.name}.{kind}").write_bytes(data)
    [listed] = clips.clips()
    loaded = clips.load(made.name)
    if isinstance(listed, Kept):
        assert isinstance(loaded, tuple) and loaded[0] == listed
        assert len(loaded[1]) == 2 * listed.samples <= 2 * (LONGEST_S + 1) * RATE
        assert listed.clip.name == made.name
    else:
        assert isinstance(listed, Damaged) and loaded == listed and listed.name == made.name
    assert clips.delete() == Deleted(clips=1, snapshots=0) and not list(clips.folder.iterdir())


ODD = ["fifo", "folder", "link", "dangling", "huge", "empty", "junk"]


def _odd_entry(path, kind: str, target) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "link":
        path.symlink_to(target)
    elif kind == "dangling":
        path.symlink_to(path.with_name("nowhere"))
    elif kind == "huge":
        with path.open("wb") as f:
            f.truncate(2**40)
    else:
        path.write_bytes(b"" if kind == "empty" else b"RIFF\xff\xff\xff\xffWAVEjunk")


def listed_within(clips, seconds: float = 10):
    """clips.clips(), or the test fails if it waits (on a FIFO: something then opens each
    FIFO to write, so that it is let go)."""
    got: list[object] = []
    listing = threading.Thread(target=lambda: got.append(clips.clips()))
    listing.start()
    listing.join(seconds)
    if listing.is_alive():
        for path in clips.folder.iterdir():
            if path.is_fifo():
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        listing.join()
        pytest.fail("the clips' listing waited on a FIFO")
    return got[0]


@settings(max_examples=60)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from(ODD),
            st.sampled_from(["json", "wav", "json.part", "txt", ""]),
            st.sampled_from(["game00001-call000000001000000", "game1-call1", "gameX", "x"]),
        ),
        max_size=6,
        unique_by=lambda e: (e[1], e[2]),
    )
)
def test_whatever_the_folder_holds_the_listing_never_raises_nor_waits(tmp_path_factory, entries):
    """A FIFO named like a clip froze the loop 63 s and hung the page's reader for good."""
    folder = tmp_path_factory.mktemp("odd")
    clips = ClipStore(folder / "clips", max_bytes=10**9)
    real = clips.save(clip(call_s=5), tone(0.1))
    for kind, suffix, stem in entries:
        _odd_entry(clips.folder / f"{stem}.{suffix}".rstrip("."), kind, real)
    listed = listed_within(clips)
    names = [entry.clip.name if isinstance(entry, Kept) else entry.name for entry in listed]
    assert names == sorted(names) and clip(call_s=5).name in names
    odd = {"game00001-call000000001000000"} & {
        stem for _, suffix, stem in entries if suffix == "json"
    }
    assert set(names) == {clip(call_s=5).name} | odd  # what is named like a clip's JSON
    for entry in listed:
        assert isinstance(entry, Kept) == (entry is listed[-1])


def test_what_cannot_be_deleted_to_make_room_never_loses_the_clip_saved(tmp_path, caplog):
    """A folder named like the oldest clip, or like a part a cut left: the clip being saved
    was refused (OSError from the room it made), and so was every later one."""
    clips = ClipStore(tmp_path / "clips", max_bytes=10**9)
    one = clips.save(clip(call_s=1), tone(0.5))
    size = one.stat().st_size + one.with_suffix(".json").stat().st_size
    (clips.folder / f"{clip(call_s=0.5).name}.json").mkdir()  # the oldest "clip"
    (clips.folder / f"{clip(call_s=0.7).name}.wav.part").mkdir()
    clips = ClipStore(tmp_path / "clips", max_bytes=int(1.5 * size))
    for call_s in (2, 3):
        clips.save(clip(call_s=call_s), tone(0.5))  # no OSError
    assert [k.clip.call_ns for k in clips.clips() if isinstance(k, Kept)] == [3 * 10**9]
    assert caplog.text.count("cannot be deleted") == 2  # once each, at two saves


def test_referee_clips_lists_a_damaged_clip_and_deletes_it(tmp_path, capsys):
    store = tmp_path / "referee.db"
    clips = ClipStore(clips_folder(store), max_bytes=10**9)
    sound = clips.save(clip(game=1, call_s=65.25), tone(0.5))
    clips.save(clip(game=1, call_s=70), tone(0.5))
    flipped(sound, 19, 7)  # the fmt chunk's size: 2 GB
    assert main(["clips", "--store", str(store)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        "game 1, call at 1:05.2: game00001-call000065250000000: damaged, its sound: not a PCM"
    )
    assert out[1].startswith("game 1, call at 1:10.0: game00001-call000070000000000.wav, 0.5 s")
    assert main(["clips", "--store", str(store), "--delete", "--game", "1"]) == 0
    assert "2 clips deleted" in capsys.readouterr().out
    assert not list(clips_folder(store).iterdir())


def test_what_cannot_be_deleted_is_one_line_and_the_rest_goes(tmp_path, capsys):
    store = tmp_path / "referee.db"
    clips = ClipStore(clips_folder(store), max_bytes=10**9)
    clips.save(clip(game=1, call_s=2), tone(0.1))
    (clips.folder / f"{clip(game=1, call_s=1).name}.json").mkdir()  # a folder named so
    assert main(["clips", "--store", str(store), "--delete", "--all"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "game00001-call000001000000000.json: not deleted: " in err
    assert [p.name for p in clips.folder.iterdir()] == ["game00001-call000001000000000.json"]


def test_a_clips_soft_onsets_are_kept_and_an_older_clip_has_none():
    """Issue 30: which onsets are soft goes with the clip to the replay; a clip saved
    before they were marked reads as none soft."""
    marked = replace(clip(), onsets=(RATE - 480, RATE + 5000), soft=(RATE + 5000,))
    assert Clip.from_json(marked.to_json()) == marked
    older = json.loads(clip().to_json())
    del older["soft"]
    assert Clip.from_json(json.dumps(older)).soft == ()
