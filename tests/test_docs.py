"""The README and the docs stand alone: their links stay in the repository, and what they
tell a new user to type works after `make run`."""

import os
import re
from pathlib import Path

import pytest

from .conftest import ROOT

SKIPPED = {"build", "__pycache__", "node_modules"}


def _markdown_files() -> list[Path]:
    """Every markdown file of the repository: not the hidden folders (.git, .venv), the
    build's, nor a cache's."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [s for s in subfolders if not s.startswith(".") and s not in SKIPPED]
        found += [Path(folder, name) for name in files if name.endswith(".md")]
    return sorted(found)


DOCS = _markdown_files()
# The most a newcomer, a developer and a reader of the figures are asked to read.
LINES_AT_MOST = {"README.md": 220, "docs/design.md": 420, "docs/performance.md": 160}
LINK = re.compile(r"\]\(([^)\s]+)\)")
OUTSIDE = re.compile(r"\.\./shared|\bRULES\.md|\bDESIGN\.md")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
ATX = re.compile(r"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")


def _prose(text: str) -> str:
    """The text outside fenced code blocks, where a `#` or a `](` is only text."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return "\n".join(lines)


def github_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a file's headings: the heading's text as shown (a link's
    words, a code span's letters), lower case, every character but a letter, a digit,
    `_`, `-` and a space dropped, spaces made `-`; a repeated one gets -1, -2, ..."""
    anchors: set[str] = set()
    for line in _prose(text).splitlines():
        heading = ATX.match(line)
        if heading is None:
            continue
        shown = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading[1]).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", shown.lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in anchors:
            n += 1
            anchor = f"{slug}-{n}"
        anchors.add(anchor)
    return anchors


def test_github_anchors_are_made_as_github_makes_them():
    text = "# The page\n## The console's screen in the guest\n## `tie_ms` (the tie)\n"
    text += "```\n# not a heading\n```\n## The page\n### Voice onsets (issue 17's detector)\n"
    assert github_anchors(text) == {
        "the-page",
        "the-consoles-screen-in-the-guest",
        "tie_ms-the-tie",
        "the-page-1",
        "voice-onsets-issue-17s-detector",
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_in_the_repository_and_lead_somewhere(doc):
    text = doc.read_text()
    for target in LINK.findall(_prose(text)):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        name, _, anchor = target.partition("#")
        path = (doc.parent / name).resolve() if name else doc
        assert path.is_relative_to(ROOT), f"{target} leaves the repository"
        assert path.exists(), f"{target} does not exist"
        if anchor and path.suffix == ".md":
            assert anchor in github_anchors(path.read_text()), f"{target}: no such heading"
    assert not OUTSIDE.findall(text), f"{doc.name} names what is outside the repository"


@pytest.mark.parametrize(("name", "most"), LINES_AT_MOST.items())
def test_the_docs_stay_short_enough_to_be_read(name, most):
    lines = len((ROOT / name).read_text().splitlines())
    assert lines <= most, f"{name} has {lines} lines, {most} at most"


def test_no_doc_is_a_dated_log():
    """Dates belong to the figures' table (docs/performance.md), whose every row says when
    it was measured, and to what a benchmark printed (bench/results/)."""
    for doc in DOCS:
        if doc != ROOT / "docs" / "performance.md":
            dates = re.findall(r"\b20\d\d-[01]\d-[0-3]\d\b", doc.read_text())
            assert not dates, f"{doc.relative_to(ROOT)} is dated: {dates[:3]}"


def code_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith("    ")]


def test_the_readme_commands_work_after_make_run():
    # `make run` puts referee in .venv/bin, not on the PATH; an installed box has it in
    # /opt/referee/bin.
    for line in code_lines((ROOT / "README.md").read_text()):
        command = line.removeprefix("sudo -u referee ").split()
        if command and command[0].endswith("referee") and "/" not in command[0]:
            pytest.fail(f"the README says to type {line!r}: no `referee` on the PATH")


def test_the_readme_gives_pips_only_to_the_countdown():
    text = " ".join((ROOT / "README.md").read_text().split())
    for sentence in re.split(r"(?<=[.;:])\s", text):
        if "pips" in sentence:
            assert "countdown" in sentence or "super round" in sentence, sentence


# `wiring.md, "When something is wrong"` or `docs/rules.md's "Decisions"`: a section
# named where the program, a doc or a test sends the reader.
SECTION_REF = re.compile(
    r"""((?:[\w-]+/)*[\w-]+\.md)(?:'s)?,?\s*(?:#\s*)?["'“]([A-Z][^"'”\n]{1,80})["'”]"""
)
HEADING = re.compile(r"^#+\s+(.+?)\s*$", re.MULTILINE)
NAMING = sorted(
    {
        *ROOT.glob("referee/**/*.py"),
        *ROOT.glob("tools/**/*.py"),
        *ROOT.glob("bench/*.py"),
        *ROOT.glob("tests/**/*.py"),
        *DOCS,
    }
)


def _has_section(doc: Path, name: str) -> bool:
    """A heading named so, or so and then more words: "Event time: who pressed first"."""
    return any(
        re.fullmatch(re.escape(name) + r"(?:\W.*)?", heading.strip("`*"))
        for heading in HEADING.findall(doc.read_text())
    )


@pytest.mark.parametrize("source", NAMING, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_section_named_exists(source):
    for name, section in SECTION_REF.findall(source.read_text()):
        doc = next((d for d in (ROOT / name, source.parent / name) if d.is_file()), None)
        assert doc is not None, f"{source.name} names {name}, which does not exist"
        assert _has_section(doc, section), (
            f"{source.name} names {name}, {section!r}: no such section"
        )


def test_no_doc_tells_the_reader_to_type_a_placeholder():
    """`git clone <this repository>` is not an address anyone can use."""
    for doc in DOCS:
        assert "<this repository" not in doc.read_text(), doc.name


# A settings file's mistake as a doc shows it, checked against what the program says:
# `referee.toml:14: [rules] pointout_s: must be ...; got -1` (the example file, edited at
# that key: README.md, "Settings"), `[rules] rules: ...; got "solo"` (a phone's keys, which
# are told without the file and its line: docs/web.md), `players: must be ...; got 9`. The
# words a doc leaves out are written `...`; a key set beside it is said after it: "when the
# file sets `players = 3`".
SETTING_ERROR = re.compile(
    r"(?:(?P<file>[\w.-]+\.toml):(?P<line>\d+): )?(?:\[(?P<section>\w+)\] )?"
    r"(?P<key>\w+): (?P<what>(?:must be |unknown key|rules=).*?)(?:; got (?P<got>[^;]+))?"
)
BESIDE = re.compile(r"`([^`]+)`(?: when the file sets `(\w+) = ([^`]+)`)?")


def _setting_errors():
    for doc in DOCS:
        text = doc.read_text()
        name = str(doc.relative_to(ROOT))
        for line in code_lines(text):
            if SETTING_ERROR.fullmatch(line):
                yield pytest.param(line, {}, id=f"{name}: {line[:40]}")
        for span in BESIDE.finditer(" ".join(text.split())):
            said, key, value = span.groups()
            if SETTING_ERROR.fullmatch(said):
                beside = {key: value} if key else {}
                yield pytest.param(said, beside, id=f"{name}: {said[:40]}")


SETTING_ERRORS = list(_setting_errors())


def test_the_docs_show_the_settings_mistakes_the_users_meet():
    shown = " ".join(p.values[0] for p in SETTING_ERRORS)
    assert "referee.toml:" in shown and "[rules] rules:" in shown and "\u0060" not in shown
    assert len(SETTING_ERRORS) >= 4


@pytest.mark.parametrize(("said", "beside"), SETTING_ERRORS)
def test_each_settings_mistake_a_doc_shows_is_what_the_program_says(tmp_path, said, beside):
    from referee.config import SECTIONS, ConfigError, load_config

    shown = SETTING_ERROR.fullmatch(said)
    assert shown is not None
    key, value = shown["key"], shown["got"] or "0"  # an unknown key's value is not shown
    section = shown["section"] or next(s for s, keys in SECTIONS.items() if key in keys)
    if shown["file"]:
        # The example, as README.md says to start one, with this key set so.
        lines = (ROOT / "referee.example.toml").read_text().splitlines()
        at = lines.index(f"[{section}]")
        at += next(n for n, line in enumerate(lines[at:]) if re.match(rf"(# )?{key} = ", line))
        lines[at] = f"{key} = {value}"
        path = tmp_path / shown["file"]
    else:
        table = {**beside, key: value}
        lines = [f"[{section}]", *(f"{k} = {v}" for k, v in table.items())]
        path = tmp_path / "referee.toml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    if shown["file"]:
        message = message.replace(str(path), shown["file"])
    else:  # told without the file and its line, and the section where the doc leaves it
        message = re.sub(r"^.*?:\d+: ", "", message)
        if not shown["section"]:
            message = message.removeprefix(f"[{section}] ")
    pattern = ".*".join(re.escape(part) for part in said.split("..."))
    assert re.fullmatch(pattern, message), f"the doc says\n  {said}\nthe program\n  {message}"
