"""The box's devices, picked and opened from the settings in one place: the screens, the
buttons, the LEDs, the sound.

`referee run` and `referee check-buttons` both pick them here (`pick_display`,
`pick_input`) and open them (`open_screen`, `open_devices`); `check_openable` refuses,
before anything is opened or written, what cannot open at all. Several screens
(`--display window+terminal`) are opened here too, and handed to the main loop as one
(outputs/composite.py); the phones are served by the page's own process, from the store.
"""

import contextlib
import logging
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from gpiozero import GPIOZeroError

from referee.audio.alsa import alsa_quiet
from referee.buttons import in_play
from referee.config import AudioConfig, Config, DisplayConfig, LedDriver, SoundOutput
from referee.config.pi_header import is_raspberry_pi
from referee.errors import ScreenUnavailable, StartError
from referee.inbox import Inbox
from referee.inputs import InputSource
from referee.inputs.console_keys import NoKeyboard, open_console_keys
from referee.inputs.keyboard import NotATerminal, TerminalKeys, WindowKeys, readable_as_keys
from referee.inputs.serial_board import SerialBoard
from referee.outputs.composite import Screen, Screens
from referee.outputs.kms import CARDS
from referee.outputs.kms import cards as drm_cards
from referee.outputs.lights import BoardLeds, Leds, PinLeds, ShiftRegisterLeds
from referee.outputs.sound import BeeperSpeaker, BoardSpeaker, Silence, SoundCardSpeaker, Speaker
from referee.outputs.terminal import TerminalScreen

from .mux import Inputs

if TYPE_CHECKING:  # pygame is imported only when a window is opened, numpy with a microphone
    from referee.audio.capture import Capture
    from referee.audio.pcm import AlsaCapture
    from referee.outputs.display import Window

log = logging.getLogger(__name__)


def _desktop(env: Mapping[str, str]) -> bool:
    """A desktop session (X11, or Wayland with XWayland): a window can be opened there."""
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


# A local X display, ":0" or "unix:0.1": its server listens on this socket.
_LOCAL_X = re.compile(r"(?:unix)?:(\d+)(?:\.\d+)?")


def _unanswered_desktop(env: Mapping[str, str]) -> str | None:
    """What the environment names as a desktop that nothing serves, as a user can check
    it; None when one answers or cannot be told from here (an X server on another host).
    Else SDL tries every driver it has, prints libwayland's complaint on the way, and
    fails after the store was made."""
    wayland = env.get("WAYLAND_DISPLAY")
    if wayland:
        runtime = env.get("XDG_RUNTIME_DIR", "")
        path = Path(wayland) if wayland.startswith("/") else Path(runtime, wayland)
        if (wayland.startswith("/") or runtime) and path.is_socket():
            return None
    x = _LOCAL_X.fullmatch(env.get("DISPLAY", ""))
    if x is None:
        return None if env.get("DISPLAY") else f"WAYLAND_DISPLAY={wayland}: no compositor there"
    x_socket = f"/tmp/.X11-unix/X{x[1]}"
    for address in ("\0" + x_socket, x_socket):  # X servers on Linux listen on both
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(address)
                return None
            except OSError:
                continue
    return f"DISPLAY={env['DISPLAY']}: no X server answers there ({x_socket})"


# What `--display A+B` may join, in the order they open: those that may fail first, so
# that the terminal is not taken over by a box that then does not start.
JOINABLE = ("window", "kms", "terminal")


def _kinds(display: str) -> list[str]:
    """Each display's kind: `kms:/dev/dri/card1+terminal` is kms and terminal."""
    return [part.partition(":")[0] for part in display.split("+")]


def joined_displays(requested: str) -> list[str]:
    """The displays `--display` joins with `+` (every view shown on each), in the order
    they open; StartError, in one line, for a combination that cannot be."""
    parts = requested.split("+")
    if len(parts) == 1:
        return parts
    kinds = _kinds(requested)
    for part, kind in zip(parts, kinds, strict=True):
        if kind in ("auto", "none"):
            why = "picks one display" if kind == "auto" else "shows nothing"
            raise StartError(f"--display {requested}: {kind} {why}: it joins no other display")
        if kind not in JOINABLE:
            raise StartError(f"--display {requested}: {part!r} is no display: join window,"
                             " kms[:CARD] and terminal with +")  # fmt: skip
    for kind in JOINABLE:
        if kinds.count(kind) < 2:
            continue
        if kind == "window":
            raise StartError(f"--display {requested}: one window at most: its keys and events"
                             " are the main loop's")  # fmt: skip
        raise StartError(f"--display {requested}: {kind} twice: each display once at most")
    return sorted(parts, key=lambda part: JOINABLE.index(part.partition(":")[0]))


