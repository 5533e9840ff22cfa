"""The screens: every gallery screen at every size, the clocks' ticks, and the Window."""

from dataclasses import replace
from itertools import combinations

import numpy as np
import pygame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.config import NextRules
from referee.errors import ScreenUnavailable
from referee.inbox import Inbox, Quit
from referee.inputs.edges import Edge
from referee.inputs.keyboard import WindowKeys
from referee.outputs import captions, qr
from referee.outputs.canvas import Canvas, Drawn, font
from referee.outputs.captions import increment, shown_clocks
from referee.outputs.captions import next_change_ns as next_frame_ns
from referee.outputs.display import Window, frame_key, render
from referee.outputs.screens import draw_screen
from referee.outputs.style import ATTENTION
from referee.rules import NS_PER_S, Press, RuleSet, Settings, Super, Verdict, new_game, step
from referee.seats import SYMBOLS
from referee.view import Notice, Severity, View
from tools import gallery

# The smallest, TVs, and portrait and square panels: Touch Display 2 (720x1280), 480x800
# DSI panels, a round 480x480 one.
SIZES = [
    (480, 320), (800, 480), (1280, 720), (1920, 1080),
    (720, 1280), (480, 800), (480, 640), (480, 480), (600, 1024),
]  # fmt: skip
VIEWS = gallery.views()
# Sizes in pixels are the font's size (Drawn.size, its em), not the height of the
# letters. On the 3.5" screen (480x320, 0.154 mm a pixel), read 1.5 m away:
LEGIBLE_PX = 20  # every text, 3 mm
WATCHED_PX = 48  # what the table watches (caller, timers, countdown, scores), 7.4 mm
# What each screen must show watched, at least: the screens mark their watched texts
# (Drawn.watched), and this keeps a screen from passing by marking none.
WATCHED = {
    "scoreboard": 4,
    "official": 4,
    "notices": 4,
    "eight-players": 8,
    "eight-players-over": 8,
    "call": 2,  # the caller, and the point-out timer
    "tie": 2,
    "official-tie": 2,
    "super-call": 2,
    "call-eight-presses": 2,
    "countdown-7s": 1,
    "countdown-2.4s": 1,
    "countdown-flipped": 1,
    "ranking": 4,
    "official-match-over": 4,
    "solo": 2,  # what a SET scores now, and the score
    "solo-over": 1,
    "solo-call": 2,  # the caller, and the point-out timer
    "solitaire": 1,
    "solitaire-won": 1,
    "solitaire-lost": 1,
}


def drawn(view: View, size: tuple[int, int]) -> Canvas:
    canvas = Canvas(pygame.Surface(size))
    draw_screen(canvas, view)
    return canvas


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", list(VIEWS))
def test_every_screen_fits_its_texts(name, size):
    fits_its_texts(VIEWS[name], size)


def fits_its_texts(view: View, size: tuple[int, int] = (480, 320)) -> None:
    canvas = drawn(view, size)
    screen = canvas.surface.get_rect()
    assert canvas.drawn, "nothing drawn"
    for d in canvas.drawn:
        assert screen.contains(d.box), f"{d.text!r} leaves the screen: {d.box}"
        assert not d.cut, f"{d.text!r} does not fit its box"
        least = WATCHED_PX if d.watched else LEGIBLE_PX
        assert d.size >= least, f"{d.text!r} is {d.size} px, not {least}"
    for a, b in combinations(canvas.drawn, 2):
        assert not a.box.colliderect(b.box), f"{a.text!r} {a.box} overlaps {b.text!r} {b.box}"


@settings(max_examples=100)
@given(
    st.sampled_from(sorted(VIEWS)), st.integers(480, 1600), st.integers(320, 1600)
)  # fmt: skip
def test_every_screen_fits_its_texts_at_any_size_from_the_smallest(name, width, height):
    """Any screen at least 480 wide and 320 high is laid out, not only the gallery's."""
    test_every_screen_fits_its_texts(name, (width, height))


