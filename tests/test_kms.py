"""The console's screen through KMS dumb buffers (referee/outputs/kms.py), against a card
played at the ioctl boundary (tests/fake_drm.py); the layouts and requests against the
kernel's numbers."""

import ctypes
import errno
import logging
import struct

import pygame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.outputs import drm
from referee.outputs.display import render
from referee.outputs.drm import ModeInfo
from referee.outputs.kms import (
    Connector,
    KmsError,
    choose_crtc,
    choose_mode,
    find_output,
    open_output,
)
from referee.outputs.kms_screen import MASTER_RETRY_NS, KmsScreen
from tools import gallery

from .fake_drm import FakeCard, FakeConnector, mode

VIEWS = gallery.views()


def opened(card: FakeCard, wanted: tuple[int, int] | None = None) -> KmsScreen:
    return KmsScreen(open_output(card.path, wanted, lambda path: card))


def pixels(view_name: str, size: tuple[int, int]) -> bytes:
    """The picture render() draws, as XRGB8888 rows."""
    surface = pygame.Surface(size)
    render(surface, VIEWS[view_name])
    return bytes(surface.get_buffer())


@pytest.mark.parametrize("pitch_pad", [0, 64])  # a card whose rows are longer than the picture
def test_the_screen_shows_exactly_the_picture_drawn(pitch_pad):
    card = FakeCard(pitch_pad=pitch_pad)
    screen = opened(card)
    assert screen.output.size == (1280, 720)  # the preferred mode, not the largest
    assert screen.name == "kms (card0 1280x720)"
    assert screen.show(VIEWS["lobby"])
    assert card.scanout() == pixels("lobby", (1280, 720))
    assert card.master
    screen.close()


def test_frames_are_flipped_between_two_buffers():
    card = FakeCard()
    screen = opened(card)
    shown = [card.shown_fb()]
    for name in ("lobby", "call", "countdown-7s"):
        assert screen.show(VIEWS[name])
        assert card.scanout() == pixels(name, (1280, 720))
        shown.append(card.shown_fb())
    assert not screen.show(VIEWS["countdown-7s"])  # the same picture: not drawn again
    # Open, the mode is set on one buffer (black); then each frame goes to the other.
    at_open, first, second, third = shown
    assert at_open not in (1, first) and second == at_open and third == first
    assert card.calls.count("PAGE_FLIP") == 3 and card.calls.count("SETCRTC") == 1
    screen.close()


def test_a_driver_that_refuses_flips_has_each_frame_set(caplog):
    card = FakeCard(refused={drm.PAGE_FLIP: errno.EINVAL})
    screen = opened(card)
    with caplog.at_level(logging.INFO):
        for name in ("lobby", "call"):
            screen.show(VIEWS[name])
            assert card.scanout() == pixels(name, (1280, 720))
    assert card.calls.count("PAGE_FLIP") == 1  # asked once
    assert card.calls.count("SETCRTC") == 3
    assert "page flips refused" in caplog.text
    screen.close()


def test_a_flip_that_never_completes_falls_back_to_setting_each_frame(caplog):
    card = FakeCard()
    card.complete_flips = False
    screen = opened(card)
    screen.show(VIEWS["lobby"])
    with caplog.at_level(logging.WARNING):
        screen.show(VIEWS["call"])
    assert card.scanout() == pixels("call", (1280, 720))
    assert "each frame is set" in caplog.text
    screen.close()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000 * 10**9

    def __call__(self) -> int:
        return self.now


