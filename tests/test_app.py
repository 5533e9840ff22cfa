"""The main loop's wiring, driven in-process with an injected clock: no threads, no sleeps."""

import asyncio
import io
import logging
import os
import re
import socket
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from referee.audio.clips import clip_name
from referee.buttons import KEYMAP
from referee.config import default_config
from referee.control import ask
from referee.daemon.app import NOT_SERVED, App, RunOptions
from referee.daemon.devices import pick_display
from referee.daemon.lobby import CHECK_NS as JOIN_CHECK_NS
from referee.daemon.page_process import PAGE
from referee.errors import StartError
from referee.inbox import SourceStatus
from referee.inputs.edges import Edge
from referee.outputs import captions
from referee.outputs.sound import joined
from referee.outputs.terminal import ALT_SCREEN_OFF
from referee.rules import Phase, RuleSet
from referee.store.paths import pin_path, socket_path
from referee.store.pin import read_pin
from referee.store.store import Store
from referee.view import Severity

from .slow_fsync import writes_held

MS = 1_000_000
WAIT_S = 5.0  # a bound for a thread's answer, never reached when all is well
S = 1_000 * MS


class Clock:
    def __init__(self) -> None:
        self.now = 1_000 * S

    def __call__(self) -> int:
        return self.now


KEY_OF = {button: key for key, button in KEYMAP.items()}


class Table:
    """An App on the terminal keyboard (a pipe) and a clock that moves when told."""

    def __init__(self, app: App, clock: Clock, keys: int) -> None:
        self.app, self.clock, self.keys = app, clock, keys

    def at(self, t_ns: int) -> list[str]:
        """A pass of the loop at t_ns: read the keys, decide what the watermark passed."""
        self.clock.now = t_ns
        for item in self.app.inputs.read():
            self.app._take(item)
        return [o.text for o in self.app.step(t_ns)]

    def tap(self, *buttons: str) -> list[str]:
        """Each button typed 90 ms after the one before; each decided before the next."""
        texts = []
        for button in buttons:
            os.write(self.keys, KEY_OF[button].encode())
            texts += self.at(self.clock.now + 50 * MS)  # read: stamped now
            # Past the tie window (8 ms for a keyboard) and the debounce window (30 ms).
            texts += self.at(self.clock.now + 40 * MS)
        return texts


@pytest.fixture
def make_app(tmp_path):
    made = []

    def make(**rules) -> Table:
        config = default_config()
        config = replace(config, game=replace(config.game, **rules))
        clock = Clock()
        read, write = os.pipe()
        options = RunOptions(config, tmp_path / "referee.db", input="keyboard", display="terminal")
        app = App(options, clock=clock, stdin_fd=read, stdout=io.StringIO())
        made.append((app, read, write))
        return Table(app, clock, write)

    yield make
    for app, read, write in made:
        app.close()
        os.close(read)
        os.close(write)


def test_a_game_through_the_loop(make_app):
    table = make_app()
    assert table.tap("P1", "P2", "SUPER", "P2") == [
        "P1 joins the game",
        "P2 joins the game",
        "game on: P1, P2",
        "P2 calls SET",
    ]
    app = table.app
    assert app.session.state.phase is Phase.CALL
    table.tap("VALID")
    assert [p.points for p in app.session.state.players] == [0, 1]
    assert app.view().messages[-1] == "P2 SET! (+1)"


def test_a_key_typed_during_a_stall_is_stamped_when_read(make_app):
    """The keyboard's promise: what it has not delivered was typed after its watermark."""
    table = make_app(pointout_ns=2 * S)
    table.tap("P1", "P2", "SUPER", "P1")
    os.write(table.keys, b"v")  # typed at +1 s, but the loop only reads at +3 s
    assert table.at(table.clock.now + 3 * S) == [
        "P1 too late (no point to pay)",
        "P1 is locked until another player's SET is judged valid",
        "ignored: no call to judge",
    ]


def test_end_in_an_empty_lobby_ends_nothing(make_app):
    table = make_app()
    assert table.tap("END") == ["ignored: nobody has joined yet: there is no game to end"]
    assert table.app.session.state.phase is Phase.LOBBY
    assert table.tap("P1", "END")[-1].startswith("game over")


def test_idle_means_no_wakeup_and_a_timer_means_one(make_app):
    table = make_app()
    table.tap("P1", "P2", "SUPER")
    app = table.app
    table.at(table.clock.now + 1 * S)
    assert app._timeout(table.clock.now, app.view()) is None  # idle: sleep until a key
    table.tap("P1")
    timeout = app._timeout(table.clock.now, app.view())
    assert timeout is not None and 0.9 < timeout <= 1.0  # the point-out timer's next second