def watched(view: View, size: tuple[int, int] = (480, 320)) -> list[Drawn]:
    return [d for d in drawn(view, size).drawn if d.watched]


@pytest.mark.parametrize("name", list(VIEWS))
def test_what_the_table_watches_is_marked_watched(name):
    """At least as many watched texts as the screen has callers, timers and scores, so
    the size check above applies to them; the gallery's 3.5" pictures are measured."""
    assert len(watched(VIEWS[name])) >= WATCHED.get(name, 0)


def test_the_watched_texts_are_the_caller_the_timer_and_the_scores():
    assert {d.text for d in watched(VIEWS["call"])} == {"Bob ▲", "8 s"}
    assert {d.text for d in watched(VIEWS["countdown-2.4s"])} == {"2.4"}
    assert sorted(d.text for d in watched(VIEWS["scoreboard"])) == ["0", "0", "1", "2"]


def texts(view: View, size: tuple[int, int] = (1280, 720)) -> list[str]:
    return [d.text for d in drawn(view, size).drawn]


def test_the_call_shows_the_photo_finish_and_its_margin():
    shown = texts(VIEWS["call"])
    assert "Bob by 4.2 ms over Alexandrina" in shown
    assert {"first", "+4.2 ms", "+37.0 ms", "8 s", "Bob ▲", "Alex… ◆", "Ann ●"} <= set(shown)
    unnamed = texts(replace(VIEWS["call"], names=()))
    assert {"P2 by 4.2 ms over P4", "P2 ▲", "P4 ◆", "P1 ●"} <= set(unnamed)


@pytest.mark.parametrize("size", [(480, 320), (1280, 720), (720, 1280)])
def test_a_name_too_long_for_its_mark_is_shortened_or_the_seat_number_shown(size):
    for name in ("call", "eight-players", "super-join", "scoreboard"):
        marks = [t for t in texts(VIEWS[name], size) if t[-1] in SYMBOLS]
        for mark in marks:
            said, symbol = mark[:-2], mark[-1]
            seat = SYMBOLS.index(symbol) + 1
            full = dict(VIEWS[name].names)[seat]
            assert said in (full, f"P{seat}") or (
                said.endswith("…") and full.startswith(said[:-1]) and len(said) >= 4
            )


def test_a_tie_is_too_close_to_call():
    shown = texts(VIEWS["tie"])
    assert "Bob, Alexandrina: too close to call" in shown
    assert "SET ✓" in shown  # P2 was judged; P4 shows next
    assert "co-caller 2 of 2" in shown


def test_the_countdown_turns_to_tenths_and_reminds_of_the_flipped_card():
    assert "7" in texts(VIEWS["countdown-7s"])
    assert "2.4" in texts(VIEWS["countdown-2.4s"])
    assert "the SET must use the flipped card" in texts(VIEWS["countdown-flipped"])
    assert "the SET must use the flipped card" not in texts(VIEWS["countdown-7s"])


def test_an_ignored_input_says_why():
    shown = texts(VIEWS["scoreboard"])
    assert "ignored: Cy is locked: no point to give, until another player's SET is valid" in shown
    assert "LOCKED" in shown


@pytest.mark.parametrize("size", [(480, 320), (1280, 720), (720, 1280)])
def test_eight_players_at_the_end_are_shown_in_order_of_place_every_points_large(size):
    """In rows where rows can be tall enough for the points, else as tiles (a 3.5"
    screen): in order of place either way, equal points sharing one."""
    view = VIEWS["eight-players-over"]
    assert [d.text for d in watched(view, size)] == [str(r.points) for r in view.state.ranking]
    shown = texts(view, size)
    if size == (480, 320):
        assert "bank 20  ·  SUPER starts a new game" in shown
    else:
        assert [t for t in shown if t.endswith(("st", "nd", "th"))] == [
            "1st", "=2nd", "=2nd", "=4th", "=4th", "=4th", "=7th", "=7th"
        ]  # fmt: skip


