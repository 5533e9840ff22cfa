"""The main loop's wiring, driven in-process with an injected clock: no threads, no sleeps."""

import io
import os
import socket
from dataclasses import replace

import pytest

from referee.app import App, RunOptions, pick_display
from referee.config import default_config
from referee.devices import StartError
from referee.edges import Edge, SourceStatus
from referee.inputs.keyboard import KEYMAP
from referee.rules import Phase
from referee.store import Store
from referee.view import Severity

MS = 1_000_000
S = 1_000 * MS


class Clock:
    def __init__(self) -> None:
        self.now = 1_000 * S

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def make_app(tmp_path):
    apps = []

    def make(**rules) -> tuple[App, Clock]:
        config = default_config()
        config = replace(config, rules=replace(config.rules, **rules))
        clock = Clock()
        read, write = os.pipe()
        options = RunOptions(config, tmp_path / "referee.db", input="keyboard", display="terminal")
        app = App(options, clock=clock, stdin_fd=read, stdout=io.StringIO())
        apps.append((app, read, write))
        return app, clock

    yield make
    for app, read, write in apps:
        app.store.close()
        os.close(read)
        os.close(write)


def tap(app: App, clock: Clock, *buttons: str) -> list[str]:
    texts = []
    for button in buttons:
        app.arbiter.take(Edge(button, clock.now, True))
        app.arbiter.take(Edge(button, clock.now, False))
        clock.now += 50 * MS
        texts += [e.text for e in app.step(clock.now)]
    return texts


def test_a_game_through_the_loop(make_app):
    app, clock = make_app()
    assert tap(app, clock, "P1", "P2", "SUPER", "P2") == [
        "P1 joins the game",
        "P2 joins the game",
        "game on: P1, P2",
        "P2 calls SET",
    ]
    assert app.session.state.phase is Phase.CALL
    tap(app, clock, "VALID")
    assert [p.points for p in app.session.state.players] == [0, 1]
    assert app.view().messages[-1] == "P2 SET! (+1)"


def test_end_in_an_empty_lobby_ends_nothing(make_app):
    app, clock = make_app()
    assert tap(app, clock, "END") == ["ignored: nobody has joined yet: there is no game to end"]
    assert app.session.state.phase is Phase.LOBBY
    assert tap(app, clock, "P1", "END")[-1].startswith("game over")


def test_idle_means_no_wakeup_and_a_timer_means_one(make_app):
    app, clock = make_app()
    tap(app, clock, "P1", "P2", "SUPER")
    clock.now += 1 * S
    app.step(clock.now)
    assert app._timeout(clock.now, app.view()) is None  # idle: sleep until an edge
    tap(app, clock, "P1")
    timeout = app._timeout(clock.now, app.view())
    assert timeout is not None and 0.9 < timeout <= 1.0  # the point-out timer's next second


def test_the_point_out_timer_fires_through_the_loop(make_app):
    app, clock = make_app(pointout_ns=2 * S)
    tap(app, clock, "P1", "P2", "SUPER", "P1")
    clock.now += 3 * S
    assert "P1 too late (no point to pay)" in [e.text for e in app.step(clock.now)]
    assert app.session.state.locked == (1,)


def test_a_bounced_key_is_one_press(make_app):
    app, clock = make_app()
    for i in range(5):
        app.arbiter.take(Edge("P1", clock.now + i * 100_000, i % 2 == 0))
    clock.now += 100 * MS
    assert [e.text for e in app.step(clock.now)] == ["P1 joins the game"]


def test_notices_for_a_stuck_button_a_lost_board_and_storage_trouble(make_app):
    app, clock = make_app()
    app.arbiter.take(Edge("P3", clock.now, True))
    clock.now += 11 * S
    app.step(clock.now)
    app._take(SourceStatus("board", "button board unplugged: waiting for /dev/ttyACM0", ok=False))
    app.session.ledger._reason = "disk full"  # what a failed write leaves: see test_store
    notices = app.notices()
    assert [n.text for n in notices] == [
        "button board unplugged: waiting for /dev/ttyACM0",
        "P3 is held down: ignored until released",
        "storage trouble: disk full: inputs will wait in memory",
    ]
    assert notices[-1].severity is Severity.ERROR
    app._take(SourceStatus("board", "button board connected", ok=True))
    app.arbiter.take(Edge("P3", clock.now, False))
    app.session.ledger._reason = None
    clock.now += 1 * S
    app.step(clock.now)
    assert app.notices() == ()


def test_the_watchdog_is_fed_from_the_loop(make_app, tmp_path, monkeypatch):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify"))
    monkeypatch.setenv("WATCHDOG_USEC", "2000000")
    app, clock = make_app()
    assert app._timeout(clock.now, app.view()) == pytest.approx(1.0)  # half the watchdog time
    clock.now += 1 * S
    app.step(clock.now)
    assert sock.recv(100) == b"WATCHDOG=1"
    sock.close()


def test_a_restart_resumes_the_game_and_its_clock(make_app):
    app, clock = make_app()
    tap(app, clock, "P1", "P2", "SUPER", "P1")
    deadline = app.session.state.pointout_deadline
    app.store.close()
    again, _ = make_app()
    assert again.session.state == app.session.state
    assert again.session.state.pointout_deadline == deadline  # time while off does not count
    # The clock carries on from the last input kept: the press (ticks that fired nothing
    # are not kept).
    assert again.session.game_ns(again.arbiter.horizon) == app.session.state.calls[-1].first_ns