def test_the_loop_waits_awake_only_for_a_press_about_to_be_decided(make_app):
    table = make_app()
    table.tap("P1", "P2", "SUPER")
    app = table.app
    os.write(table.keys, KEY_OF["P2"].encode())
    table.at(table.clock.now + 50 * MS)  # read: stamped now, decided a tie window later
    due = table.clock.now + app.session.settings.tie_ns
    assert not app._press_due(due - 3 * MS)
    assert app._press_due(due - 2 * MS)
    table.at(due)
    assert app.session.state.pending is not None  # P2's call: its point-out timer runs
    assert not app._press_due(table.clock.now)  # a timer is slept for, however close


def test_a_pass_that_draws_nothing_does_not_hold_the_next_second_back(make_app):
    """The frame rate counts from the last frame drawn: a pass that changes nothing on
    the screen (a release, a window poll) 10 ms before the timer's next second must not
    push that second's frame a frame interval late."""
    table = make_app(pointout_ns=20 * S)
    table.tap("P1", "P2", "SUPER", "P1")
    app = table.app
    app.present(app.view())
    to_next_second = app._timeout(table.clock.now, app.view())
    assert to_next_second is not None and to_next_second > 0.1
    table.clock.now += round(to_next_second * S) - 10 * MS
    app.present(app.view())  # the same picture: nothing drawn
    assert app._timeout(table.clock.now, app.view()) == pytest.approx(0.010, abs=1e-6)


class SlowScreen:
    """A screen whose every frame takes 3 ms to draw and flip, on the table's clock."""

    wake_ns = None

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.flipped: list[tuple[int, str | None]] = []  # (at, the point-out timer shown)
        self._last: str | None = None

    def show(self, view) -> bool:
        shown = captions.shown_clocks(view)[0]
        if shown == self._last:
            return False
        self.clock.now += 3 * MS
        self.flipped.append((self.clock.now, shown))
        self._last = shown
        return True

    def close(self) -> None:
        pass


def test_a_timers_second_is_drawn_ahead_so_it_turns_on_screen_on_time(make_app):
    """A frame takes as long to draw as the last one did: begun that much before its
    moment, as of that moment, it is flipped when the timer's second turns."""
    table = make_app(pointout_ns=20 * S)
    app = table.app
    table.tap("P1", "P2", "SUPER", "P1")
    app.screen = screen = SlowScreen(table.clock)
    app.present(app.view())  # the first frame: it took 3 ms
    deadline = app.session.deadline_mono_ns
    assert deadline is not None
    for _ in range(3):
        wait = app._timeout(table.clock.now, app.view())
        assert wait is not None
        table.clock.now += round(wait * S)
        app.present(app.view())
    seconds = [(deadline - at) / S for at, _ in screen.flipped[1:]]
    assert seconds == pytest.approx([int(s) for s in seconds], abs=1e-9)
    assert [shown for _, shown in screen.flipped[1:]] == [str(round(s)) for s in seconds]


class CrawlingScreen(SlowScreen):
    """A screen slower than the timer it shows: every frame takes 1.5 s."""

    def show(self, view) -> bool:
        self.clock.now += 1500 * MS
        self.flipped.append((self.clock.now, captions.shown_clocks(view)[0]))
        return True


def test_a_loop_whose_frames_take_too_long_still_rests_between_them(make_app):
    """Frames slower than the screen's changes (a Pi drawing a large screen) would keep
    the loop drawing without a rest: busy the whole second at SCHED_FIFO, the kernel
    stops it for 50 ms of every second, beeps and decisions with it. After each frame it
    rests a third of what the frame took (DRAW_SHARE), and a press wakes it sooner."""
    table = make_app(pointout_ns=20 * S)
    app = table.app
    table.tap("P1", "P2", "SUPER", "P1")
    app.screen = CrawlingScreen(table.clock)
    for _ in range(3):
        app.present(app.view())
        wait = app._timeout(table.clock.now, app.view())
        assert wait is not None and wait >= 0.5 - 1e-9  # a third of 1.5 s, at least
        table.clock.now += round(wait * S)


def test_a_timer_fires_once_the_watermark_passes_its_deadline(make_app):
    table = make_app(pointout_ns=2 * S)
    table.tap("P1", "P2", "SUPER", "P1")
    app = table.app
    deadline = app.session.deadline_mono_ns
    assert deadline is not None
    # The terminal's watermark is its last empty read: the loop reads it at the deadline.
    assert app.inputs.wake_ns(deadline) == deadline
    assert table.at(deadline - 1) == []
    assert table.at(deadline)[0] == "P1 too late (no point to pay)"
    assert app.session.state.locked == (1,)


