"""The rules engine is pure: nothing under referee/rules/ may reach a clock, a thread or I/O.

An allow-list, not a list of what is forbidden: a module of the standard library nobody
thought to forbid (ctypes, mmap, select, shutil...) is refused all the same, until it is
added here on purpose."""

import ast
from pathlib import Path

import referee.rules

# What the engine may import, module by module; the standard library's first.
ALLOWED = {
    "collections.abc",
    "dataclasses",
    "enum",
    "functools",  # lru_cache, partial, cached_property
    "itertools",
    "re",  # the script's words
    "sys",  # sys.intern, for the calls' steps: no stream, no exit
    "typing",
    "referee.units",  # numbers, imports nothing
    "referee.faces",  # the cards' values and the SET test, as pure as the rules
}


def imported_modules(path: Path) -> set[str]:
    """Every module the file imports, by its absolute name (relative ones resolved inside
    referee.rules), lazy imports too; `__import__` and importlib's calls as themselves."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = ["referee", "rules"][: 3 - node.level]
                found.add(".".join(filter(None, [*package, node.module])))
            else:
                found.add(node.module or "")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
            found.add("__import__")
    return found


def refused(path: Path) -> list[str]:
    inside = {m for m in imported_modules(path) if m.split(".")[:2] == ["referee", "rules"]}
    return sorted(imported_modules(path) - inside - ALLOWED)


def test_rules_package_imports_only_what_is_allowed():
    package = Path(referee.rules.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert modules
    offenders = {str(path.relative_to(package)): refused(path) for path in modules}
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_the_check_catches_an_offender(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "from time import monotonic_ns\nimport os.path\nimport ctypes\nfrom .. import store\n"
        "def later():\n    import select\n    return __import__('socket')\n"
    )
    assert refused(sneaky) == ["__import__", "ctypes", "os.path", "referee", "select", "time"]
