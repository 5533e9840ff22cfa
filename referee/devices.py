"""The box's devices, opened from the settings: where the buttons are, the LEDs, the sound.

`referee run` and `referee check-buttons` open them the same way, here.
"""

import logging
import sys

from .config import Config, SoundOutput
from .inputs import InputSource
from .inputs.keyboard import KEYBOARD_RESOLUTION_NS, TerminalKeys
from .inputs.serial_board import SerialBoard
from .outputs.lights import BoardLeds, Leds
from .outputs.sound import BoardSpeaker, Silence, SoundCardSpeaker, Speaker

log = logging.getLogger(__name__)


class StartError(Exception):
    """The box cannot start as asked: a one-line reason for the log and the terminal."""


class WindowKeys:
    """The window's keyboard as the input: the Window itself puts its key edges in the inbox,
    stamped in the main loop, so they are never late for the arbiter."""

    name = "keyboard (window)"
    resolution_ns = KEYBOARD_RESOLUTION_NS
    latency_ns = 0

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
        return SerialBoard(kind.partition(":")[2] or config.serial.device)
    raise StartError(f"unknown input {kind!r}: use auto, gpio, keyboard or serial[:DEVICE]")


def open_lights(config: Config, source: InputSource) -> Leds | None:
    """The buzzers' LEDs: on the serial board with its buttons."""
    if isinstance(source, SerialBoard):
        return BoardLeds(source)
    return None


def open_speaker(config: Config, source: InputSource, *, desktop: bool) -> Speaker:
    """The beeper (the serial board's), the sound card, or silence."""
    output = config.sound.output
    if output is SoundOutput.BEEPER and isinstance(source, SerialBoard):
        return BoardSpeaker(source)
    # Without GPIO a beeper is out of reach; a desktop has speakers.
    if output is SoundOutput.SOUNDCARD or (output is SoundOutput.BEEPER and desktop):
        try:
            return SoundCardSpeaker(config.sound.volume)
        except RuntimeError as err:  # pygame.error: SDL found no sound card
            log.warning("no sound card (%s): silent", err)
    return Silence()