def test_a_bounced_key_is_one_press(make_app):
    table = make_app()
    for i in range(5):
        table.app.arbiter.take(Edge("P1", table.clock.now + i * 100_000, i % 2 == 0))
    assert table.at(table.clock.now + 100 * MS) == ["P1 joins the game"]


def test_notices_for_a_stuck_button_a_lost_board_and_storage_trouble(make_app):
    """Each condition of a source is shown on its own, until it is ok again."""
    table = make_app()
    app = table.app
    app.arbiter.take(Edge("P3", table.clock.now, True))
    table.at(table.clock.now + 11 * S)
    app._take(SourceStatus("board", "button board stalled: no T line for 1 s", False, "stall"))
    app._take(SourceStatus("board", "button board unplugged: waiting for /dev/ttyACM0", ok=False))
    assert app.session.ledger.flush()  # P3's join, which the ledger's writer may be writing
    app.session.ledger._reason = "disk full"  # what a failed write leaves: see test_store
    notices = app.notices()
    assert [n.text for n in notices] == [
        "button board stalled: no T line for 1 s",
        "button board unplugged: waiting for /dev/ttyACM0",
        "P3 is held down: ignored until released",
        "storage trouble: disk full: inputs will wait in memory",
    ]
    assert notices[-1].severity is Severity.ERROR
    app._take(SourceStatus("board", "button board connected", ok=True))
    app._take(SourceStatus("board", "button board heard again", True, "stall"))
    app.arbiter.take(Edge("P3", table.clock.now, False))
    app.session.ledger._reason = None
    table.at(table.clock.now + 1 * S)
    assert app.notices() == ()


def test_a_trouble_going_on_updates_its_notice_and_leaves_the_games_message(make_app):
    """A board sending bad lines reports a growing count: the notice follows it, and the
    messages say once that the trouble began, not at every count."""
    table = make_app()
    table.tap("P1", "P2", "SUPER", "P2")
    app = table.app
    message = app.view().messages[-1]
    for count in range(1, 50):
        text = f"button board: {count} lines with impossible times"
        app._take(SourceStatus("board", text, ok=False, condition="times"))
    assert [n.text for n in app.notices()] == ["button board: 49 lines with impossible times"]
    assert app.view().messages[-2:] == (message, "button board: 1 lines with impossible times")


def test_late_inputs_are_counted_and_shown(make_app):
    table = make_app()
    table.tap("P1", "P2", "SUPER", "P2")
    app = table.app
    # A broken promise: P1's press, stamped between the start and P2's call, comes now.
    app.arbiter.take(Edge("P1", table.clock.now - 60 * MS, True))
    texts = table.at(table.clock.now + 50 * MS)
    assert texts[0] == "press 1 came 60.0 ms late: decided again in its place"
    assert app.session.state.pending is not None and app.session.state.pending.callers == (1,)
    assert [n.text for n in app.notices()] == ["1 input came late: see the log"]


def test_the_watchdog_is_fed_from_the_loop(make_app, tmp_path, monkeypatch):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify"))
    monkeypatch.setenv("WATCHDOG_USEC", "2000000")
    table = make_app()
    app = table.app
    assert app._timeout(table.clock.now, app.view()) == pytest.approx(1.0)  # half the watchdog
    table.at(table.clock.now + 1 * S)
    assert sock.recv(100) == b"WATCHDOG=1"
    sock.close()


def test_a_restart_resumes_the_game_and_its_clock(make_app):
    table = make_app()
    table.tap("P1", "P2", "SUPER", "P1")
    app = table.app
    deadline = app.session.state.pointout_deadline
    app.close()
    again = make_app().app
    assert again.session.state == app.session.state
    assert again.session.state.pointout_deadline == deadline  # time while off does not count
    assert again.view().messages == ("resumed: timers restarted at 10 s",)
    # The clock carries on from the last input kept: the press (ticks that fired nothing
    # are not kept).
    assert again.session.last_ns == app.session.state.calls[-1].first_ns


