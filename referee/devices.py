"""The box's devices, opened from the settings: where the buttons are, the LEDs, the sound.

`referee run` and `referee check-buttons` open them the same way, here.
"""

import logging
import sys

from gpiozero import GPIOZeroError

from .config import Config, LedDriver, SoundOutput
from .edges import in_play
from .inputs import InputSource
from .inputs.gpio import GpioButtons, GpioError
from .inputs.keyboard import KEYBOARD_RESOLUTION_NS, TerminalKeys
from .inputs.serial_board import SerialBoard
from .outputs.alsa import alsa_quiet
from .outputs.lights import BoardLeds, Leds, PinLeds, ShiftRegisterLeds
from .outputs.sound import BeeperSpeaker, BoardSpeaker, Silence, SoundCardSpeaker, Speaker

log = logging.getLogger(__name__)


class StartError(Exception):
    """The box cannot start as asked: a one-line reason for the log and the terminal."""


# How often the main loop takes the window's keys: they are stamped when taken.
KEY_POLL_S = 0.01


class WindowKeys:
    """The window's keyboard as the input: the main loop takes its keys from SDL every
    KEY_POLL_S and stamps them then, so they are never late for the arbiter, but two keys
    closer than that may be stamped in either order."""

    name = "keyboard (window)"
    resolution_ns = max(KEYBOARD_RESOLUTION_NS, round(KEY_POLL_S * 1e9))
    latency_ns = 0

    def held_at_start(self) -> tuple[str, ...]:
        return ()

    def start(self, inbox: object) -> None:
        pass

    def close(self) -> None:
        pass


def open_input(kind: str, config: Config, *, display: str, stdin_fd: int | None) -> InputSource:
    """`keyboard` (the window's, or the terminal's), `serial[:DEVICE]` or `gpio`."""
    if kind == "keyboard":
        if display == "window":
            return WindowKeys()
        if display != "terminal":
            raise StartError("--input keyboard needs a window or a terminal to type in")
        return TerminalKeys(sys.stdin.fileno() if stdin_fd is None else stdin_fd)
    if kind == "serial" or kind.startswith("serial:"):
        return SerialBoard(kind.partition(":")[2] or config.serial.device, baud=config.serial.baud)
    if kind == "gpio":
        # Only the seats in play: a pin of an empty seat may belong to something else
        # (a HAT screen's touch controller takes P8's).
        pins = {button: config.pins[button] for button in in_play(config.rules.players)}
        try:
            return GpioButtons(pins, config.buttons.resolution_ns)
        except GpioError as err:
            raise StartError(str(err)) from None
    raise StartError(f"unknown input {kind!r}: use auto, gpio, keyboard or serial[:DEVICE]")


def open_lights(config: Config, source: InputSource) -> Leds | None:
    """The buzzers' LEDs: on the serial board with its buttons, or on the Pi's GPIO as
    the settings' [leds] say."""
    if isinstance(source, SerialBoard):
        return BoardLeds(source)
    if not isinstance(source, GpioButtons):
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


def open_speaker(config: Config, source: InputSource, *, desktop: bool) -> Speaker:
    """The beeper (the serial board's), the sound card, or silence."""
    output = config.sound.output
    if output is SoundOutput.BEEPER and isinstance(source, SerialBoard):
        return BoardSpeaker(source)
    if output is SoundOutput.BEEPER and isinstance(source, GpioButtons) and config.beeper_pin:
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
