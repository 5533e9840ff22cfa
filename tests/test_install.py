"""`make install DESTDIR=...`: the files of the box, a venv that runs, and nothing else.

The first install is real (a venv, `pip install` of the project with its dependencies) and
costs a few seconds, so it runs once per session; tests that change something work on
copies of its trees.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# About half a minute of pip in a row, on the one session's venv: started first, so that
# with -n one worker goes through it while the others take the rest (tests/conftest.py).
pytestmark = pytest.mark.first

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "opt/referee"
CONFIG = "etc/referee/referee.toml"
UNITS_DIR = "usr/local/lib/systemd/system"
UNIT = f"{UNITS_DIR}/referee.service"
# What the install script must never run when DESTDIR is set.
SYSTEM_TOOLS = (
    "apt-get",
    "apt-cache",
    "dpkg-query",
    "getent",
    "groupadd",
    "useradd",
    "usermod",
    "systemctl",
)


def copy_source(dest: Path) -> Path:
    """The tracked files as a clone has them (links kept as links), so that the test sees
    what a user's clone gives `make install`, and never writes into this checkout."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source, target = ROOT / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(source.readlink())
        elif source.is_file():  # not one deleted in the working tree
            shutil.copy2(source, target)
    return dest


def stub_tools(bin_dir: Path, log: Path) -> None:
    bin_dir.mkdir()
    for tool in SYSTEM_TOOLS:
        stub = bin_dir / tool
        stub.write_text(f'#!/bin/sh\necho "{tool} $*" >>"{log}"\nexit 1\n')
        stub.chmod(0o755)


def make(source: Path, target: str, stubs: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        **os.environ,
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "REFEREE_PYTHON": sys.executable,
        **env,
    }
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(source), target],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def snapshot(tree: Path) -> dict[str, tuple[str, int]]:
    """Every file and link under tree: its content (or target) and its mtime."""
    found = {}
    for path in sorted(tree.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            found[str(path.relative_to(tree))] = (str(path.readlink()), info.st_mtime_ns)
        elif path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(tree))] = (digest, info.st_mtime_ns)
    return found


def system_paths() -> dict[str, int | None]:
    """The real install's paths on this machine, with mtimes: a DESTDIR run must leave them."""
    paths = [
        "/" + PREFIX,
        "/" + CONFIG,
        f"/{UNITS_DIR}/referee.service",
        f"/{UNITS_DIR}/referee-web.service",
    ]
    return {p: (Path(p).lstat().st_mtime_ns if os.path.lexists(p) else None) for p in paths}


class Installed:
    def __init__(self, base: Path) -> None:
        self.source = copy_source(base / "src")
        self.dest = base / "dest"
        self.log = base / "system-tools.log"
        self.stubs = base / "stubs"
        stub_tools(self.stubs, self.log)
        self.system_before = system_paths()
        self.source_before = snapshot(self.source)
        self.result = self.install(self.source, self.dest)

    def install(self, source: Path, dest: Path) -> subprocess.CompletedProcess[str]:
        return make(source, "install", self.stubs, DESTDIR=str(dest))

    def copy(self, base: Path) -> tuple[Path, Path]:
        """A source tree and an installed tree of one's own, to change."""
        source, dest = base / "src", base / "dest"
        shutil.copytree(self.source, source, symlinks=True)
        shutil.copytree(self.dest, dest, symlinks=True, copy_function=link_site_packages)
        return source, dest


def link_site_packages(src: str, dst: str) -> None:
    """Copying the venv's 60 MB takes seconds; hard links take none. pip replaces files in
    site-packages rather than writing into them, so a copy's changes stay its own."""
    if "/site-packages/" in src:
        os.link(src, dst)
    else:
        shutil.copy2(src, dst)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    done = Installed(tmp_path_factory.mktemp("install"))
    assert done.result.returncode == 0, done.result.stderr
    return done