def keyboard_display(display: str) -> str | None:
    """Whose keys `--input keyboard` reads where `display` is shown: the window's, else
    the console's (kms), else the terminal's; None: no keyboard there."""
    kinds = _kinds(display)
    return next((kind for kind in JOINABLE if kind in kinds), None)


def pick_display(
    requested: str,
    environ: Mapping[str, str] | None = None,
    cards: Sequence[str] | None = None,
) -> list[str]:
    """The displays to try, in order. `auto`: a window on a desktop; else the console's
    screen through KMS where there is a DRM card (a Pi without a desktop); then the
    terminal where there is one, else none. Several joined by `+` are one display to
    try (all of them open, or the box does not start), in the order they open."""
    if requested != "auto":
        return ["+".join(joined_displays(requested))]
    env = os.environ if environ is None else environ
    candidates = []
    if _desktop(env):
        candidates.append("window")
    elif drm_cards() if cards is None else cards:
        candidates.append("kms")
    if sys.stdin.isatty() and sys.stdout.isatty():
        candidates.append("terminal")
    return [*candidates, "none"]


def pick_input(requested: str) -> str:
    if requested != "auto":
        return requested
    return "gpio" if is_raspberry_pi() else "keyboard"


def check_openable(
    kind: str, displays: list[str], stdin_fd: int | None = None, cards: Sequence[str] | None = None
) -> None:
    """StartError, in one line, for an input or a display that cannot open whatever
    happens: said before the store is created or the terminal is taken over. Of
    several displays joined by `+`, each is checked so."""
    for display in displays[0].split("+"):
        _check_display(display, cards)
    if kind == "keyboard" and keyboard_display(displays[0]) == "terminal":
        try:
            readable_as_keys(sys.stdin.fileno() if stdin_fd is None else stdin_fd)
        except NotATerminal as err:
            raise StartError(f"--input keyboard reads keys from a terminal: {err}") from None


def _check_display(display: str, cards: Sequence[str] | None) -> None:
    # SDL_VIDEODRIVER set: SDL is told where to draw, and says itself if it cannot.
    if display == "window" and not os.environ.get("SDL_VIDEODRIVER"):
        if not _desktop(os.environ):
            raise StartError(
                "--display window: no desktop here (neither DISPLAY nor WAYLAND_DISPLAY is"
                " set): use --display kms on the console, else terminal or none"
            )
        if unanswered := _unanswered_desktop(os.environ):
            raise StartError(f"--display window: {unanswered}: start the desktop, or use"
                             " --display kms on the console, else terminal or none")  # fmt: skip
    screen, _, card = display.partition(":")
    found = Path(card).exists() if card else drm_cards() if cards is None else cards
    if screen == "kms" and not found:
        missing = f"no such card {card}" if card else f"no DRM card ({CARDS} matches nothing)"
        raise StartError(f"--display {display}: {missing}: use --display terminal or none")


@dataclass
class OpenScreen:
    screen: Screen | None
    kind: str  # window, kms, terminal or none; several joined by +: "window+terminal"
    name: str  # as the log names it: "kms (card0 1280x720)", "window (x11) + terminal"
    window: "Window | None" = None  # the window, whose events the main loop takes


def open_screen(
    displays: list[str],
    inbox: Inbox,
    size: DisplayConfig,
    stdout: TextIO | None = None,
    clock: Callable[[], int] = time.monotonic_ns,
) -> OpenScreen:
    """The first of the displays that opens (pick_display's list); ScreenUnavailable
    from the last if none does. Several joined by `+` open together, or not at all."""
    display, *others = displays
    wanted = (size.width, size.height) if size.width else None
    try:
        if "+" in display:
            return _open_screens(display.split("+"), inbox, wanted, stdout, clock)
        return _open_screen(display, inbox, wanted, stdout, clock)
    except ScreenUnavailable as err:
        if not others:
            raise
        log.warning("%s: trying the %s instead", err, others[0])
        return open_screen(others, inbox, size, stdout, clock)


def _open_screens(
    displays: list[str],
    inbox: Inbox,
    wanted: tuple[int, int] | None,
    stdout: TextIO | None,
    clock: Callable[[], int],
) -> OpenScreen:
    """Every one of the displays (joined_displays' order), as one screen: those opened
    are closed again when a later one cannot open, and the error names it."""
    with contextlib.ExitStack() as opened:
        shown = []
        for display in displays:
            try:
                one = _open_screen(display, inbox, wanted, stdout, clock)
            except ScreenUnavailable as err:
                raise ScreenUnavailable(f"--display {display}: {err}") from None
            assert one.screen is not None  # none joins no other display
            opened.callback(one.screen.close)
            shown.append(one)
        window = next((one.window for one in shown if one.window is not None), None)
        screens = Screens([one.screen for one in shown if one.screen is not None])
        kind, name = "+".join(one.kind for one in shown), " + ".join(one.name for one in shown)
        opened.pop_all()
        return OpenScreen(screens, kind, name, window)


