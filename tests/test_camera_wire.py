"""The camera process's lines as the daemon takes them (camera/wire.py): a reading comes
back as it was sent, and anything else, however it is made, is refused as a BadLine,
never another error and never a reading the daemon could not show."""

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.camera.wire import (
    MAX_LINE,
    BadLine,
    parse,
    reading_line,
    status_line,
    unread_line,
)
from referee.inbox import Seen, SeenCard, SourceStatus, Unread

FAST = settings(max_examples=100)

faces = st.tuples(*[st.integers(0, 2)] * 4)
boxes = st.tuples(*[st.integers(0, 4000)] * 4)
cards = st.lists(st.tuples(faces, st.booleans(), boxes), max_size=30)


def _sets(cards):
    """Every SET among the sure cards: what the camera's process sends."""
    sure = [i for i, (_, s, _) in enumerate(cards) if s]
    return [
        (i, j, k)
        for n, i in enumerate(sure)
        for m, j in enumerate(sure[n + 1 :], n + 1)
        for k in sure[m + 1 :]
        if all(sum(v) % 3 == 0 for v in zip(cards[i][0], cards[j][0], cards[k][0], strict=True))
    ]


@FAST
@given(st.integers(0, 2**63), cards)
def test_a_reading_comes_back_as_it_was_sent(t_ns, cards):
    sets = _sets(cards)
    seen = parse(reading_line(t_ns, cards, sets))
    assert seen == Seen(t_ns, tuple(SeenCard(f, s, b) for f, s, b in cards), tuple(sets))


@FAST
@given(
    st.integers(0, 2**63), st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=400)
)
def test_a_frame_unread_comes_back_as_it_was_sent(t_ns, why):
    """Why a frame could not be read (a phone's photo, damaged inside), whatever the
    libraries said: cut to a status's length, what the daemon would refuse made a `?`, it
    comes back as sent."""
    said = parse(unread_line(t_ns, why))
    assert isinstance(said, Unread) and said.t_ns == t_ns and len(said.why) == len(why[:300])
    assert all(a == b or a == "?" for a, b in zip(said.why, why, strict=False))


def test_a_status_comes_back_as_the_camera_source_status():
    said = parse(status_line("camera lost (/dev/video0: no frame): waiting for it", ok=False))
    assert said == SourceStatus(
        "camera", "camera lost (/dev/video0: no frame): waiting for it", False
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 100_001) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=10) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


@FAST
@given(st.binary(max_size=300))
def test_any_bytes_are_a_line_or_refused(line):
    with contextlib.suppress(BadLine):
        parse(line)


@settings(max_examples=60)
@given(
    st.fixed_dictionaries(
        {"t": json_values, "cards": json_values | st.lists(json_values), "sets": json_values}
    )
)
def test_a_reading_of_the_wrong_shape_is_refused_not_taken(said):
    try:
        seen = parse(json.dumps(said).encode())
    except BadLine:
        return
    # Taken only where every card and SET is one the screens can show.
    assert isinstance(seen, Seen)
    assert all(len(c.face) == 4 and all(0 <= v <= 2 for v in c.face) for c in seen.cards)
    assert all(seen.cards[i].sure for s in seen.sets for i in s)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"x" * (MAX_LINE + 1), "a line over"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"t": 1, "cards": [], "sets": [], "more": 1}', "unknown keys"),
        (b'{"t": -1, "cards": [], "sets": []}', "stamp"),
        (b'{"t": 1.5, "cards": [], "sets": []}', "stamp"),
        (b'{"t": 1, "cards": [[3,0,0,0,1,0,0,1,1]], "sets": []}', "out of range"),
        (b'{"t": 1, "cards": [[0,0,0,0,true,0,0,1,1]], "sets": []}', "nine whole numbers"),
        (b'{"t": 1, "cards": ' + json.dumps([[0] * 9] * 82).encode() + b', "sets": []}', "81"),
        (b'{"status": "lost\\u001b[2J", "ok": false}', "control character"),
        (b'{"status": "' + b"x" * 301 + b'", "ok": false}', "short text"),
        (b"[" * 100_000, "a line over"),
        (b'{"unread": "damaged\\u0007", "t": 1}', "printable"),
        (b'{"unread": "damaged", "t": -1}', "stamp"),
        (b'{"unread": 3, "t": 1}', "printable"),
    ],
)
def test_what_the_wire_refuses(line, why):
    with pytest.raises(BadLine, match=why):
        parse(line)


def test_a_set_must_be_three_sure_cards_that_are_a_set():
    card = [0, 0, 0, 0, 1, 0, 0, 10, 10]
    line = {"t": 1, "cards": [card, [1, 0, 0, 0, 1, 0, 0, 10, 10], [1, 1, 0, 0, 1, 0, 0, 9, 9]]}
    with pytest.raises(BadLine, match="not a SET"):
        parse(json.dumps({**line, "sets": [[0, 1, 2]]}).encode())
    with pytest.raises(BadLine, match="distinct sure"):
        parse(json.dumps({**line, "sets": [[0, 0, 1]]}).encode())
    with pytest.raises(BadLine, match="distinct sure"):
        parse(json.dumps({**line, "sets": [[0, 1, 3]]}).encode())