def test_the_ranking_shares_places():
    assert texts(VIEWS["ranking"]).count("=1st") == 2


@pytest.mark.parametrize("size", [(480, 320), (1280, 720)])
def test_game_over_says_how_to_start_again(size):
    assert "bank 10  ·  SUPER starts a new game" in texts(VIEWS["ranking"], size)


@pytest.mark.parametrize("size", [(480, 320), (1280, 720)])
def test_the_keys_are_shown_when_the_keyboard_is_the_buttons(size):
    legend = (
        "keys: 1-8 buzzers · v valid · x invalid · s super · u undo · e end · r replay · q quit"
    )
    shown = [" ".join(t.split()) for t in texts(VIEWS["lobby"], size)]  # spaced out or tight
    assert legend in shown  # its source is the keyboard
    assert not any(t.startswith("keys:") for t in texts(VIEWS["scoreboard"], size))  # GPIO


def test_an_official_match_shows_its_deal_and_who_sits_out():
    shown = texts(VIEWS["official"])
    assert "deal 2 of 4 · dealer P2 (sits out)" in shown and "SITS OUT" in shown
    assert "P1, P4: the SETs share cards, nobody scores" in shown
    assert not any(text.startswith("bank") for text in shown)


def test_a_match_over_shows_each_deals_points_and_the_total():
    shown = texts(VIEWS["official-match-over"])
    bottom = "deals, then total  ·  SUPER starts a new game"
    assert {"0 · 1 · 1 · 0", "1 · 1 · -1 · 0", bottom} <= set(shown)
    assert shown.count("=1st") == 2 and shown.count("=3rd") == 2


def test_solitaire_shows_its_cards_and_says_won_or_lost():
    assert {"SETs found", "6", "owed 1", "deck 48", "table 15"} <= set(texts(VIEWS["solitaire"]))
    assert {"LOST", "6 SETs found  ·  owed 1"} <= set(texts(VIEWS["solitaire-lost"]))
    assert "WON" in texts(VIEWS["solitaire-won"])


def test_solo_shows_the_cards_it_counts():
    assert "halves every 15 s  ·  deck 63 · table 12" in texts(VIEWS["solo"])


def test_a_solo_call_has_no_photo_finish():
    shown = texts(VIEWS["solo-call"])
    assert {"P1 calls SET", "show your SET", "7 s"} <= set(shown)
    assert not any("alone" in text or "photo finish" in text for text in shown), shown


def test_solos_end_shows_how_the_score_was_made():
    # 12 cards left at the end, each worth the score over the 9 SETs found.
    worked_out = "113 + 12 cards x 18.8 a card = 339"
    assert any(worked_out in text for text in texts(VIEWS["solo-over"]))


def test_solitaires_end_says_it_once_and_how_to_start_again():
    for name, word in (("solitaire-won", "WON"), ("solitaire-lost", "LOST")):
        shown = texts(VIEWS[name])
        assert shown.count(word) == 1 and "SUPER starts a new game" in shown, shown


def test_a_tie_under_the_official_rules_says_what_super_means():
    shown = texts(VIEWS["official-tie"])
    assert "SUPER: their SETs share cards" in shown or "SUPER: shared cards" in shown


def test_notices_and_the_source_are_shown():
    shown = " ".join(texts(VIEWS["notices"]))
    assert "held down" in shown and "unplugged" in shown and "storage trouble" in shown
    assert "GPIO (lgpio: kernel edge times)" in shown