@pytest.mark.parametrize("flips", [True, False], ids=["flips", "set each frame"])
def test_a_screen_another_program_takes_is_asked_for_slowly_and_drawn_again(flips, caplog):
    card = FakeCard(refused={} if flips else {drm.PAGE_FLIP: errno.EINVAL})
    clock = Clock()
    screen = KmsScreen(open_output(card.path, None, lambda path: card), clock)
    assert screen.show(VIEWS["lobby"]) and screen.wake_ns is None
    card.taken()
    with caplog.at_level(logging.INFO, logger="referee"):
        caplog.clear()
        assert not screen.show(VIEWS["call"])  # refused: nothing raised, nothing shown
        assert card.shown_fb() == 1
        assert screen.wake_ns == clock.now + MASTER_RETRY_NS
        # Until then, not a request to the card, however often the loop shows a view.
        asked = len(card.calls)
        clock.now += MASTER_RETRY_NS - 1
        assert not screen.show(VIEWS["call"]) and not screen.show(VIEWS["scoreboard"])
        assert len(card.calls) == asked
        clock.now += 1  # still held: asked once, and again a second later
        assert not screen.show(VIEWS["call"])
        assert (
            card.calls[asked:] == ["SET_MASTER"] and screen.wake_ns == clock.now + MASTER_RETRY_NS
        )
        card.given_back()
        clock.now += MASTER_RETRY_NS
        assert screen.show(VIEWS["call"])  # the picture of the moment, on our mode again
    assert card.master and card.scanout() == pixels("call", (1280, 720))
    assert (card.crtcs[41].mode.hdisplay, card.crtcs[41].mode.vdisplay) == (1280, 720)
    assert screen.wake_ns is None and screen.output.flips == flips
    # One line when it was taken, one when it came back.
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            "card0 1280x720: another program has the screen (Permission denied): the game"
            " goes on, and is shown again when the screen is given back",
        ),
        ("INFO", "card0 1280x720: the screen is back: drawn again"),
    ]
    assert screen.show(VIEWS["lobby"]) and card.scanout() == pixels("lobby", (1280, 720))
    screen.close()


def test_closing_while_another_program_has_the_screen_leaves_it_its_frame():
    card = FakeCard()
    screen = opened(card)
    screen.show(VIEWS["lobby"])
    card.taken()
    screen.close()
    assert card.shown_fb() == 1 and card.closed and card.dumbs == {}


def test_closing_puts_the_console_back_frees_the_buffers_and_drops_master():
    card = FakeCard()
    screen = opened(card)
    screen.show(VIEWS["lobby"])
    screen.close()
    console = card.crtcs[41]
    assert (console.fb_id, console.connectors) == (1, (21,))
    assert (console.mode.hdisplay, console.mode.vdisplay) == (1280, 720)
    assert card.dumbs == {} and list(card.fbs) == [1]
    calls = card.calls
    # The console back on the CRTC before its framebuffers go (else the screen goes dark),
    # master dropped last.
    assert calls.index("RMFB") > len(calls) - 1 - calls[::-1].index("SETCRTC")
    assert calls[-1] == "DROP_MASTER" and card.closed and not card.master


def test_a_size_asked_for_picks_that_mode_at_its_fastest():
    card = FakeCard(
        [FakeConnector(21, [mode(1280, 720, preferred=True), mode(800, 480, 50),
                            mode(800, 480, 60)], encoder_id=31, encoders=[31])]
    )  # fmt: skip
    screen = opened(card, (800, 480))
    assert screen.output.size == (800, 480) and screen.output.mode.vrefresh == 60
    screen.close()


def test_the_first_connected_screen_and_a_crtc_its_encoder_can_drive():
    card = FakeCard(
        [
            FakeConnector(21, [], connected=False, kind=11, number=1, encoders=[31]),
            FakeConnector(22, [mode(480, 320)], kind=19, number=1, encoders=[32]),
        ],
        encoders={31: (41, 0b01), 32: (0, 0b10)},
    )
    screen = opened(card)
    assert screen.output.connector.name == "SPI-1" and screen.output.crtc_id == 42
    assert screen.output.size == (480, 320)  # no preferred mode: the first
    screen.show(VIEWS["lobby"])
    assert card.scanout(42) == pixels("lobby", (480, 320))
    screen.close()
    assert card.crtcs[42].fb_id == 0  # the CRTC was off: off again


