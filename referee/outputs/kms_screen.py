"""The console's screen: each View drawn into a Surface of our own and shown through KMS
dumb buffers (kms.py). pygame draws; SDL's video is never started.

While another program has the screen (it took DRM master), the game goes on unseen:
nothing is drawn, the card is asked for the screen back every MASTER_RETRY_NS (the main
loop wakes for it: `wake_ns`), and the picture of the moment is drawn once it is back.
"""

import logging
import time
from collections.abc import Callable

import pygame

from referee.units import NS_PER_S
from referee.view import View

from .display import frame_key, render
from .kms import KmsOutput, ScreenTaken

log = logging.getLogger(__name__)

# XRGB8888 in a little-endian 32-bit word, the dumb buffers' format (DRM_FORMAT_XRGB8888).
XRGB8888_MASKS = (0x00FF0000, 0x0000FF00, 0x000000FF, 0)
# How often to ask for the screen back while another program has it: a screen that comes
# back within a second is soon enough for a table, and asking costs two ioctls.
MASTER_RETRY_NS = NS_PER_S


class KmsScreen:
    def __init__(self, output: KmsOutput, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self.output = output
        self.surface = pygame.Surface(output.size, 0, 32, XRGB8888_MASKS)
        self._clock = clock
        self._last_key: tuple[object, ...] | None = None
        self._retry_ns: int | None = None  # while the screen is another program's
        self.frames = 0  # drawn so far

    @property
    def name(self) -> str:
        return f"kms ({self.output.name})"

    @property
    def wake_ns(self) -> int | None:
        """When to ask for the screen back; None while it is ours."""
        return self._retry_ns

    def show(self, view: View) -> bool:
        """Draw the view, unless the screen already shows exactly this picture or is
        another program's."""
        if self._retry_ns is not None and not self._taken_back():
            return False
        key = frame_key(view, self.output.size)
        if key == self._last_key:
            return False
        render(self.surface, view)
        with memoryview(self.surface.get_buffer()) as pixels:  # type: ignore[arg-type]
            try:
                self.output.present(pixels, self.surface.get_pitch())
            except ScreenTaken as err:
                log.warning(
                    "%s: another program has the screen (%s): the game goes on, and is shown"
                    " again when the screen is given back",
                    self.output.name,
                    err,
                )
                self._retry_ns = self._clock() + MASTER_RETRY_NS
                self._last_key = None
                return False
        self._last_key = key
        self.frames += 1
        return True

    def _taken_back(self) -> bool:
        """Whether the screen is ours again: asked once its time has come."""
        now = self._clock()
        assert self._retry_ns is not None
        if now < self._retry_ns:
            return False
        if not self.output.take_back():
            self._retry_ns = now + MASTER_RETRY_NS
            return False
        log.info("%s: the screen is back: drawn again", self.output.name)
        self._retry_ns = None
        return True

    def close(self) -> None:
        self.output.close()