def test_a_press_is_heard_and_shown_while_the_disk_holds_its_write(make_app):
    table = make_app()
    app = table.app
    played = []
    play = app.speaker.play
    app.speaker.play = lambda sound: (played.append(sound), play(sound))  # type: ignore[method-assign]
    with writes_held(app.store.path):
        assert table.tap("P1") == ["P1 joins the game"]
        assert played == [joined(1)]
        assert [p.id for p in app.view().state.players] == [1]
        ledger = app.session.ledger
        assert (ledger.pending, ledger.trouble) == (1, None)  # on its way to the disk
    assert ledger.flush()  # after the writer's own write
    with Store.open_readonly(app.store.path) as store:
        game = store.latest_game()
    assert game is not None and len(game.inputs) == 1


def test_super_after_the_end_starts_a_new_game(make_app, tmp_path):
    table = make_app()
    table.tap("P1", "P2", "SUPER", "END")
    app = table.app
    assert app.session.state.phase is Phase.OVER
    old = app.session.ledger.game_id
    table.tap("SUPER")
    assert app.session.state.phase is Phase.LOBBY and app.session.ledger.game_id == old + 1
    table.tap("P4")
    assert app.session.ledger.flush()  # what the ledger's writer may still be writing
    with Store.open_readonly(tmp_path / "referee.db") as store:
        game = store.latest_game()
    assert game is not None and game.id == old + 1 and game.state().players[0].id == 4


def test_keyboard_input_needs_somewhere_to_type(tmp_path):
    options = RunOptions(default_config(), tmp_path / "r.db", input="keyboard", display="none")
    with pytest.raises(StartError, match="needs a window, the console or a terminal"):
        App(options)


def test_keyboard_input_from_a_file_is_refused_in_one_line(tmp_path):
    """`referee run --input keyboard </dev/null`: no keys will ever come from there."""
    options = RunOptions(default_config(), tmp_path / "r.db", input="keyboard", display="terminal")
    with Path(os.devnull).open() as null, pytest.raises(StartError) as raised:
        App(options, stdin_fd=null.fileno(), stdout=io.StringIO())
    assert str(raised.value) == (
        "--input keyboard reads keys from a terminal: standard input is not a terminal"
    )


def test_display_auto_tries_a_window_on_a_desktop_else_the_consoles_screen(monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    card = ["/dev/dri/card0"]
    assert pick_display("auto", {"DISPLAY": ":0"}, card) == ["window", "none"]
    assert pick_display("auto", {"WAYLAND_DISPLAY": "wayland-0"}, []) == ["window", "none"]
    assert pick_display("auto", {}, card) == ["kms", "none"]
    assert pick_display("auto", {}, []) == ["none"]
    assert pick_display("terminal", {"DISPLAY": ":0"}, card) == ["terminal"]


class Recorder:
    def __init__(self) -> None:
        self.got: list = []
        self.plans: list = []

    def play(self, sound) -> None:
        self.got.append(sound)

    def plan(self, plan) -> None:
        self.plans.append(plan)

    def show(self, modes) -> None:
        self.got.append(dict(modes))

    def close(self) -> None:
        pass


def test_sounds_the_countdowns_plan_and_lights_follow_the_game(make_app):
    from referee.outputs import sound
    from referee.outputs.lights import LedMode

    table = make_app(players=3)
    app = table.app
    app.speaker = speaker = Recorder()
    app.lights = lights = Recorder()
    table.tap("P1", "P2", "SUPER", "P3")
    assert speaker.got[-1] == sound.TICK  # P3 did not join: ignored
    table.tap("P2")
    assert speaker.got[-1] == sound.call_out(2)
    table.tap("VALID", "SUPER", "P1", "SUPER")  # a super round: P1 joins, the flip
    app.present(app.view())
    flip = table.clock.now - 40 * MS  # when `s` was read
    pips = tuple((flip + k * S, sound.PIP) for k in (7, 8, 9))
    assert speaker.plans[-1] == (*pips, (flip + 10 * S, sound.TIME_UP))
    plans = len(speaker.plans)
    for seconds_in in (6.5, 7.2, 8.1, 9.05):  # the screen now and then: the plan stands
        table.at(flip + int(seconds_in * S))
        app.present(app.view())
    assert len(speaker.plans) == plans
    assert lights.got[-1] == {1: LedMode.ON, 2: LedMode.OFF, 3: LedMode.OFF}  # only P1 may call
    table.tap("P1")  # a call pauses the countdown: nothing more is planned
    app.present(app.view())
    assert speaker.plans[-1] == ()


def test_a_game_played_with_the_windows_keys(tmp_path):
    import pygame

    config = default_config()
    # Keys come faster than anyone presses a buzzer twice, and a keyboard does not bounce.
    config = replace(config, buttons=replace(config.buttons, debounce_ns=1))
    app = App(RunOptions(config, tmp_path / "referee.db", "keyboard", "window"))
    try:
        assert app.display == "window" and app.inputs.name == "keyboard (window)"
        for char in "12s2":
            code = pygame.key.key_code(char)
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=code, mod=0, unicode=char))
            pygame.event.post(pygame.event.Event(pygame.KEYUP, key=code, mod=0, unicode=char))
            edges = app.inputs.read()
            button = KEYMAP[char]
            assert [(e.button, e.down) for e in edges] == [(button, True), (button, False)]
            for edge in edges:
                app._take(edge)
            # Decided once the window has been read again past the key and its tie window.
            tie_over = edges[-1].t_ns + app.session.settings.tie_ns
            while app.inputs.watermark_ns < tie_over:
                app.inputs.wait(max(0, tie_over - app.clock()) / 1e9)
            app.step(app.clock())
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