def test_a_screen_smaller_than_the_screens_are_laid_out_for_is_refused_in_one_line():
    """A 3.5" SPI panel in portrait: 320 wide, under the 480 the screens need."""
    card = FakeCard([FakeConnector(22, [mode(320, 480)], kind=19, number=1, encoder_id=31)])
    with pytest.raises(KmsError) as raised:
        opened(card)
    assert str(raised.value) == (
        "/dev/dri/card0: SPI-1 at 320x480 is smaller than the screens are laid out for: at"
        " least 480 wide and 320 high (480x320: turn a 320x480 panel on its side, rotate=90"
        " in its overlay)"
    )
    assert "SETCRTC" not in card.calls and card.dumbs == {} and card.closed


@pytest.mark.parametrize("size", [(480, 320), (480, 800), (480, 480)])
def test_a_screen_at_least_480_wide_and_320_high_is_shown_on(size):
    card = FakeCard([FakeConnector(22, [mode(*size)], kind=19, number=1, encoder_id=31)])
    screen = opened(card)
    assert screen.show(VIEWS["call"]) and card.scanout() == pixels("call", size)
    screen.close()


def test_a_card_that_only_renders_is_passed_over_for_the_next():
    render_only = FakeCard(path="/dev/dri/card0", refused={drm.GETRESOURCES: errno.EOPNOTSUPP})
    display = FakeCard(path="/dev/dri/card1")
    cards = {card.path: card for card in (render_only, display)}
    output = find_output(None, list(cards), cards.__getitem__)
    assert output.name == "card1 1280x720" and render_only.closed and not display.closed
    output.close()


def test_each_card_says_in_one_line_why_it_cannot_show():
    cards = {
        "/dev/dri/card0": FakeCard(path="/dev/dri/card0", refused={drm.GETRESOURCES: 95}),
        "/dev/dri/card1": FakeCard(
            [FakeConnector(21, [mode(1280, 720)], connected=False, kind=11, number=1),
             FakeConnector(22, [], connected=False, kind=10, number=2)],
            path="/dev/dri/card1",
        ),
    }  # fmt: skip
    with pytest.raises(KmsError) as raised:
        find_output(None, list(cards), cards.__getitem__)
    assert str(raised.value) == (
        "/dev/dri/card0: no screen of its own (Operation not supported); "
        "/dev/dri/card1: no screen connected (HDMI-A-1 not connected, DP-2 not connected)"
    )
    assert all(card.closed for card in cards.values())


def test_no_card_at_all():
    with pytest.raises(KmsError, match=r"^no DRM card \(/dev/dri/card\* matches nothing\)"):
        find_output(None, [])


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (FileNotFoundError(errno.ENOENT, "No such file"), "/dev/dri/card0: no such card"),
        (
            PermissionError(errno.EACCES, "Permission denied"),
            "/dev/dri/card0: permission denied: the user must be in the group that owns it"
            " (`video`: sudo usermod -aG video $USER, then log in again)",
        ),
    ],
)
def test_a_card_that_cannot_be_opened(error, said):
    def opener(path):
        raise error

    with pytest.raises(KmsError) as raised:
        open_output("/dev/dri/card0", None, opener)
    assert str(raised.value) == said


def test_a_card_another_program_shows_on_is_busy():
    card = FakeCard(other_master=True)
    with pytest.raises(KmsError, match=r"^/dev/dri/card0: busy: another program .* is showing"):
        opened(card)
    assert card.closed


def test_a_mode_the_card_refuses_frees_what_was_made():
    card = FakeCard(refused={drm.SETCRTC: errno.EINVAL})
    with pytest.raises(KmsError) as raised:
        opened(card)
    assert str(raised.value) == (
        "/dev/dri/card0: HDMI-A-1 at 1280x720@60 cannot be set (Invalid argument)"
    )
    assert card.dumbs == {} and list(card.fbs) == [1] and card.closed