def test_super_after_the_end_starts_a_new_game(make_app, tmp_path):
    app, clock = make_app()
    tap(app, clock, "P1", "P2", "SUPER", "END")
    assert app.session.state.phase is Phase.OVER
    old = app.session.ledger.game_id
    tap(app, clock, "SUPER")
    assert app.session.state.phase is Phase.LOBBY and app.session.ledger.game_id == old + 1
    tap(app, clock, "P4")
    with Store.open_readonly(tmp_path / "referee.db") as store:
        game = store.latest_game()
    assert game is not None and game.id == old + 1 and game.state().players[0].id == 4


def test_keyboard_input_needs_somewhere_to_type(tmp_path):
    options = RunOptions(default_config(), tmp_path / "r.db", input="keyboard", display="none")
    with pytest.raises(StartError, match="needs a window or a terminal"):
        App(options)


def test_display_auto_tries_a_window_where_there_may_be_a_screen(monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert pick_display("auto", {"DISPLAY": ":0"}) == ["window", "none"]
    assert pick_display("auto", {"SDL_VIDEODRIVER": "kmsdrm"}) == ["window", "none"]
    assert pick_display("terminal", {"DISPLAY": ":0"}) == ["terminal"]


class Recorder:
    def __init__(self) -> None:
        self.got: list = []

    def play(self, sound) -> None:
        self.got.append(sound)

    def show(self, modes) -> None:
        self.got.append(dict(modes))

    def close(self) -> None:
        pass


def test_sounds_pips_and_lights_follow_the_game(make_app):
    from referee.outputs import sound
    from referee.outputs.lights import LedMode

    app, clock = make_app(players=3)
    app.speaker = speaker = Recorder()
    app.lights = lights = Recorder()
    tap(app, clock, "P1", "P2", "SUPER", "P3")
    assert speaker.got[-1] == sound.TICK  # P3 did not join: ignored
    tap(app, clock, "P2")
    assert speaker.got[-1] == sound.call_out(2)
    tap(app, clock, "VALID", "SUPER", "P1", "SUPER")  # a super round: P1 joins, the flip
    speaker.got.clear()
    flip = clock.now - 50 * MS
    for seconds_in in (6.5, 7.2, 8.1, 9.05):  # looks at the screen now and then
        clock.now = flip + int(seconds_in * S) + app.timing.settle_ns
        app.step(clock.now)
        app.present(app.view())
    assert speaker.got == [sound.PIP, sound.PIP, sound.PIP]
    app.present(app.view())
    assert lights.got[-1] == {1: LedMode.ON, 2: LedMode.OFF, 3: LedMode.OFF}  # only P1 may call


def test_a_game_played_with_the_windows_keys(tmp_path):
    import pygame

    config = default_config()
    # Keys come faster than anyone presses a buzzer twice, and a keyboard does not bounce.
    config = replace(config, buttons=replace(config.buttons, debounce_ns=1))
    app = App(RunOptions(config, tmp_path / "referee.db", "keyboard", "window"))
    try:
        assert app.display == "window" and app.source.name == "keyboard (window)"
        for char in "12s2":
            code = pygame.key.key_code(char)
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=code, mod=0, unicode=char))
            pygame.event.post(pygame.event.Event(pygame.KEYUP, key=code, mod=0, unicode=char))
            edges = app._wait(1.0)
            button = KEYMAP[char]
            assert [(e.button, e.down) for e in edges] == [(button, True), (button, False)]
            for edge in edges:
                app._take(edge)
            app.step(edges[-1].t_ns + app.timing.settle_ns)  # once its settle window is over
        assert app.session.state.pending is not None
        assert app.session.state.pending.callers == (2,)
        app.present(app.view())
        assert app.window is not None and app.window.frames == 1
    finally:
        app.close()


def test_auto_display_falls_back_when_there_is_no_screen(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "no-such-driver")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    read, write = os.pipe()
    options = RunOptions(default_config(), tmp_path / "referee.db", "keyboard", "auto")
    app = App(options, stdin_fd=read, stdout=io.StringIO())
    try:
        assert app.window is None and app.display == "terminal"
    finally:
        app.close()
        os.close(read)
        os.close(write)


def test_an_explicit_window_without_a_screen_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "no-such-driver")
    options = RunOptions(default_config(), tmp_path / "referee.db", "keyboard", "window")
    with pytest.raises(StartError, match="no screen"):
        App(options)


def test_no_new_game_until_the_ended_one_is_saved(make_app):
    app, clock = make_app()
    tap(app, clock, "P1", "P2")
    conn = app.store._conn  # a real full disk: SQLite may not grow the file any more
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    while not app.session.ledger.pending:  # P3 joins and leaves until the file is full
        tap(app, clock, "P3")
    tap(app, clock, "END")
    assert app.session.state.phase is Phase.OVER and app.session.ledger.pending
    game = app.session.ledger.game_id
    assert tap(app, clock, "SUPER")[-1].startswith("ignored: the ended game is not all saved")
    assert app.session.ledger.game_id == game
    conn.execute("PRAGMA max_page_count = 1000000")  # room again
    tap(app, clock, "SUPER")
    assert app.session.ledger.game_id == game + 1 and app.session.state.phase is Phase.LOBBY
    with Store.open_readonly(app.store.path) as store:
        ended = store.latest_game()
    assert ended is not None and ended.id == game + 1