def test_a_press_is_shown_in_the_window_and_on_the_terminal_alike(tmp_path, caplog):
    """`--display window+terminal`: one loop, one screen to it, every view on both; the
    keys are the window's."""
    import pygame

    from referee.outputs.canvas import Canvas
    from referee.outputs.screens import draw_screen

    clock = Clock()
    terminal = io.StringIO()
    options = RunOptions(default_config(), tmp_path / "referee.db", "keyboard", "terminal+window")
    app = App(options, clock=clock, stdout=terminal)
    try:
        assert app.display == "window+terminal" and app.shown_as == "window (dummy) + terminal"
        assert app.inputs.name == "keyboard (window)"
        app.present(app.view())  # the lobby
        assert app.window is not None and app.window.frames == 1
        for char in "12s2":  # two join, SUPER starts the game, P2 calls
            code = pygame.key.key_code(char)
            for kind in (pygame.KEYDOWN, pygame.KEYUP):
                pygame.event.post(pygame.event.Event(kind, key=code, mod=0, unicode=char))
                clock.now += 50 * MS  # each key taken 50 ms after the one before
                for item in app.inputs.read():
                    app._take(item)
            clock.now += S  # read again past the tie window: decided
            app.inputs.read()
            app.step(clock.now)
        assert app.session.state.pending is not None
        assert app.session.state.pending.callers == (2,)
        drawn = len(terminal.getvalue())
        view = app.view()
        app.present(view)
        # The window shows the picture of this view, the caller's mark in it...
        assert app.window.frames == 2
        surface = pygame.display.get_surface()
        assert surface is not None
        expected = Canvas(pygame.Surface(surface.get_size(), 0, surface))
        draw_screen(expected, view)
        assert "P2 ▲" in [d.text for d in expected.drawn if d.watched]
        shown = pygame.image.tobytes(surface, "RGB")
        assert shown == pygame.image.tobytes(expected.surface, "RGB")
        # ...and the terminal the same view, drawn anew.
        frame = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue()[drawn:])
        assert "P2 ▲   0 [CALLING]" in frame and "P2: SHOW YOUR SET" in frame, frame
        assert not app.screen.show(view)  # type: ignore[union-attr]  # nothing new on either
        key = pygame.key.key_code("q")
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode="q"))
        with caplog.at_level(logging.INFO, logger="referee"):
            assert app.run() == 0
        assert "input keyboard (window), display window (dummy) + terminal" in caplog.text
    finally:
        app.close()
    assert not pygame.display.get_init()  # both closed: the window...
    assert terminal.getvalue().endswith(ALT_SCREEN_OFF)  # ...and the terminal given back


def test_an_explicit_window_without_a_screen_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "no-such-driver")
    options = RunOptions(default_config(), tmp_path / "referee.db", "keyboard", "window")
    with pytest.raises(StartError, match="no screen"):
        App(options)


def test_no_new_game_until_the_ended_one_is_saved(make_app):
    table = make_app()
    app = table.app
    table.tap("P1", "P2")
    conn = app.store._conn  # a real full disk: SQLite may not grow the file any more
    assert app.session.ledger.flush()  # the ledger's writer done with the store
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    while app.session.ledger.flush():  # P3 joins and leaves until the file is full
        table.tap("P3")
    table.tap("END")
    assert app.session.state.phase is Phase.OVER and app.session.ledger.pending
    game = app.session.ledger.game_id
    assert table.tap("SUPER")[-1].startswith("ignored: the ended game is not all saved")
    assert app.session.ledger.game_id == game
    conn.execute("PRAGMA max_page_count = 1000000")  # room again
    table.tap("SUPER")
    assert app.session.ledger.game_id == game + 1 and app.session.state.phase is Phase.LOBBY
    with Store.open_readonly(app.store.path) as store:
        ended = store.latest_game()
    assert ended is not None and ended.id == game + 1