def _open_screen(
    display: str,
    inbox: Inbox,
    wanted: tuple[int, int] | None,
    stdout: TextIO | None,
    clock: Callable[[], int],
) -> OpenScreen:
    kind, _, card = display.partition(":")
    if kind == "window":
        from referee.outputs.display import Window  # pygame: for the screens that draw

        window = Window(inbox, size=wanted)
        return OpenScreen(window, kind, f"window ({window.driver})", window)
    if kind == "kms":  # kms:/dev/dri/card1: that card, else the first with a screen
        from referee.outputs.kms import find_output
        from referee.outputs.kms_screen import KmsScreen

        screen = KmsScreen(find_output(wanted, [card] if card else None), clock)
        return OpenScreen(screen, kind, screen.name)
    if kind == "terminal":
        return OpenScreen(TerminalScreen(sys.stdout if stdout is None else stdout), kind, kind)
    if kind == "none":
        return OpenScreen(None, kind, kind)
    raise StartError(f"unknown display {display!r}: use auto, window, kms, terminal or none")


@dataclass
class Devices:
    inputs: Inputs
    lights: Leds | None
    speaker: Speaker
    close: Callable[[], None]
    on_gpio: bool = False  # the buttons, LEDs and beeper are on the Pi's pins


def open_devices(
    config: Config,
    kind: str,
    inbox: Inbox,
    *,
    display: str,
    window: "Window | None" = None,
    stdin_fd: int | None = None,
    clock: Callable[[], int] = time.monotonic_ns,
    seats: int | None = None,
) -> Devices:
    """The buttons (`kind`: keyboard, serial[:DEVICE] or gpio), their LEDs and the
    speaker. `seats`: how many buzzers to open on GPIO (the game's seats by default).
    Whatever opened is closed again when a later part cannot open."""
    source = open_input(
        kind, config, display=display, window=window, stdin_fd=stdin_fd, clock=clock, seats=seats
    )
    inputs = Inputs([source], inbox, clock=clock)
    with contextlib.ExitStack() as opened:
        opened.callback(inputs.close)
        on_gpio = kind == "gpio"
        lights = open_lights(config, source, on_gpio=on_gpio)
        if lights is not None:
            opened.callback(lights.close)
        desktop = "window" in _kinds(display)
        speaker = open_speaker(config, source, on_gpio=on_gpio, desktop=desktop)
        opened.callback(speaker.close)
        return Devices(inputs, lights, speaker, opened.pop_all().close, on_gpio)


def open_input(
    kind: str,
    config: Config,
    *,
    display: str,
    window: "Window | None" = None,
    stdin_fd: int | None = None,
    clock: Callable[[], int] = time.monotonic_ns,
    seats: int | None = None,
) -> InputSource:
    """`keyboard` (the window's, the console's, or the terminal's: keyboard_display),
    `serial[:DEVICE]` or `gpio`."""
    if kind == "keyboard":
        keys = keyboard_display(display)
        if window is not None:
            return WindowKeys(window, clock)
        if keys == "kms":
            try:
                return open_console_keys(clock=clock)
            except NoKeyboard as err:
                raise StartError(f"--input keyboard on the console: {err}") from None
        if keys != "terminal":
            raise StartError("--input keyboard needs a window, the console or a terminal")
        try:
            return TerminalKeys(sys.stdin.fileno() if stdin_fd is None else stdin_fd, clock)
        except NotATerminal as err:
            raise StartError(f"--input keyboard reads keys from a terminal: {err}") from None
    if kind == "serial" or kind.startswith("serial:"):
        device = kind.partition(":")[2] or config.serial.device
        return SerialBoard(
            device, baud=config.serial.baud, settle_ns=config.buttons.settle_ns, clock=clock
        )
    if kind == "gpio":
        from referee.inputs.gpio import GpioButtons  # Linux's GPIO: gpiod is only there

        # Only the seats in play: a pin of an empty seat may belong to something else
        # (a HAT screen's touch controller takes P8's); and REPLAY only with its pin.
        buttons = in_play(config.game.players if seats is None else seats)
        pins = {button: config.pins[button] for button in buttons if button in config.pins}
        return GpioButtons(pins, config.buttons.resolution_ns, clock=clock)
    raise StartError(f"unknown input {kind!r}: use auto, gpio, keyboard or serial[:DEVICE]")


