"""`referee` and `python -m referee`.

`referee run` catches the signals it handles before it imports anything else: one that
comes while it starts must not end it (referee/linux/signals.py). A command the daemon started
(`run --web`'s page) makes sure first that it dies with the daemon (referee/linux/children.py).
"""

import sys

from .linux.signals import catch


def main() -> int:
    if sys.argv[1:2] == ["run"]:
        catch()
    from .linux.children import die_with_parent  # after catch: nothing is imported before it

    die_with_parent()
    from .cli import main as run_command  # imported only now: it takes a while

    return run_command()


if __name__ == "__main__":
    sys.exit(main())
