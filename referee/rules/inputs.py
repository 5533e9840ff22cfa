"""The inputs the rules engine understands, each stamped with the time it happened.

Times are integer nanoseconds of the game's clock (0 at the start of the game). A
press carries the time of its button's first edge, never the time software saw it.
"""

from .values import value


@value
class Press:
    player: int
    t_ns: int


@value
class Verdict:
    valid: bool
    t_ns: int


@value
class CameraVerdict:
    """The camera's verdict on the SET a caller took (docs/rules.md, "The camera"): SET
    or not, at the time of the frame that showed the three cards gone."""

    valid: bool
    t_ns: int


@value
class Super:
    t_ns: int


@value
class Undo:
    t_ns: int


@value
class End:
    t_ns: int
    left: int | None = None  # solo: the cards left on the table, when not those counted


@value
class Tick:
    """Only moves time on, so that timers can fire."""

    t_ns: int


Input = Press | Verdict | CameraVerdict | Super | Undo | End | Tick


def words(inp: Input) -> str:
    """The input as a replay script writes it, without its time: `press 2`, `valid`."""
    match inp:
        case Press(player=p):
            return f"press {p}"
        case Verdict(valid=v):
            return "valid" if v else "invalid"
        case CameraVerdict(valid=v):
            return "camera valid" if v else "camera invalid"
        case Super():
            return "super"
        case Undo():
            return "undo"
        case End(left=left):
            return "end" if left is None else f"end left={left}"
        case Tick():
            return "tick"