# --- the store file deleted or moved under the running loop -----------------------------


def players_in(path: Path) -> list[int]:
    with Store.open_readonly(path) as store:
        return [p.id for p in store.latest_game().state().players]


@pytest.mark.parametrize("how", ["deleted", "moved away"])
def test_a_store_gone_under_the_loop_is_written_anew_at_once(make_app, tmp_path, how):
    """The folder's change wakes the loop: its next pass writes the store anew, and says so
    on the screen (and in the log); no input is lost, none is waiting."""
    table = make_app()
    table.tap("P1")
    assert table.app.session.ledger.flush()  # the join on the disk, as its writer leaves it
    path = tmp_path / "referee.db"
    if how == "deleted":
        path.unlink()
    else:
        path.rename(tmp_path / "old.db")
    table.at(table.clock.now + 1)
    said = "store file deleted" if how == "deleted" else "store file moved away or replaced"
    assert table.app.view().messages[-1] == f"{said}: written anew"
    assert table.app.notices() == ()
    table.tap("P2")
    assert table.app.session.ledger.flush()
    assert players_in(path) == [1, 2]
    if how == "moved away":  # the file moved has all it had, and nothing since
        assert players_in(tmp_path / "old.db") == [1]


def test_a_store_deleted_as_the_box_stops_is_written_anew(make_app, tmp_path):
    table = make_app()
    table.tap("P1")
    (tmp_path / "referee.db").unlink()
    table.app.close()  # before any pass of the loop looked
    assert table.app.unsaved is None
    assert players_in(tmp_path / "referee.db") == [1]


def test_a_store_that_cannot_be_written_anew_keeps_the_game_for_a_rescue_file(make_app, tmp_path):
    from referee.cli import _put_back_waiting

    table = make_app()
    table.tap("P1")
    assert table.app.session.ledger.flush()  # the join on the disk, as its writer leaves it
    path = tmp_path / "referee.db"
    (tmp_path / "notes.txt").write_text("not a store\n")
    (tmp_path / "notes.txt").replace(path)  # someone's file, where the store was
    table.at(table.clock.now + 1)
    app = table.app
    assert app.view().messages[-1] == "store file deleted: inputs wait in memory"
    why = "store file deleted, not written anew: not an SQLite database, so not a referee store"
    assert [n.text for n in app.notices()] == [
        f"storage trouble: {why}: inputs will wait in memory"
    ]
    table.tap("P2")  # play goes on
    assert app.notices()[-1].text == f"storage trouble: {why}, 1 input not yet saved"
    app.close()
    kept = next(tmp_path.glob("referee-unsaved-game1-*.txt"))
    assert str(app.unsaved) == (
        f"referee: 1 input could not be saved to {path} ({why}); they are in {kept}:"
        f" `referee recover {kept}` puts them back"
    )
    assert path.read_text() == "not a store\n"  # left as it is
    path.unlink()
    _put_back_waiting(path)  # the next start
    assert players_in(path) == [1, 2]


class Page:
    """The page's server asking the daemon over its control socket, from a thread of its
    own as `referee web` would from its process."""

    def __init__(self, app: App, request: dict) -> None:
        self.answer: dict | None = None
        self._thread = threading.Thread(target=self._ask, args=(app, request), daemon=True)
        self._thread.start()

    def _ask(self, app: App, request: dict) -> None:
        self.answer = asyncio.run(ask(socket_path(app.store.path), request, WAIT_S))

    def answered(self) -> dict | None:
        self._thread.join(WAIT_S)
        return self.answer


def named(app: App, seat: int, name: str) -> Page:
    """Ask for the name, and let the loop take the request from its one wait."""
    page = Page(app, {"op": "name", "seat": seat, "name": name})
    for item in app.inputs.wait(WAIT_S):
        app._take(item)
    return page


def names_kept(app: App) -> dict[int, str]:
    with Store.open_readonly(app.store.path) as store:
        return store.seat_names(app.session.ledger.game_id)


def test_a_name_from_the_page_is_shown_first_then_kept(make_app):
    table = make_app(players=4)
    app = table.app
    page = named(app, 2, " Ann ")
    assert app.view().names == ((2, "Ann"),)
    assert app.view().messages[-1] == "seat 2 is Ann"
    assert names_kept(app) == {}  # not shown yet: not the ledger's
    assert page.answer is None
    app.present(app.view())
    app.requests.keep_changes()
    assert page.answered() == {"ok": True}  # once on the disk
    assert names_kept(app) == {2: "Ann"}
    shown = app.screen._stream.getvalue()  # type: ignore[union-attr]
    assert "seat 2 is Ann" in shown and "Ann is Ann" not in shown