def test_a_file_that_is_no_drm_card(tmp_path):
    """The real DrmCard: open, an ioctl the file does not know, close."""
    with pytest.raises(KmsError, match=r"^/dev/null: not a DRM card \(.*\)$"):
        open_output("/dev/null", None)


# --- the pure parts ---------------------------------------------------------------------

modes = st.builds(
    mode,
    st.sampled_from([480, 800, 1280, 1920]),
    st.sampled_from([320, 480, 720, 1080]),
    st.sampled_from([24, 30, 50, 60]),
    st.booleans(),
)


@settings(max_examples=50)
@given(st.lists(modes, min_size=1, max_size=8), st.none() | st.tuples(
    st.sampled_from([480, 800, 1280]), st.sampled_from([320, 480, 720])))  # fmt: skip
def test_the_mode_is_the_size_wanted_at_its_fastest_else_the_screens_preferred(found, wanted):
    chosen = choose_mode(found, wanted)
    assert chosen in found
    sized = [m for m in found if (m.hdisplay, m.vdisplay) == wanted]
    if sized:
        assert (chosen.hdisplay, chosen.vdisplay) == wanted
        assert chosen.vrefresh == max(m.vrefresh for m in sized)
    elif any(m.type & drm.MODE_TYPE_PREFERRED for m in found):
        assert chosen.type & drm.MODE_TYPE_PREFERRED
    else:
        assert chosen is found[0]


def test_the_crtc_is_the_one_driving_the_connector_now_else_the_first_it_can():
    def encoder(crtc: int, possible: int) -> drm.GetEncoder:
        return drm.GetEncoder(crtc_id=crtc, possible_crtcs=possible)

    hdmi = Connector(21, "HDMI-A-1", True, 31, [31, 32], [])
    crtcs = [41, 42, 43]
    assert choose_crtc(hdmi, {31: encoder(42, 0b111)}, crtcs) == 42
    idle = Connector(21, "HDMI-A-1", True, 0, [31, 32], [])
    assert choose_crtc(idle, {31: encoder(0, 0), 32: encoder(0, 0b110)}, crtcs) == 42
    assert choose_crtc(idle, {31: encoder(0, 0)}, crtcs) is None


def test_the_structures_and_requests_are_the_kernels():
    """drm_mode.h's sizes, and the request numbers strace shows for libdrm's calls."""
    sizes = {
        ModeInfo: 68, drm.CardRes: 64, drm.Crtc: 104, drm.GetEncoder: 20,
        drm.GetConnector: 80, drm.FbCmd: 28, drm.PageFlip: 24, drm.CreateDumb: 32,
        drm.MapDumb: 16, drm.DestroyDumb: 4,
    }  # fmt: skip
    assert {s: ctypes.sizeof(s) for s in sizes} == sizes
    requests = [
        (drm.SET_MASTER, 0x641E), (drm.DROP_MASTER, 0x641F), (drm.GETRESOURCES, 0xC04064A0),
        (drm.GETCRTC, 0xC06864A1), (drm.SETCRTC, 0xC06864A2), (drm.GETENCODER, 0xC01464A6),
        (drm.GETCONNECTOR, 0xC05064A7), (drm.ADDFB, 0xC01C64AE), (drm.RMFB, 0xC00464AF),
        (drm.PAGE_FLIP, 0xC01864B0), (drm.CREATE_DUMB, 0xC02064B2), (drm.MAP_DUMB, 0xC01064B3),
        (drm.DESTROY_DUMB, 0xC00464B4),
    ]  # fmt: skip
    assert [hex(ours) for ours, _ in requests] == [hex(kernels) for _, kernels in requests]


def test_the_events_read_from_the_card():
    vblank = struct.pack("=IIQIIII", drm.EVENT_FLIP_COMPLETE, 32, 7, 1, 2, 3, 41)
    other = struct.pack("=IIQIIII", 1, 32, 0, 0, 0, 0, 41)
    assert drm.event_types(vblank + other) == [drm.EVENT_FLIP_COMPLETE, 1]
    assert drm.event_types(b"") == []
