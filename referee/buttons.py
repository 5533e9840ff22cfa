"""The box's buttons by name, for every part that names them (the inputs, the arbiter, the
settings, the screens), and the keyboard's keys for them, for the inputs that read them and
the screens that show them: keys 1-8 are the buzzers, v x s u the judge buttons."""

from .units import MAX_SEATS

PLAYER_BUTTONS = tuple(f"P{n}" for n in range(1, MAX_SEATS + 1))
UNDO = "UNDO"
JUDGE_BUTTONS = ("VALID", "INVALID", "SUPER", UNDO)
BUTTONS = PLAYER_BUTTONS + JUDGE_BUTTONS  # the rules' buttons, on every input source
# No button of the box: UNDO held down (or the keyboard's `e`) ends the game.
END = "END"
# No input of the rules: the REPLAY button, UNDO held a while and let go, or the keyboard's
# `r` replays the last call's sound (docs/rules.md, "Replay").
REPLAY = "REPLAY"
# No input of the rules either: VALID pressed while UNDO is held, or the keyboard's `h`,
# asks the camera whether the table holds a SET (docs/rules.md, "Is there a SET?").
HINT = "HINT"
# The buttons a pin may read, the Pi's or the serial board's: REPLAY's is optional
# (`[pins] REPLAY = ""`; on the board, a pin wired or not), as a box without it has UNDO's
# gesture.
PIN_BUTTONS = (*BUTTONS, REPLAY)


def in_play(players: int) -> tuple[str, ...]:
    """The buttons a game with this many seats uses: REPLAY whatever the seats."""
    return (*PLAYER_BUTTONS[:players], *JUDGE_BUTTONS, REPLAY)


KEYMAP: dict[str, str] = {
    **{str(n): f"P{n}" for n in range(1, 9)},
    "v": "VALID",
    "x": "INVALID",
    "s": "SUPER",
    "u": "UNDO",
    "e": END,
    "r": REPLAY,
    "h": HINT,
}
QUIT_KEY = "q"