@pytest.mark.parametrize(
    ("seat", "name", "said"),
    [
        (6, "Cy", "seat 6 is not at this table (seats 1 to 4)"),
        (3, "ANN", "Ann already sits at seat 2"),
    ],
)
def test_a_name_the_table_cannot_take_is_refused_and_nothing_shown(make_app, seat, name, said):
    app = make_app(players=4).app
    named(app, 2, "Ann")
    app.requests.keep_changes()
    page = named(app, seat, name)
    assert page.answered() == {"error": said}
    assert app.view().names == ((2, "Ann"),)


def test_names_stay_through_a_restart_and_into_the_next_game(make_app):
    table = make_app(players=4)
    ann = named(table.app, 1, "Ann")
    table.app.requests.keep_changes()
    assert ann.answered() == {"ok": True}  # on the disk: the page is told once it is kept
    assert named(table.app, 2, "Bob")  # taken and shown, never kept: the box stops first
    table.app.close()
    again = make_app(players=4)
    assert again.app.session.names == {1: "Ann"}
    again.tap("P1", "P2", "SUPER", "END", "SUPER")
    assert again.app.session.state.phase is Phase.LOBBY
    assert again.app.session.ledger.game_id == 2 and names_kept(again.app) == {1: "Ann"}


def asked(app: App, request: dict) -> Page:
    """Ask the daemon, and let the loop take the request from its one wait."""
    page = Page(app, request)
    for item in app.inputs.wait(WAIT_S):
        app._take(item)
    return page


def test_rules_from_the_page_are_checked_shown_then_kept_and_a_lobby_takes_them(make_app):
    app = make_app(players=4).app
    page = asked(app, {"op": "rules", "values": {"tie_ms": -1}})
    assert page.answered() == {
        "error": "[rules] tie_ms: must be milliseconds, 0 to 86400000 (a day); got -1"
    }
    page = asked(app, {"op": "rules", "values": {"players": 3, "super_s": 7}})
    assert app.session.settings.players == 3  # the game in the lobby: at once
    assert app.view().messages[-1] == "a phone set this game's rules: players 3, super_s 7.0"
    with Store.open_readonly(app.store.path) as store:
        assert store.next_rules() == {}  # not shown yet: not the ledger's
    app.present(app.view())
    app.requests.keep_changes()
    assert page.answered() == {"ok": True}
    with Store.open_readonly(app.store.path) as store:
        assert store.next_rules() == {"players": 3, "super_s": 7.0}
        assert store.latest_game().settings.players == 3


def test_rules_a_phone_set_that_the_file_no_longer_takes_are_set_aside_and_said(make_app):
    first = make_app(players=4)
    asked(first.app, {"op": "rules", "values": {"rules": "solo"}})
    first.app.present(first.app.view())
    first.app.requests.keep_changes()
    first.app.close()
    again = make_app(players=3)  # the file now says three seats: solo cannot go with them
    assert again.app.session.settings.players == 3
    notices = [n.text for n in again.app.notices()]
    assert notices == [
        'the rules a phone set are not used: [rules] rules: rules=solo needs players=1; got "solo"'
    ]


OVER_FILE = (
    "a phone's rules over the settings file's: rules official (the file: solo), players 4"
    " (the file: 1)"
)


def test_a_phones_rules_over_the_files_are_said_at_the_start_and_in_the_lobby(
    make_app, tmp_path, caplog
):
    with Store.open(tmp_path / "referee.db") as store:
        store.set_next_rules({"rules": "official"})  # chosen on a phone, the box stopped
    caplog.set_level(logging.INFO, logger="referee.daemon.requests")
    table = make_app(rules=RuleSet.SOLO, players=1)  # the file: solo, one player
    app = table.app
    assert app.session.settings.rules is RuleSet.OFFICIAL and app.session.settings.players == 4
    assert f"{OVER_FILE} (`referee config --reset-page` sets them back)" in caplog.messages
    shown = "set on a phone, over the file: rules official, players 4"
    assert [(n.text, n.severity) for n in app.notices()] == [(shown, Severity.INFO)]
    app.present(app.view())
    assert shown in app.screen._stream.getvalue()  # type: ignore[union-attr]
    table.tap("P1", "P2", "SUPER")
    assert app.session.state.phase is Phase.OPEN and app.notices() == ()  # the lobby's only