@pytest.mark.parametrize("size", [(320, 240), (240, 320), (400, 300)])
def test_a_window_smaller_than_any_layout_shows_the_smallest_shrunk(size):
    """A window shrunk by hand (the console refuses such a screen, tests/test_kms.py):
    nothing cut off, the 480x320 picture shrunk to fit, its shape kept, centred."""
    surface = pygame.Surface(size)
    render(surface, VIEWS["call"])
    laid_out = drawn(VIEWS["call"], (480, 320)).surface
    scale = min(size[0] / 480, size[1] / 320)
    expected = pygame.transform.smoothscale(laid_out, (round(480 * scale), round(320 * scale)))
    where = expected.get_rect(center=surface.get_rect().center)
    got = surface.subsurface(where)
    assert pygame.image.tobytes(got, "RGB") == pygame.image.tobytes(expected, "RGB")


def test_render_draws_on_any_surface():
    surface = pygame.Surface((640, 480))
    render(surface, VIEWS["lobby"])
    colours = {surface.get_at((x, y))[:3] for x in range(0, 640, 8) for y in range(0, 480, 8)}
    assert len(colours) > 2


def test_every_seat_symbol_is_in_the_shipped_font():
    f = font(48)
    missing = pygame.image.tobytes(f.render("\U0010fffd", True, (255, 255, 255)), "RGBA")
    for symbol in SYMBOLS:
        image = pygame.image.tobytes(f.render(symbol, True, (255, 255, 255)), "RGBA")
        assert image != missing, f"{symbol!r} renders as the missing glyph"


def test_the_gallery_writes_a_png_per_screen_and_size(tmp_path):
    assert gallery.main([str(tmp_path), "--size", "480x320"]) == 0
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == sorted(f"{name}-480x320.png" for name in VIEWS)
    assert pygame.image.load(tmp_path / "lobby-480x320.png").get_size() == (480, 320)


# --- when the picture changes by itself ------------------------------------------------------


def at(view: View, now_ns: int) -> View:
    return replace(view, now_ns=now_ns)


@pytest.mark.parametrize("name", ["lobby", "scoreboard", "ranking", "super-join"])
def test_nothing_moves_when_no_clock_runs(name):
    assert next_frame_ns(VIEWS[name]) is None


def test_the_pointout_timer_ticks_by_seconds_then_tenths():
    view = VIEWS["call"]
    deadline = view.state.pointout_deadline
    assert deadline is not None
    assert next_frame_ns(at(view, deadline - 7_600_000_000)) == deadline - 7 * NS_PER_S
    assert next_frame_ns(at(view, deadline - 3_500_000_000)) == deadline - 3 * NS_PER_S
    assert next_frame_ns(at(view, deadline - 2_450_000_000)) == deadline - 2_400_000_000
    assert next_frame_ns(at(view, deadline)) is None  # the engine's timer fires now


def test_a_paused_countdown_does_not_tick():
    view = VIEWS["super-call"]
    assert view.state.super_round is not None
    assert view.state.super_round.countdown_left_ns is not None
    # Only the point-out timer moves while the countdown waits for the verdict...
    assert next_frame_ns(view) == view.state.pointout_deadline - 8 * NS_PER_S
    # ...and with no point-out limit nothing moves at all.
    still = replace(view, state=replace(view.state, pointout_deadline=None))
    assert next_frame_ns(still) is None


@settings(max_examples=60)
@given(
    name=st.sampled_from(["call", "tie", "countdown-7s", "super-call", "solo"]),
    offset_ms=st.integers(0, 12_000),
)
def test_the_next_frame_is_exactly_when_the_shown_clocks_change(name, offset_ms):
    view = VIEWS[name]
    now = view.now_ns - 2 * NS_PER_S + offset_ms * 1_000_000
    then = next_frame_ns(at(view, now))
    if then is None:
        return
    assert then > now
    assert shown_clocks(at(view, then - 1)) == shown_clocks(at(view, now))
    assert shown_clocks(at(view, then)) != shown_clocks(at(view, now))


def test_the_solo_increment_counts_down_live():
    view = VIEWS["solo"]
    then = next_frame_ns(view)
    assert then is not None
    shown = increment(view)
    assert shown is not None and increment(at(view, then)) == shown - 1


# --- the window ------------------------------------------------------------------------------