def test_installs_the_units_the_settings_and_a_venv_that_runs(installed):
    dest = installed.dest
    units = sorted((ROOT / "systemd").glob("*.service"))
    assert [unit.name for unit in units] == ["referee-web.service", "referee.service"]
    for unit in units:
        assert (dest / UNITS_DIR / unit.name).read_bytes() == unit.read_bytes()
    example = installed.source / "referee.example.toml"
    assert (dest / CONFIG).read_bytes() == example.read_bytes()

    run = subprocess.run(
        [dest / PREFIX / "bin/referee", "--help"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert "replay" in run.stdout


def test_the_box_gets_the_package_and_not_the_document_generators(installed):
    # tools/ (`make wiring`, `make screens`) draws the docs on a developer's machine: the
    # box runs none of it, and no module of referee/ may need it.
    site = next((installed.dest / PREFIX / "lib").glob("python3.*/site-packages"))
    assert (site / "referee/daemon/app.py").is_file()
    assert not (site / "tools").exists()
    generators = {"wiring.py", "wiring_svg.py", "enclosure.py", "gallery.py"}
    assert not [p for p in (site / "referee").rglob("*.py") if p.name in generators]


@pytest.mark.parametrize("name", ["referee.service", "referee-web.service"])
def test_the_units_start_what_the_install_puts_in_place(installed, name):
    unit = (installed.dest / UNITS_DIR / name).read_text()
    program, *args = re.search(r"^ExecStart=(.*)$", unit, re.MULTILINE)[1].split()
    assert os.access(installed.dest / program.lstrip("/"), os.X_OK)
    config = args[args.index("--config") + 1]
    assert (installed.dest / config.lstrip("/")).is_file()


def test_the_unit_and_the_script_name_the_same_groups(installed):
    unit = (installed.dest / UNIT).read_text()
    script = (ROOT / "systemd/install.sh").read_text()
    in_unit = re.search(r"^SupplementaryGroups=(.*)$", unit, re.MULTILINE)[1].split()
    in_script = re.search(r'^DEVICE_GROUPS="(.*)"$', script, re.MULTILINE)[1].split()
    assert in_unit == in_script


def test_the_guest_image_reads_the_scripts_whole_package_list():
    """tests/vm/build-image.sh puts install.sh's PACKAGES into the test guest's only apt
    repository, read with sed: it must read the list the shell does, nothing more."""
    script = (ROOT / "systemd/install.sh").read_text()
    value = re.search(r'^PACKAGES="([^"]*)"', script, re.MULTILINE)
    assert value is not None
    build = ROOT / "tests/vm/build-image.sh"
    read = subprocess.run(
        [
            "bash",
            "-c",
            f'eval "$(sed -n "/^install_packages() {{/,/^}}/p" {build})"; install_packages',
        ],
        env={**os.environ, "ROOT": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert read.stdout.split() == re.split(r"[\s|]+", value[1].strip())
    # The console draws without GL: no Mesa, EGL or GBM for the box.
    assert not re.search(r"mesa|libegl|libgles|libgbm|libdrm", value[1])


def _numpy_hold(tmp_path: Path, system_numpy: str | None) -> str:
    """What install.sh's system_numpy_hold says when the system's Python has that numpy
    (its metadata, first on the path: none of its code is needed)."""
    site = tmp_path / "site"
    if system_numpy is not None:
        info = site / f"numpy-{system_numpy}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: numpy\nVersion: {system_numpy}\n"
        )
    script = ROOT / "systemd/install.sh"
    shown = subprocess.run(
        [
            "sh",
            "-c",
            f'eval "$(sed -n "/^system_numpy_hold() {{/,/^}}/p" {script})"; system_numpy_hold',
        ],
        env={**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout.strip()


@pytest.mark.parametrize(("system_numpy", "hold"), [("1.24.2", "numpy<2"), ("2.2.4", "")])
def test_the_venv_keeps_to_the_systems_numpy_1(tmp_path, system_numpy, hold):
    """Raspberry Pi OS Bookworm's picamera2 (its simplejpeg) is built against Debian's
    numpy 1.24: a numpy 2 from PyPI in the venv, first on the path, breaks its import."""
    assert _numpy_hold(tmp_path, system_numpy) == hold


def test_touches_nothing_outside_destdir(installed):
    assert not installed.log.exists(), installed.log.read_text()
    assert system_paths() == installed.system_before
    # pip builds from a copy, so no build/ or referee.egg-info/ lands in the clone.
    assert snapshot(installed.source) == installed.source_before


def test_a_second_run_changes_nothing(installed, tmp_path):
    source, dest = installed.copy(tmp_path)
    before = snapshot(dest)
    again = installed.install(source, dest)
    assert again.returncode == 0, again.stderr
    assert snapshot(dest) == before


def test_an_edited_config_is_never_overwritten(installed, tmp_path):
    source, dest = installed.copy(tmp_path)
    mine = "# my table's settings\n"
    (dest / CONFIG).write_text(mine)
    again = installed.install(source, dest)
    assert again.returncode == 0, again.stderr
    assert (dest / CONFIG).read_text() == mine
    assert "kept your /etc/referee/referee.toml" in again.stdout


def test_changed_code_is_installed_again(installed, tmp_path):
    # What `git pull && sudo make install` relies on: the version number has not moved.
    source, dest = installed.copy(tmp_path)
    cli = source / "referee/cli.py"
    cli.write_text(cli.read_text() + "\n# a change pulled from git\n")
    again = installed.install(source, dest)
    assert again.returncode == 0, again.stderr
    site = next((dest / PREFIX / "lib").glob("python3.*/site-packages"))
    assert (site / "referee/cli.py").read_text() == cli.read_text()


def test_uninstall_keeps_the_settings(installed, tmp_path):
    source, dest = installed.copy(tmp_path)
    gone = make(source, "uninstall", installed.stubs, DESTDIR=str(dest))
    assert gone.returncode == 0, gone.stderr
    assert not (dest / PREFIX).exists()
    assert not list((dest / UNITS_DIR).iterdir())
    assert (dest / CONFIG).read_bytes() == (installed.dest / CONFIG).read_bytes()
    assert not installed.log.exists()


@pytest.mark.parametrize("target", ["install", "uninstall"])
def test_refuses_politely_without_root(installed, tmp_path, target):
    stubs = tmp_path / "bin"
    shutil.copytree(installed.stubs, stubs)
    (stubs / "id").write_text("#!/bin/sh\necho 1000\n")
    (stubs / "id").chmod(0o755)
    refused = make(installed.source, target, stubs, DESTDIR="")
    assert refused.returncode != 0
    assert f"needs root: run 'sudo make {target}'" in refused.stderr
    assert not installed.log.exists()
    assert system_paths() == installed.system_before
