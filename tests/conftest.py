import inspect
import logging
import os
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# A property's examples are judged by what they do, not by how long the machine took: the
# suite runs on two shared cores (CI's too), where hypothesis's 200 ms deadline and its
# too-slow check failed tests whose examples were right (a load of 8 to 15). A test that
# must be fast says so itself, with a benchmark or its own bound.
settings.register_profile(
    "shared-cores", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("shared-cores")


def also_suppressed(*checks: HealthCheck) -> list[HealthCheck]:
    """The profile's suppressed health checks and these, for a test's own `settings`: a
    test's list takes the place of the profile's (hypothesis merges no list), and the
    too-slow check came back for a test that named only its fixture's."""
    return [*settings.default.suppress_health_check, *checks]


# Every test is headless: SDL reads these when a display or the mixer opens.
os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"

ROOT = Path(__file__).resolve().parent.parent
# The project's own replay scenarios, one per rule and fine point (docs/rules.md).
SCENARIOS = ROOT / "tests" / "scenarios"
# A working aid beside the repository, not part of it: tests that use it skip without it.
SHARED_SCENARIOS = ROOT.parent / "shared" / "scenarios"


# The fixtures of the slow real checks, the page in Chromium, a venv built by pip and a
# folder camera's frames (the daemon's camera in its own process, OpenCV and the model
# loaded, a second of CPU or more each): a test that uses one is marked `slow`, and `make
# test` leaves it to `make test-slow` (CI runs both). The daemon's tests whose phones are
# the camera, the real photos read again as other cameras would take them, the rendered
# tables' properties and `referee run` on ALSA's null device are marked so by hand. The
# fast suite keeps the camera's parts one by one.
SLOW_FIXTURES = ("browser", "installed", "frames")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `first` lead the order (the rest keep theirs): with -n, one worker
    starts on them at once and keeps them (pytest_xdist_make_scheduler below); run last,
    their chain would end the suite alone, and split over two workers, its session fixture
    would be made twice."""
    for item in items:
        if any(name in SLOW_FIXTURES for name in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("first") is None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With -n, and no other --dist than xdist's default (load): work stealing, as --dist
    worksteal. Each worker starts on its contiguous share of the tests in their order, and
    one that runs out takes tests from the end of another's queue, never its next ones; so
    the `first` tests stay on the worker that started them. Load deals its first quarter
    out one test at a time in turn, which splits them over the workers. Not pyproject's
    addopts: where pytest runs without xdist (the gpio rig's guest) --dist is unknown."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


@pytest.fixture(scope="session")
def empty_folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cwd", numbered=False)


@pytest.fixture(autouse=True)
def in_an_empty_folder(empty_folders: Path, monkeypatch) -> None:
    """`referee` reads ./referee.toml: every test runs in an empty folder of its own, not
    where a developer keeps one (README.md, "Settings", says to write it in the clone).
    Made by mkdtemp, in a folder of their own: tmp_path_factory.mktemp() lists its whole
    folder to number the next, which beside a thousand others took 2 s of a worker's CPU."""
    monkeypatch.chdir(tempfile.mkdtemp(dir=empty_folders))


@pytest.fixture(autouse=True)
def logging_as_it_was() -> Iterator[None]:
    """A command run in the test's process (`referee web`, `check-buttons`) points the root
    logger at the test's captured stderr: put it back, or a later test's log lines go to a
    closed stream ("--- Logging error ---" in its stderr)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


# The page's tests (docs/web.md): a store with a game under way, the page's server on it,
# a judge signed in with the PIN, and the daemon the page asks. A module gives its own
# `store` where it needs another game (a fixture may ask for the one it overrides).

# What a browser sends with a write from the box's own page.
SAME = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}


@pytest.fixture
def two_seats(tmp_path: Path) -> Path:
    """A store whose game has begun, two players, no point-out limit: a loaded machine's
    camera takes its time, and the tests with one judge calls, not the clock."""
    from referee.rules import Settings
    from referee.store.store import Store

    path = tmp_path / "referee.db"
    with Store.open(path) as opened:
        opened.new_game(Settings(players=2, pointout_ns=0), lobby=False)
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A game under way: P2 has called."""
    from referee.rules import Press, Settings
    from referee.store.store import Store

    path = tmp_path / "referee.db"
    with Store.open(path) as opened:
        game = opened.new_game(Settings(players=4), lobby=False)
        opened.append(game, Press(player=2, t_ns=1_000_000_000))
    return path


@pytest.fixture
def client(store: Path) -> Iterator[object]:
    """The page's server on the store (Starlette's test client)."""
    from starlette.testclient import TestClient

    from referee.store.paths import pin_path
    from referee.store.pin import ensure_pin
    from referee.web.server import create_app

    ensure_pin(pin_path(store))
    with TestClient(create_app(store, pin_path(store))) as client:
        yield client


@pytest.fixture
def judge(client, store: Path):
    """The client, signed in with the box's PIN."""
    from referee.store.paths import pin_path
    from referee.store.pin import read_pin

    assert client.post("/api/login", json={"pin": read_pin(pin_path(store))}, headers=SAME)
    return client


@pytest.fixture
def daemon(store: Path) -> Iterator[object]:
    """`referee run` on the store, its loop in a thread (tests/daemon.py)."""
    from .daemon import Daemon

    running = Daemon(store)
    yield running
    running.stop()


# In a real browser: Debian's Chromium, never one downloaded (docs/web.md).

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def chromium() -> Iterator[tuple[ThreadPoolExecutor, Any]]:
    """Debian's Chromium, driven by Playwright, started once in each pytest process: a
    start costs about 1.2 s of CPU (Playwright's driver and the browser), over a dozen
    tests. Playwright's sync API marks its event loop as running in the thread that started
    it, and no other code there could then asyncio.run() (the daemon's control socket,
    `referee web`): so it lives in a thread of its own, and the tests that use it run in
    that thread (pytest_pyfunc_call below). Without them the tests skip, saying why."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM} (Debian's chromium package): no browser is downloaded")
    thread = ThreadPoolExecutor(1, thread_name_prefix="chromium")

    def launch() -> tuple[Any, Any]:
        playwright = sync_api.sync_playwright().start()
        return playwright, playwright.chromium.launch(executable_path=str(CHROMIUM))

    playwright, browser = thread.submit(launch).result()

    def close() -> None:
        browser.close()
        playwright.stop()

    yield thread, browser
    thread.submit(close).result()
    thread.shutdown()


class Pages:
    """A test's share of the browser: each page in a browser context of its own, as
    Browser.new_page makes it (its own cookies, storage and cache, as in a browser of its
    own), all closed when the test ends."""

    def __init__(self, thread: ThreadPoolExecutor, browser: Any) -> None:
        self.thread = thread
        self._browser = browser
        self._pages: list[Any] = []

    def new_page(self, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        self._pages.append(page)
        return page

    def close(self) -> None:
        for page in self._pages:
            if not page.is_closed():
                page.close()


@pytest.fixture
def browser(chromium) -> Iterator[Pages]:
    thread, running = chromium
    pages = Pages(thread, running)
    yield pages
    thread.submit(pages.close).result()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test that uses the browser runs in the browser's thread (see chromium above)."""
    if "browser" not in pyfuncitem.fixturenames:
        return None
    test = pyfuncitem.obj
    args = {name: pyfuncitem.funcargs[name] for name in inspect.signature(test).parameters}
    pyfuncitem.funcargs["browser"].thread.submit(test, **args).result()
    return True


@pytest.fixture
def frames(tmp_path: Path) -> Path:
    """A folder camera's folder (tests/camera_frames.py shows frames in it)."""
    folder = tmp_path / "frames"
    folder.mkdir()
    return folder