def test_the_settings_files_rules_again_forget_what_phones_set(make_app, tmp_path):
    with Store.open(tmp_path / "referee.db") as store:
        store.set_next_rules({"rules": "official"})
    app = make_app(rules=RuleSet.SOLO, players=1).app
    page = asked(app, {"op": "filerules"})
    settings = app.session.settings  # the lobby takes them at once
    assert (settings.rules, settings.players) == (RuleSet.SOLO, 1)
    said = app.view().messages[-1]
    assert said == (
        "this game's rules are the settings file's: what phones set is forgotten"
        " (rules solo, players 1)"
    )
    assert app.notices() == ()
    app.present(app.view())
    app.requests.keep_changes()
    assert page.answered() == {"ok": True}
    with Store.open_readonly(app.store.path) as store:
        assert store.next_rules() == {}
        assert store.latest_game().settings.rules is RuleSet.SOLO


def test_set_aside_rules_are_forgotten_from_the_store_too(make_app):
    first = make_app(players=4)
    asked(first.app, {"op": "rules", "values": {"rules": "solo"}})
    first.app.present(first.app.view())
    first.app.requests.keep_changes()
    first.app.close()
    again = make_app(players=3)  # the phone's solo is set aside, not deleted
    assert again.app.notices()
    page = asked(again.app, {"op": "filerules"})
    again.app.present(again.app.view())
    again.app.requests.keep_changes()
    assert page.answered() == {"ok": True} and again.app.notices() == ()
    with Store.open_readonly(again.app.store.path) as store:
        assert store.next_rules() == {}


def test_the_lobby_shows_the_page_and_the_pin_and_looks_again_when_due(make_app):
    table = make_app()
    app = table.app
    assert app.view().join is None  # no page served: no QR code, no PIN
    app.page_at("10.0.0.5:8080")
    join = app.view().join
    assert join is not None and (join.url, join.unreachable) == ("http://10.0.0.5:8080/", "")
    assert join.pin == read_pin(pin_path(app.store.path))
    timeout = app._timeout(table.clock.now, app.view())
    assert timeout is not None and timeout == pytest.approx(JOIN_CHECK_NS / 1e9)
    table.tap("P1", "P2", "SUPER")
    assert app.view().join is None  # the game is on: the lobby's sign is gone
    assert app._timeout(table.clock.now, app.view()) is None  # and nothing to wake for


def test_the_lobby_offers_no_dead_pages_address(make_app):
    app = make_app().app
    app.page_at("10.0.0.5:8080")
    died = "the page's process 41 ended (killed by SIGKILL): started again in 1 s"
    app._take(SourceStatus(PAGE, died, ok=False))  # from the page's watching thread
    join = app.view().join
    assert join is not None and (join.url, join.unreachable) == (None, NOT_SERVED)
    assert join.pin == read_pin(pin_path(app.store.path))
    assert [n.text for n in app.notices()] == [died]
    app._take(SourceStatus(PAGE, "the page on the phones: http://10.0.0.5:8080/", ok=True))
    join = app.view().join
    assert join is not None and (join.url, join.unreachable) == ("http://10.0.0.5:8080/", "")
    assert app.notices() == ()


class Snaps:
    """The camera's process as the loop asks it for each call's snapshot (process.snap)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def snap(self, name: str, t_ns: int) -> None:
        self.asked.append((name, t_ns))

    def close(self) -> None:
        pass


def test_a_call_opened_and_judged_in_one_batch_has_its_snapshot(make_app, tmp_path):
    """The snapshot was asked for when the loop saw a call open after a batch of inputs:
    a call judged in the same batch (a loop kept from its inputs a moment) had none."""
    table = make_app()
    snaps = Snaps()
    table.app.watching._process = snaps  # type: ignore[assignment]
    table.app.watching._snapshots_kept = (tmp_path / "clips", 10**9)
    table.tap("P1", "P2", "SUPER")
    os.write(table.keys, KEY_OF["P2"].encode())
    table.at(table.clock.now + 50 * MS)  # read, not decided: within its tie window
    pressed = table.clock.now
    os.write(table.keys, KEY_OF["VALID"].encode())
    table.at(table.clock.now + 5 * MS)
    assert table.at(table.clock.now + 100 * MS) == ["P2 calls SET", "P2 SET! (+1)"]
    session = table.app.session
    call = session.state.calls[-1]
    assert snaps.asked == [(clip_name(session.ledger.game_id, call.first_ns), pressed)]
    assert session.mono_ns(call.first_ns) == pressed
