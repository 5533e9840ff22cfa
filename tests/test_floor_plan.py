"""The floor plan (docs/design.md, "Module map"): a package a concern, a wing a process.

The low modules, which every process shares, import no wing; a wing imports the low
modules and only the wings it is allowed (the daemon starts the page by its command line,
never by import); nothing installed imports tools/. And the design's module map names
every module under referee/ and tools/, with the process that runs it, and nothing else.
Every import counts: at the top, in a function, under TYPE_CHECKING."""

import ast
import re
from pathlib import Path

import pytest

from .conftest import ROOT

# referee/'s parts by their first name under referee/ (a module, or a package).
LOW = {
    *("units", "names", "errors", "buttons", "view", "seats", "inbox", "control"),
    *("page_socket", "terminal_log", "framing", "rules", "config", "linux", "store", "history"),
    *("faces", "claim", "photo_header"),
}
TOP = {"__init__", "__main__", "cli"}  # the door: imports any part, each when it runs
# Each wing, and the other wings it may import.
WINGS: dict[str, set[str]] = {
    # Never web; nor vision: the camera's process reads the frames, the daemon its lines.
    "daemon": {"inputs", "outputs", "audio", "camera"},
    "web": {"audio"},  # the page reads the microphone's clips (web/clips_api.py)
    "inputs": set(),
    "outputs": set(),
    "audio": set(),
    "vision": set(),  # the camera's eyes (issue 32): the daemon and `referee look` use them
    # The camera's process writes each call's snapshot beside its clip, in the clips' budget
    # (audio/clips.py, which imports no numpy).
    "camera": {"vision", "audio"},
}
PROCESSES = {"run", "page", "cut", "cam", "cmd", "any", "make"}  # the map's second column
MAP_SECTION = re.compile(r"^## Module map\n(.*?)(?=^## )", re.MULTILINE | re.DOTALL)


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: str) -> list[Path]:
    return sorted(p for p in (ROOT / root).rglob("*.py") if "__pycache__" not in p.parts)


def imports(path: Path, root: Path = ROOT) -> set[str]:
    """The referee and tools modules the file imports, by absolute name: `from X import
    name` counts as X.name where that is a module."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(filter(None, [*parts, node.module]))
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                where = root / whole.replace(".", "/")
                is_module = where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()
                found.add(whole if is_module else base)
    return {m for m in found if m.split(".")[0] in ("referee", "tools")}


def part(module: str) -> str:
    """referee.daemon.app: daemon; referee: __init__; tools.wiring: tools."""
    names = module.split(".")
    if names[0] == "tools":
        return "tools"
    return names[1] if len(names) > 1 else "__init__"


def refused(path: Path, root: Path = ROOT) -> list[str]:
    """What the file imports that its place may not: why, one line each."""
    mine = part(module_name(path, root))
    why = []
    for target in sorted(imports(path, root)):
        theirs = part(target)
        if theirs == mine or mine in TOP:
            continue
        if theirs == "tools":
            why.append(f"imports {target}: tools/ is not installed")
        elif theirs in TOP:
            why.append(f"imports {target}: the door is imported by nothing")
        elif mine in LOW and theirs not in LOW:
            why.append(f"imports {target}: a low module imports no wing")
        elif mine in WINGS and theirs not in LOW | WINGS[mine]:
            why.append(f"imports {target}: {mine} may not import {theirs}")
    return why


def test_every_part_of_referee_has_a_place():
    parts = {part(module_name(path)) for path in modules("referee")}
    assert parts - LOW - TOP - set(WINGS) == set(), "name its place in tests/test_floor_plan.py"


def test_the_wings_stay_apart_and_the_low_modules_import_no_wing():
    found = {str(p.relative_to(ROOT)): refused(p) for p in modules("referee")}
    assert {name: why for name, why in found.items() if why} == {}


@pytest.mark.parametrize(
    ("where", "text", "why"),
    [
        ("web/x.py", "from referee.daemon.app import App\n", "web may not import daemon"),
        ("web/x.py", "def f():\n    from ..outputs import screens\n", "web may not import outputs"),
        ("daemon/x.py", "from referee.web import server\n", "daemon may not import web"),
        ("audio/x.py", "from referee.outputs.sound import Plan\n", "audio may not import outputs"),
        ("store/x.py", "from referee.inputs.edges import Edge\n", "a low module imports no wing"),
        ("units.py", "from .daemon import app\n", "a low module imports no wing"),
        ("inputs/x.py", "from tools import gallery\n", "tools/ is not installed"),
    ],
)
def test_the_check_catches_a_wing_reaching_into_another(where, text, why, tmp_path):
    offender = tmp_path / "referee" / where
    offender.parent.mkdir(parents=True, exist_ok=True)
    offender.write_text(text)
    assert any(why in line for line in refused(offender, tmp_path)), refused(offender, tmp_path)


def reached(start: list[Path]) -> set[str]:
    """Every referee module the start's modules import, and those they import, ..."""
    seen: set[str] = set()
    todo = [module_name(p) for p in start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        where = ROOT / name.replace(".", "/")
        path = where / "__init__.py" if where.is_dir() else where.with_suffix(".py")
        if path.is_file():
            todo += sorted(imports(path))
    return seen


def test_the_daemon_reaches_neither_the_cameras_eyes_nor_opencv():
    """The camera's frames are read in its own process (docs/design.md): the daemon's code
    reaches its wire, never vision/ nor cv2, so its memory is the same with the camera on."""
    daemon = reached(modules("referee/daemon"))
    assert "referee.camera.process" in daemon
    assert sorted(m for m in daemon if m.startswith("referee.vision")) == []
    opencv = [m for m in daemon if (path := ROOT / (m.replace(".", "/") + ".py")).is_file()
              and re.search(r"^\s*(import|from) cv2\b", path.read_text(), re.M)]  # fmt: skip
    assert opencv == []


def modules_of_the_tree() -> list[Path]:
    return [*modules("referee"), *modules("tools")]


def named_in_the_map() -> dict[str, str]:
    """The design's map: each module's path and the process that runs it (a package's
    line names its __init__.py)."""
    section = MAP_SECTION.search((ROOT / "docs/design.md").read_text())
    assert section is not None, 'docs/design.md has no "## Module map" section'
    block = section[1].split("```")[1]
    named, package = {}, None
    for line in block.splitlines():
        if head := re.fullmatch(r"((?:referee|tools)/(?:\w+/)*)\s.*", line):
            package = head[1]
            named[f"{package}__init__.py"] = "package"
        elif module := re.fullmatch(r"  (\w+\.py)\s+(\S+)\s+\S.*", line):
            assert package is not None, line
            named[package + module[1]] = module[2]
        elif line.strip():
            pytest.fail(f"docs/design.md's module map: neither a package nor a module: {line}")
    return named


def test_the_module_map_names_every_module_and_the_process_that_runs_it():
    named = named_in_the_map()
    there = {str(p.relative_to(ROOT)) for p in modules_of_the_tree()}
    assert sorted(there - named.keys()) == [], "not in docs/design.md's module map"
    assert sorted(named.keys() - there) == [], "in docs/design.md's module map, not in the tree"
    for path, processes in named.items():
        if processes != "package":
            assert set(processes.split("+")) <= PROCESSES, f"{path}: {processes}"
