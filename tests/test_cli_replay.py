"""`referee replay`: a script in, the state as JSON out; a bad line stops it with FILE:LINE."""

import contextlib
import io
import json
import re
import time

import pytest
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from referee.cli import main
from referee.rules import RULE_KEYS, ScriptError, parse_script, replay, report

# What Python says in its own messages, which a user must never read.
PYTHONS_WORDS = ["Traceback", "invalid literal", "Exceeds the limit", "codec", "Error", "decimal"]


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
        {
            "callers": [2],
            "presses": [[2, 0.0], [4, 12.3]],
            "verdicts": [],
            "super": False,
            "seen": None,
        }
    ]
    assert [p["id"] for p in state["players"]] == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("0 press\n", 1, "press needs one player number, 1 to 8"),
        ("0 press two\n", 1, "press needs one player number, 1 to 8: 'press 2'; got 'two'"),
        ("0 press 0\n", 1, "press needs one player number"),
        ("0 press 9\n", 1, "press needs one player number, 1 to 8: 'press 2'; got '9'"),
        ("# fine\n0 jump\n", 2, "unknown input 'jump'"),
        ("1 valid\n0.5 invalid\n", 2, "goes back"),
        ("-1 tick\n", 1, "'-1' is not a time in seconds since the start"),
        ("soon tick\n", 1, "'soon' is not a time in seconds"),
        ("+1 tick\n", 1, "'+1' is not a time in seconds"),
        ("valid\n", 1, "expected 'TIME INPUT'"),
        ("0 valid please\n", 1, "valid takes no arguments; got 'please'"),
        ("0 end left=x\n", 1, "left=N"),
        ("0 end left=82\n", 1, "the cards left on the table (0 to 81); got 'left=82'"),
        ("0 tick\nconfig players=3\n", 2, "config must come before every input"),
        ("config players=3 speed=9\n", 1, "unknown config key 'speed'"),
        ("config players=2 players=3\n", 1, "config gives players twice"),
        ("config players=nine\n", 1, "players: must be a whole number of seats"),
        ("config players=+2\n", 1, "players: must be a whole number of seats"),
        ("config players=2 rules=solo\n", 1, "rules: rules=solo needs players=1; got 'solo'"),
        ("config rules=chess\n", 1, "rules: must be super, official, solo or solitaire"),
        ("config players=3 pointout_s=-2\n", 1, "pointout_s: must be seconds to show a SET"),
        ("config players=3 must_use_flipped=yes\n", 1, "must_use_flipped: must be true or false"),
        ("config players=3 super_s=1e308\n", 1, "super_s: must be seconds of the super round's"),
        ("config players=3 tie_ms=nan\n", 1, "tie_ms: must be milliseconds"),
        ("config players=3 tie_ms\n", 1, "key=value"),
    ],
)
def test_a_bad_line_exits_2_with_file_line_and_reason(tmp_path, capsys, text, line, reason):
    code, out, err = run(tmp_path, capsys, text)
    assert code == 2 and out == ""
    where, _, message = err.strip().partition(": ")
    assert where == f"{tmp_path / 'game.txt'}:{line}"
    assert reason in message


LAST = "the last a script may give, 1,000,000,000 s"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        # An OverflowError in the report: the photo finish's milliseconds as a float.
        (
            "config players=2 pointout_s=0\n0 press 1\n1e310 press 2\n",
            3,
            f"'1e310' is after {LAST}",
        ),
        # An OverflowError in the solo increment, at the press of a SET.
        ("config rules=solo players=1\n1e400 press 1\n1e400 valid\n", 2, "'1e400' is after"),
        # decimal.Overflow: the time in nanoseconds beyond Decimal's largest exponent.
        ("1e999991 tick\n", 1, "'1e999991' is after"),
        ("0 tick\n1e1000000000000000000000 tick\n", 2, "is after"),
        # 27 s a line to parse, the time made into an integer of a million digits.
        ("1e999990 press 1\n" * 3, 1, "'1e999990' is after"),
        ("1000000000.000000001 tick\n", 1, f"'1000000000.000000001' is after {LAST}"),
    ],
)
def test_a_time_beyond_the_last_is_refused_at_once(tmp_path, capsys, text, line, reason):
    """Each was a traceback or a stall: the time is bounded where it is read."""
    start = time.perf_counter()
    code, out, err = run(tmp_path, capsys, text)
    assert time.perf_counter() - start < 2  # 27 s a line before
    assert code == 2 and out == ""
    assert err.startswith(f"{tmp_path / 'game.txt'}:{line}: time ") and reason in err