@pytest.fixture
def inbox():
    return Inbox()


@pytest.fixture
def window(inbox):
    with Window(inbox, size=(480, 320)) as w:
        yield w


def test_a_desktop_window_is_resizable(window):
    assert window.driver == "dummy"
    assert pygame.display.get_surface().get_flags() & pygame.RESIZABLE
    assert pygame.display.get_surface().get_size() == (480, 320)


def test_no_screen_is_a_clear_error(monkeypatch, inbox):
    monkeypatch.setenv("SDL_VIDEODRIVER", "no-such-driver")
    with pytest.raises(ScreenUnavailable, match="no screen to open"):
        Window(inbox)


def test_sdl_drawing_nowhere_is_no_screen_unless_asked_for(monkeypatch, inbox):
    # SDL falls back to its offscreen driver when it reaches no X server: an invisible
    # window must not pass for a screen. (The tests' own dummy driver is asked for by name.)
    monkeypatch.setattr(pygame.display, "get_driver", lambda: "offscreen")
    with pytest.raises(ScreenUnavailable, match="SDL found only its offscreen driver"):
        Window(inbox)
    assert not pygame.display.get_init()


def test_the_window_hands_over_its_keys_in_order(window, inbox):
    key(pygame.KEYDOWN, pygame.K_z)
    key(pygame.KEYDOWN, pygame.K_v)
    key(pygame.KEYUP, pygame.K_v)
    assert window.take_events() == [("z", True), ("v", True), ("v", False)]
    assert window.take_events() == [] and inbox.drain() == []


def key(kind: int, k: int) -> None:
    assert pygame.event.post(pygame.event.Event(kind, key=k, mod=0, unicode="", scancode=0))


def test_keys_become_edges_stamped_by_the_clock_and_a_held_key_is_one_press(window):
    clock = iter(range(1_000, 100_000, 1_000))
    keys = WindowKeys(window, clock=lambda: next(clock))  # read at 1000
    key(pygame.KEYDOWN, pygame.K_2)
    key(pygame.KEYDOWN, pygame.K_2)  # the keyboard repeating a held key
    key(pygame.KEYDOWN, pygame.K_z)  # no button's
    key(pygame.KEYDOWN, pygame.K_u)
    key(pygame.KEYUP, pygame.K_u)
    key(pygame.KEYUP, pygame.K_2)
    assert keys.read() == [  # taken at 2000, then each stamped as it is taken
        Edge("P2", 3_000, True),
        Edge("UNDO", 4_000, True),
        Edge("UNDO", 5_000, False),
        Edge("P2", 6_000, False),
    ]
    assert keys.watermark_ns == 2_000
    assert not window.quit_requested


@pytest.mark.parametrize(
    "event",
    [(pygame.KEYDOWN, pygame.K_q), (pygame.KEYDOWN, pygame.K_ESCAPE), (pygame.QUIT, None)],
    ids=["q", "escape", "closed"],
)
def test_q_escape_or_closing_the_window_asks_to_quit(window, inbox, event):
    kind, k = event
    if k is None:
        assert pygame.event.post(pygame.event.Event(kind))
    else:
        key(kind, k)
    window.take_events()
    assert window.quit_requested
    assert [type(item) for item in inbox.drain()] == [Quit]


def drew(window: Window, view: View) -> bool:
    before = window.frames
    window.show(view)
    return window.frames > before


def test_show_draws_only_when_the_picture_changes(window):
    view = VIEWS["call"]
    assert drew(window, view)
    assert not drew(window, view)
    assert not drew(window, at(view, view.now_ns + 1_000_000))  # the same second shown
    assert drew(window, at(view, view.now_ns + NS_PER_S))  # the timer shows one less
    assert drew(window, replace(view, messages=("something new",)))


def test_show_draws_again_after_the_window_was_exposed(window):
    view = VIEWS["lobby"]
    assert drew(window, view)
    assert pygame.event.post(pygame.event.Event(pygame.WINDOWEXPOSED))
    window.take_events()
    assert drew(window, view)