def open_microphone(audio: AudioConfig) -> "tuple[Capture | None, str | None]":
    """The microphone's ring, read by a thread of its own (the last 30 s, in memory), and
    what to tell the table if one was named and cannot be opened. None when it is off or
    there is none: a box without a microphone referees as well, without clips, and looks
    for one now and then (look_for_microphone)."""
    if audio.microphone == "off":
        return None, None
    # Imported here: numpy and libasound are for the microphone alone.
    from referee.audio.capture import Capture
    from referee.audio.pcm import CaptureError, NoCard

    stream = _microphone_stream(audio)
    try:
        capture = Capture(stream(), reopen=stream)
    except NoCard as err:
        log.info("no microphone: %s; looked for now and then", err)
        return None, None
    except CaptureError as err:
        log.warning("no microphone: %s; looked for now and then", err)
        named = audio.microphone != "auto"
        return None, (f"microphone {audio.microphone}: {err}: waiting for it" if named else None)
    capture.start()
    log.info(
        "microphone %s: the last %.0f s kept in memory, no more", capture.name, capture.seconds
    )
    return capture, None


def look_for_microphone(audio: AudioConfig) -> "Callable[[], Capture | None] | None":
    """For a box that had no microphone at its start: one look for it (the settings'
    device, or with `auto` the first card that captures), its ring's reader started and
    said in the log when it opens, else None. None when the microphone is off."""
    if audio.microphone == "off":
        return None
    stream = _microphone_stream(audio)

    def look() -> "Capture | None":
        from referee.audio.pcm import CaptureError

        try:
            pcm = stream()  # libasound alone: numpy is loaded once there is a microphone
        except CaptureError as err:  # each look: not worth a line of the log
            log.debug("no microphone yet: %s", err)
            return None
        from referee.audio.capture import Capture

        capture = Capture(pcm, reopen=stream)
        capture.start()
        log.info(
            "microphone %s plugged in: the last %.0f s kept in memory, no more",
            capture.name,
            capture.seconds,
        )
        return capture

    return look


def _microphone_stream(audio: AudioConfig) -> "Callable[[], AlsaCapture]":
    """The microphone's stream opened (CaptureError if it cannot be): at the start, when
    it is looked for, and again once it was lost; a USB one plugged in again may be
    another card's number now."""
    from referee.audio.pcm import AlsaCapture, NoCard, find_capture_device

    def stream() -> AlsaCapture:
        name = find_capture_device() if audio.microphone == "auto" else audio.microphone
        if name is None:
            raise NoCard("no sound card here captures")
        return AlsaCapture(name)

    return stream


def open_lights(config: Config, source: InputSource, *, on_gpio: bool) -> Leds | None:
    """The buzzers' LEDs: on the serial board with its buttons, or on the Pi's GPIO (when
    the buttons are there too) as the settings' [leds] say."""
    if isinstance(source, SerialBoard):
        return BoardLeds(source)
    if not on_gpio:
        return None
    leds = config.leds
    try:
        match leds.driver:
            case LedDriver.SHIFT_REGISTER:
                assert leds.data is not None and leds.clock is not None  # config checks
                return ShiftRegisterLeds(leds.data, leds.clock)
            case LedDriver.PINS:
                return PinLeds({int(seat[1:]): pin for seat, pin in leds.pins.items()})
    except GPIOZeroError as err:
        raise StartError(f"the LEDs ([leds] {leds.driver}): {err}") from err
    return None


def open_speaker(config: Config, source: InputSource, *, on_gpio: bool, desktop: bool) -> Speaker:
    """The beeper (the serial board's), the sound card, or silence."""
    output = config.sound.output
    if output is SoundOutput.BEEPER and isinstance(source, SerialBoard):
        return BoardSpeaker(source)
    if output is SoundOutput.BEEPER and on_gpio and config.beeper_pin:
        try:
            return BeeperSpeaker(config.beeper_pin)
        except GPIOZeroError as err:
            raise StartError(f"the beeper on {config.beeper_pin}: {err}") from err
    # Without GPIO a beeper is out of reach; a desktop has speakers.
    if output is SoundOutput.SOUNDCARD or (output is SoundOutput.BEEPER and desktop):
        try:
            with alsa_quiet():  # libasound's own 8 lines for what SDL says in one
                return SoundCardSpeaker(config.sound.volume)
        except RuntimeError as err:  # pygame.error: SDL found no sound card
            log.warning("no sound card (%s): silent", err)
    return Silence()