def test_the_last_time_and_the_highest_numbers_replay(tmp_path, capsys):
    text = "config players=8 pointout_s=0\n0 press 1\n1000000000 press 8\n"
    code, out, err = run(tmp_path, capsys, text)
    assert code == 0 and err == ""
    assert json.loads(out)["calls"][0]["presses"] == [[1, 0.0], [8, 1e12]]


@pytest.mark.parametrize(
    "text",
    [
        "0 press \u00b2\n",  # a digit to str.isdigit(), not to int()
        "0 press \u0662\n",  # an Arabic-Indic 2: int() reads it
        "0 end left=" + "9" * 4000 + "\n",  # accepted, as the number it was
        "0 press " + "9" * 5000 + "\n",  # "Exceeds the limit (4300 digits)"
        "config players=" + "9" * 5000 + "\n",
        "config deals=" + "9" * 5000 + "\n",  # the whole number in the message
        "config pointout_s=1_0\n",  # float() reads 10
        "config players=\u0663\n",
        "\u0661 tick\n",  # Decimal reads 1
        "1_0 tick\n",
        "0 " + "x" * 100_000 + "\n",
    ],
)
def test_a_message_is_one_short_line_in_our_words(tmp_path, capsys, text):
    code, out, err = run(tmp_path, capsys, text)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and len(err) < 400
    for words in PYTHONS_WORDS:
        assert words not in err


def test_the_config_line_says_what_the_settings_file_says(tmp_path, capsys):
    """The same checks, the same words: only the value is written each file's way."""
    cases = [
        ("players", "9", "9"),
        ("players", "1", "1"),
        ("deals", "100", "100"),
        ("pointout_s", "86400.5", "86400.5"),
        ("pointout_s", "0.0005", "0.0005"),
        ("super_s", "0", "0"),
        ("tie_ms", "86400001", "86400001"),
        ("rules", "chess", '"chess"'),
        ("must_use_flipped", "yes", '"yes"'),
    ]
    for key, script_value, toml_value in cases:
        code, _, said = run(tmp_path, capsys, f"config {key}={script_value}\n")
        assert code == 2
        settings = tmp_path / "referee.toml"
        settings.write_text(f"[rules]\n{key} = {toml_value}\n")
        assert main(["config", "--config", str(settings)]) == 2
        told = capsys.readouterr().err
        assert said == f"{tmp_path / 'game.txt'}:1: {key}: {what(told)}; got '{script_value}'\n"
        assert told == f"{settings}:2: [rules] {key}: {what(said)}; got {toml_value}\n"


def what(message: str) -> str:
    """What a message says is wrong, without where or the value."""
    return message.partition(": ")[2].partition(": ")[2].rpartition("; got ")[0]


MILLION = "9" * 1_000_000


@pytest.mark.parametrize(
    "line",
    [
        f"{MILLION} tick",
        f"0.{MILLION} tick",
        f"1e{MILLION} tick",
        f"1e-{MILLION} press {MILLION}",
        f"0 end left={MILLION}",
        f"config players={MILLION}",
        f"config pointout_s=0.{MILLION}",
        f"config deals={MILLION}",
    ],
    ids=["time", "fraction", "exponent", "press", "left", "players", "pointout_s", "deals"],
)
def test_a_number_of_a_million_digits_is_read_at_once(tmp_path, capsys, line):
    """Nothing is slower than linear in a number's length: a megabyte is read in
    milliseconds (Python's int() and Decimal take seconds to minutes, or refuse)."""
    start = time.perf_counter()
    code, _, err = run(tmp_path, capsys, line + "\n")
    assert time.perf_counter() - start < 2
    assert (code, err.count("\n")) in ((0, 0), (2, 1))  # 0.999... is a second, a good time


def test_a_missing_script_is_a_clear_error(tmp_path, capsys):
    code = main(["replay", str(tmp_path / "nope.txt")])
    assert code == 2 and "cannot read the script" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"\xff\xfe\x00garbage", ":1: saved as UTF-16: save the script as UTF-8\n"),
        ("config players=2\n".encode("utf-16"), ":1: saved as UTF-16: save the script as UTF-8\n"),
        (
            b"0 press 1\n# caf\xe9\n1 valid\n",
            ":2: byte 0xE9 is not UTF-8: save the script as UTF-8\n",
        ),
        (
            b"0 tick\r\n1 tick\r2 t\xffck\n",
            ":3: byte 0xFF is not UTF-8: save the script as UTF-8\n",
        ),
    ],
)
def test_bytes_that_are_not_utf8_are_named_by_their_line(tmp_path, capsys, data, said):
    script = tmp_path / "game.txt"
    script.write_bytes(data)
    assert main(["replay", str(script)]) == 2
    assert capsys.readouterr().err == f"{script}{said}"


