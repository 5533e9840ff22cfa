"""What a new user sees around the game: no set-up warnings, no C library's chatter."""

import ctypes
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .conftest import ROOT


def test_the_package_says_its_license_the_way_setuptools_wants():
    # A TOML table here makes every `make test` and `make run` on a fresh clone print a
    # 12-line deprecation warning, twice.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"  # an SPDX expression
    assert "setuptools>=77" in project["build-system"]["requires"]
    # The packages where they are: pip's editable install adds the clone to sys.path and
    # needs no import hook of its own (which it warns about at every install).
    assert project["tool"]["setuptools"]["package-dir"] == {"": "."}


def _libasound() -> bool:
    try:
        ctypes.CDLL("libasound.so.2")
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _libasound(), reason="needs ALSA's libasound.so.2")
@pytest.mark.skipif(Path("/proc/asound/cards").exists(), reason="needs a machine with no card")
def test_no_sound_card_is_one_warning_not_alsa_noise():
    opened = subprocess.run(
        [
            sys.executable,
            "-c",
            "from referee.config import default_config\n"
            "from referee.daemon.devices import open_speaker\n"
            "from referee.buttons import BUTTONS\n"
            "class Keys:  # any source that is neither GPIO nor a board\n"
            "    buttons = BUTTONS\n"
            "speaker = open_speaker(default_config(), Keys(), on_gpio=False, desktop=True)\n"
            "print(type(speaker).__name__)\n",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env={"SDL_AUDIODRIVER": "alsa", "PATH": "/usr/bin:/bin"},
    )
    assert opened.stdout == "Silence\n"
    assert opened.stderr.splitlines() == [
        "no sound card (ALSA: Couldn't open audio device: No such file or directory): silent"
    ]
