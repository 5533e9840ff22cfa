"""The rules engine is pure: nothing under referee/rules/ may reach a clock, a thread or I/O."""

import ast
from pathlib import Path

import referee.rules

FORBIDDEN = {
    "time", "datetime", "threading", "asyncio", "sqlite3", "pygame", "gpiozero", "serial",
    "lgpio", "os", "socket", "subprocess", "random", "logging", "pathlib", "io",
}  # fmt: skip


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
            found.add("__import__")
    return found


def test_rules_package_imports_no_clock_thread_or_io():
    package = Path(referee.rules.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert modules
    offenders = {
        str(path.relative_to(package)): sorted(
            imported_modules(path) & (FORBIDDEN | {"__import__"})
        )
        for path in modules
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_the_check_catches_an_offender(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("from time import monotonic_ns\nimport os.path\n")
    assert imported_modules(sneaky) >= {"time", "os"}