@pytest.mark.parametrize(
    "data",
    [
        b"config players=2\n0 press 1\n1 valid\n",
        b"\xef\xbb\xbfconfig players=2\n0 press 1\n1 valid\n",  # a byte-order mark
        b"\xef\xbb\xbfconfig players=2\r\n0 press 1\r\n1 valid\r\n",  # and CRLF
        b"config players=2\r0 press 1\r1 valid",  # CR alone, no end of line at the end
    ],
)
def test_a_script_is_read_however_an_editor_saved_it(tmp_path, capsys, data):
    script = tmp_path / "game.txt"
    script.write_bytes(data)
    assert main(["replay", str(script)]) == 0
    assert json.loads(capsys.readouterr().out)["bank"] == 2


def test_a_bom_later_than_the_start_is_no_bom(tmp_path, capsys):
    code, _, err = run(tmp_path, capsys, "0 tick\n\ufeff1 tick\n")
    assert code == 2 and err.endswith(":2: '\\ufeff1' is not a time in seconds\n")


def test_a_directory_is_no_script(tmp_path, capsys):
    assert main(["replay", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"{tmp_path}: cannot read the script: Is a directory\n"


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


# --- the promise: any text replays, or exits 2 with one line naming its line -------------

ODD_NUMBERS = st.one_of(
    st.from_regex(r"\A[0-9]{0,12}(\.[0-9]{0,12})?([eE][+-]?[0-9]{1,7})?\Z"),
    st.integers(0, 3000).map(lambda n: "9" * n),
    st.integers(0, 3000).map(lambda n: "0." + "0" * n + "5"),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["+2", "-0", "1_0", "inf", "nan", "1e310", "1e999991", "1e999990", "0x1"]),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=3),
)
WORDS = st.one_of(
    ODD_NUMBERS,
    st.sampled_from(["press", "valid", "invalid", "super", "undo", "tick", "end", "config"]),
    st.sampled_from(["end left=", *(f"{key}=" for key in RULE_KEYS)]).flatmap(
        lambda key: ODD_NUMBERS.map(lambda n: key + n)
    ),
    st.sampled_from(["rules=solo", "rules=official", "rules=solitaire", "rules=super", "#", "="]),
    st.text(max_size=6),
)
LINES = st.lists(st.lists(WORDS, max_size=5).map(" ".join), max_size=8)
NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])
SCRIPTS = st.one_of(
    st.binary(max_size=200),
    st.tuples(st.sampled_from(["", "\ufeff"]), LINES, NEWLINES).map(
        lambda s: (s[0] + s[2].join(s[1])).encode("utf-8", "surrogatepass")
    ),
    st.tuples(LINES, st.binary(max_size=3)).map(
        lambda s: "\n".join(s[0]).encode("utf-8", "surrogatepass") + s[1]
    ),
)


def replayed(path, data: bytes) -> tuple[int, str, str]:
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(path)])
    return code, out.getvalue(), err.getvalue()


@hyp_settings(max_examples=100)
@given(data=SCRIPTS)
def test_any_text_replays_or_exits_2_naming_its_line(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("script") / "game.txt"
    code, out, err = replayed(path, data)  # an exception here is the test failing
    lines = max(1, len(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")))
    if code == 0:
        assert err == "" and json.loads(out)["phase"]
    else:
        assert code == 2 and out == ""
        said = re.fullmatch(rf"{re.escape(str(path))}:(\d+): ([^\n]+)\n", err)
        assert said, err
        assert 1 <= int(said[1]) <= lines and len(said[2]) < 300
        assert not any(words in err for words in PYTHONS_WORDS), err
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    # One parser: the text read whole says what the file read line by line said.
    try:
        script = parse_script(text)
    except ScriptError as refused:
        assert err == f"{refused.where(str(path))}\n"
        return
    state = replay(script.settings, (inp for _, inp in script.inputs), lobby=script.lobby)
    assert code == 0 and json.loads(out) == report(script.settings, state)