def test_a_game_played_through_the_window(window, inbox):
    """The views of a short game all draw, and only changes redraw."""
    rules = Settings(rules=RuleSet.SUPER, players=2)
    state = new_game(rules)
    for inp in (
        Press(1, 0),
        Press(2, 1),
        Super(2),
        Press(2, 3 * NS_PER_S),
        Verdict(True, 4 * NS_PER_S),
    ):
        state, _ = step(rules, state, inp)
        view = View(settings=rules, state=state, now_ns=inp.t_ns)
        assert drew(window, view)
        assert not drew(window, view)
    assert window.frames == 5


def test_events_waiting_without_a_descriptor(window):
    # The dummy driver, as Wayland's, gives no descriptor: its events are looked for.
    assert window.events_fd() is None
    window.take_events()  # a process's first window opens with its own (shown, exposed)
    assert not window.events_waiting()
    key(pygame.KEYDOWN, pygame.K_v)
    assert window.events_waiting()
    window.take_events()
    assert not window.events_waiting()


def test_the_key_bar_is_one_line_where_it_can_be():
    """At 800x480 it wrapped into two halves although one line fitted, tighter."""
    for size in ((800, 480), (1280, 720)):
        [keys] = [d for d in drawn(VIEWS["solo"], size).drawn if "q\u00a0quit" in d.text]
        assert keys.box.height < 2 * keys.size, (size, keys)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_lobby_shows_the_pages_qr_code_and_its_pin(size):
    """The code drawn is the page's address, module by module (a whole number of pixels
    each, at least 4: at 3 a phone read a 3.5" screen's from 12.5 cm, at 4 from 19,
    bench/qr.py); the PIN beside it; without a network, the screen says so instead."""
    view = VIEWS["lobby"]
    assert view.join is not None and view.join.url is not None
    canvas = drawn(view, size)
    assert "PIN 481093" in [d.text for d in canvas.drawn]
    pixels = pygame.surfarray.array3d(canvas.surface)
    white = (pixels == 255).all(axis=2).nonzero()  # only the code's light is pure white
    left, top = int(white[0].min()), int(white[1].min())
    side = int(white[0].max()) - left + 1
    code = qr.modules(view.join.url)
    px = side // (len(code) + 2 * qr.QUIET)
    assert px >= 4 and side == px * (len(code) + 2 * qr.QUIET)
    for y, row in enumerate(code):
        for x, dark in enumerate(row):
            at = (left + (x + qr.QUIET) * px + px // 2, top + (y + qr.QUIET) * px + px // 2)
            assert (canvas.surface.get_at(at)[:3] == qr.DARK) == dark, (x, y)
    offline = texts(VIEWS["lobby-no-network"], size)
    assert "PIN 481093" in offline and any("no network" in t for t in offline)
    assert (
        not (pygame.surfarray.array3d(drawn(VIEWS["lobby-no-network"], size).surface) == 255)
        .all(axis=2)
        .any()
    )


def test_no_page_served_is_no_code_and_no_pin():
    shown = texts(replace(VIEWS["lobby"], join=None))
    assert not any("PIN" in t for t in shown) and "Press your buzzer to join" in shown


def test_a_new_pin_or_address_is_a_new_frame():
    """`referee pin --new`, or the Wi-Fi come up, while the lobby is shown: the screen
    draws it (a frame's key left the join sign out, and the old PIN stayed up)."""
    lobby = VIEWS["lobby"]
    assert lobby.join is not None
    new_pin, new_address = replace(lobby.join, pin="000000"), replace(lobby.join, url=None)
    for join in (new_pin, new_address, None):
        assert frame_key(replace(lobby, join=join), (480, 320)) != frame_key(lobby, (480, 320))


def test_a_soft_onset_is_drawn_outlined_and_the_legend_says_so():
    """Issue 30: the replay screen says how sure an onset is instead of marking every one
    alike: a soft one is an outline (fewer lit pixels than a filled mark) and the legend
    names it."""
    view = VIEWS["replay"]
    assert view.replay is not None
    sharp = replace(view, replay=replace(view.replay, soft=()))
    size = (1280, 720)
    lit = []
    for shown in (sharp, view):
        canvas = drawn(shown, size)
        pixels = pygame.surfarray.pixels3d(canvas.surface)
        colour = np.array(ATTENTION[:3])
        lit.append(int((pixels == colour).all(axis=2).sum()))
        said = " ".join(d.text for d in canvas.drawn)
        assert ("soft start" in said) == bool(shown.replay.soft), said
    assert lit[1] < lit[0]


def lobby(settings: Settings, *joined: int, names=None) -> View:
    table = gallery.Table(settings, names).play(*(Press(p, p * NS_PER_S) for p in joined))
    return table.view(10, join=gallery.JOIN)


@pytest.mark.parametrize("size", [(480, 320), (1280, 720), (720, 1280)])
def test_a_lobby_short_of_players_says_super_needs_them_not_that_it_starts(size):
    for rules, joined, need in (
        (Settings(players=4), (), "2 players"),
        (Settings(players=4), (3,), "2 players"),
        (Settings(rules=RuleSet.SOLO, players=1), (), "one player"),
    ):
        shown = texts(lobby(rules, *joined), size)
        assert not any("starts the game" in t for t in shown), shown
        assert f"SUPER needs {need} in to start" in shown or f"SUPER needs {need}" in shown
        said = captions.headline(lobby(rules, *joined))
        assert said == f"press your buzzer to join; SUPER needs {need} in to start"
    assert captions.headline(lobby(Settings(players=4), 1, 2)).endswith("SUPER starts the game")


ROOMY = [size for size in SIZES if size != (480, 320)]


@pytest.mark.parametrize("size", ROOMY, ids=[f"{w}x{h}" for w, h in ROOMY])
def test_a_name_the_scores_show_whole_the_lobby_shows_whole(size):
    """Beside the QR code four tiles abreast cut "Chloé" to "Chl…"; fewer, wider ones
    show it whole, as the scores do. (On a 3.5" screen four names and a QR code leave no
    room for all of them legibly: there as many as fit, at 20 px.)"""
    names = {1: "Chloé", 2: "Bob", 3: "Maximilian", 4: "Dee"}
    view = lobby(Settings(players=4), 1, 3, names=names)
    marks = [t for t in texts(view, size) if t[-1] in SYMBOLS]
    assert marks == ["Chloé ●", "Bob ▲", "Maximilian ■", "Dee ◆"]
    small = [t for t in texts(view, (480, 320)) if t[-1] in SYMBOLS]
    assert small[:2] == ["Chloé ●", "Bob ▲"]  # not P1, P2 as four abreast had them


def test_the_lobbys_notice_of_a_phones_rules_fits_a_small_screen_whatever_they_set():
    """Every key a phone could set, away from the file's: the notice says as many as fit
    in two lines of a 3.5" screen, and how many more."""
    file = Settings(rules=RuleSet.SOLO, players=1)
    every = {
        "rules": "super",
        "players": 8,
        "pointout_s": 86400,
        "tie_ms": 86400000,
        "super_s": 0.001,
        "must_use_flipped": True,
        "deals": 99,
        "dealer_plays": False,
        "sudden_death": True,
    }
    for count in range(1, len(every) + 1):
        rules = NextRules.of(file, dict(list(every.items())[:count]))
        said = rules.over_file_shown
        assert said is not None and said.startswith("set on a phone, over the file: rules super")
        table = gallery.Table(rules.settings).play(Press(1, NS_PER_S))
        notice = Notice(said, Severity.INFO)
        fits_its_texts(table.view(2, [notice], join=gallery.JOIN))
