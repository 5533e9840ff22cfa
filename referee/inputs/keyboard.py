"""The keyboard as the box's buttons: keys 1-8 are the buzzers, v x s u the judge buttons."""

# `e` has no button on the box (there, UNDO held down ends the game): it is an END edge.
END = "END"

KEYMAP: dict[str, str] = {
    **{str(n): f"P{n}" for n in range(1, 9)},
    "v": "VALID",
    "x": "INVALID",
    "s": "SUPER",
    "u": "UNDO",
    "e": END,
}

# A USB keyboard is polled every 8 ms (125 Hz): two keys closer than that cannot be ordered.
KEYBOARD_RESOLUTION_NS = 8_000_000
