"""The console's screen: each View drawn into a Surface of our own and shown through KMS
dumb buffers (kms.py). pygame draws; SDL's video is never started."""

import pygame

from referee.view import View

from .display import frame_key, render
from .kms import KmsOutput

# XRGB8888 in a little-endian 32-bit word, the dumb buffers' format (DRM_FORMAT_XRGB8888).
XRGB8888_MASKS = (0x00FF0000, 0x0000FF00, 0x000000FF, 0)


class KmsScreen:
    def __init__(self, output: KmsOutput) -> None:
        self.output = output
        self.surface = pygame.Surface(output.size, 0, 32, XRGB8888_MASKS)
        self._last_key: tuple[object, ...] | None = None
        self.frames = 0  # drawn so far

    @property
    def name(self) -> str:
        return f"kms ({self.output.name})"

    def show(self, view: View) -> bool:
        """Draw the view, unless the screen already shows exactly this picture."""
        key = frame_key(view, self.output.size)
        if key == self._last_key:
            return False
        render(self.surface, view)
        with memoryview(self.surface.get_buffer()) as pixels:  # type: ignore[arg-type]
            self.output.present(pixels, self.surface.get_pitch())
        self._last_key = key
        self.frames += 1
        return True

    def close(self) -> None:
        self.output.close()
