"""The calls' clips on disk: written whole or not at all, bounded, listed and deleted."""

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.audio.clips import Clip, ClipStore, Marker, clips_folder
from referee.audio.wav import read_mono
from referee.cli import main

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


@settings(max_examples=30, deadline=None)
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


def test_a_clip_whose_json_is_damaged_is_left_out_and_said(tmp_path, caplog):
    clips = ClipStore(tmp_path / "clips", max_bytes=10**9)
    sound = clips.save(clip(call_s=1), tone(0.5))
    clips.save(clip(call_s=2), tone(0.5))
    sound.with_suffix(".json").write_text('{"game": "one"')
    assert [k.clip.call_ns for k in clips.clips()] == [2 * 10**9]
    assert "not a clip that can be read" in caplog.text


def test_a_clips_soft_onsets_are_kept_and_an_older_clip_has_none():
    """Issue 30: which onsets are soft goes with the clip to the replay; a clip saved
    before they were marked reads as none soft."""
    marked = replace(clip(), onsets=(RATE - 480, RATE + 5000), soft=(RATE + 5000,))
    assert Clip.from_json(marked.to_json()) == marked
    older = json.loads(clip().to_json())
    del older["soft"]
    assert Clip.from_json(json.dumps(older)).soft == ()
