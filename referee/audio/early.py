"""The first thing `referee run` does with the microphone: fork the clips' cutter, before
the daemon's first thread and before it loads the screens, the inputs and the page's
parts (docs/design.md, "The microphone").

Forked then, the cutter shares with the daemon the interpreter, numpy and the detector's
code, page by page, copied only where one of them writes; forked later, it would also
hold a copy of every page of the daemon's that the daemon writes afterwards. This module
loads nothing heavy until a microphone is to listen.
"""

import logging
from typing import TYPE_CHECKING

from referee.config import AudioConfig

if TYPE_CHECKING:
    from .cutter_process import CutterProcess

log = logging.getLogger(__name__)


def fork_cutter(audio: AudioConfig) -> "CutterProcess | None":
    """The clips' cutter, forked now when the microphone is to listen and keep clips (a
    card that captures is there, or one is named). None otherwise, or if it cannot be
    forked: the clips' writer then starts one anew, as it does when one dies."""
    if audio.microphone == "off" or audio.clips_mb <= 0:
        return None
    from referee.linux.children import ThreadsRunning

    from .pcm import CaptureError, find_capture_device  # libasound alone, no numpy

    try:
        if audio.microphone == "auto" and find_capture_device() is None:
            return None  # no microphone: open_microphone says so, and numpy is not loaded
        # Imported here, before the fork: what the cutter runs is loaded once, for both.
        from .cutter_process import CutterProcess

        return CutterProcess.forked()
    except CaptureError:
        return None  # no libasound: open_microphone says so
    except ThreadsRunning as err:  # a thread started before (a library's): a bug here
        log.error("the clips' cutter is not forked, %s: it is started anew instead", err)
    except OSError as err:
        log.warning("the clips' cutter is not forked (%s): it is started anew instead", err)
    return None
