"""`referee` and `python -m referee`.

`referee run` catches the signals it handles before it imports anything else: one that
comes while it starts must not end it (referee/signals.py).
"""

import sys

from .signals import catch


def main() -> int:
    if sys.argv[1:2] == ["run"]:
        catch()
    from .cli import main as run_command  # imported only now: it takes a while

    return run_command()


if __name__ == "__main__":
    sys.exit(main())
