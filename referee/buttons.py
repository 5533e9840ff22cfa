"""The keyboard's keys for the box's buttons, for the inputs that read them and the
screens that show them: keys 1-8 are the buzzers, v x s u the judge buttons."""

from .inbox import END, REPLAY

KEYMAP: dict[str, str] = {
    **{str(n): f"P{n}" for n in range(1, 9)},
    "v": "VALID",
    "x": "INVALID",
    "s": "SUPER",
    "u": "UNDO",
    "e": END,
    "r": REPLAY,
}
QUIT_KEY = "q"
