"""The terminal's keys: what is typed, and what is only a key's escape sequence."""

from referee.inputs.keyboard import typed


def test_escape_sequences_typed_are_no_buzzers():
    # Delete, Ctrl+Up, an arrow in application mode, then real keys.
    assert "".join(typed("\x1b[3~\x1b[1;5A\x1bOB1v")) == "1v"


def test_a_lone_escape_and_capitals():
    assert "".join(typed("S\x1b")) == "s"
