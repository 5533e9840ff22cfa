"""`referee replay`: a script in, the state as JSON out; a bad line stops it with FILE:LINE."""

import json

import pytest

from referee.cli import main


def run(tmp_path, capsys, text: str) -> tuple[int, str, str]:
    script = tmp_path / "game.txt"
    script.write_text(text)
    code = main(["replay", str(script)])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_the_state_as_json(tmp_path, capsys):
    code, out, err = run(tmp_path, capsys, "config players=4\n0.000 press 2\n0.0123 press 4\n")
    assert code == 0 and err == ""
    state = json.loads(out)
    assert state["phase"] == "call" and state["rules"] == "super"
    assert state["calls"] == [
        {"callers": [2], "presses": [[2, 0.0], [4, 12.3]], "verdicts": [], "super": False}
    ]
    assert [p["id"] for p in state["players"]] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("0 press\n", 1, "press needs one player number"),
        ("0 press two\n", 1, "press needs one player number"),
        ("0 press 0\n", 1, "press needs one player number"),
        ("# fine\n0 jump\n", 2, "unknown input 'jump'"),
        ("1 valid\n0.5 invalid\n", 2, "goes back"),
        ("-1 tick\n", 1, "not a time"),
        ("soon tick\n", 1, "not a time in seconds"),
        ("valid\n", 1, "expected 'TIME INPUT'"),
        ("0 valid please\n", 1, "takes no arguments"),
        ("0 end left=x\n", 1, "left=N"),
        ("0 tick\nconfig players=3\n", 2, "config must come before every input"),
        ("config players=3 speed=9\n", 1, "unknown config key 'speed'"),
        ("config players=nine\n", 1, "players must be"),
        ("config players=2 rules=solo\n", 1, "rules=solo needs players=1"),
        ("config rules=chess\n", 1, "rules must be super, official, solo or solitaire"),
        ("config players=3 pointout_s=-2\n", 1, "pointout_s cannot be negative"),
        ("config players=3 must_use_flipped=yes\n", 1, "true or false"),
        ("config players=3 super_s=1e308\n", 1, "super_s must be seconds"),
        ("config players=3 tie_ms=nan\n", 1, "tie_ms must be milliseconds"),
        ("config players=3 tie_ms\n", 1, "key=value"),
    ],
)
def test_a_bad_line_exits_2_with_file_line_and_reason(tmp_path, capsys, text, line, reason):
    code, out, err = run(tmp_path, capsys, text)
    assert code == 2 and out == ""
    where, _, message = err.strip().partition(": ")
    assert where == f"{tmp_path / 'game.txt'}:{line}"
    assert reason in message


def test_a_missing_script_is_a_clear_error(tmp_path, capsys):
    code = main(["replay", str(tmp_path / "nope.txt")])
    assert code == 2 and "cannot read the script" in capsys.readouterr().err


def test_a_binary_file_is_a_clear_error(tmp_path, capsys):
    script = tmp_path / "game.txt"
    script.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["replay", str(script)]) == 2
    assert "cannot read the script" in capsys.readouterr().err


def test_a_script_never_reads_a_settings_file(tmp_path, capsys, monkeypatch):
    """Without `players=` the lobby has seats 1 to 8, whatever this machine's settings say."""
    settings = tmp_path / "referee.toml"
    settings.write_text('[rules]\nrules = "official"\nplayers = 3\npointout_s = 1\n')
    monkeypatch.setenv("REFEREE_CONFIG", str(settings))
    code, out, err = run(tmp_path, capsys, "0 press 8\n1 press 7\n2 super\n3 press 8\n9 tick\n")
    assert code == 0 and err == ""
    state = json.loads(out)
    assert state["rules"] == "super" and state["phase"] == "call"  # no 1 s point-out timer
    assert [p["id"] for p in state["players"]] == [7, 8]
