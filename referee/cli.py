"""The `referee` command: run, replay, state, check-buttons (DESIGN.md, "Command line")."""

import argparse
import contextlib
import json
import logging
import logging.handlers
import sys
from pathlib import Path

from .config import ConfigError, example_config, load_config, render_config
from .rules import ScriptError, Settings, State, read_script, replay, report
from .store import Store, StoreError, default_store_path

EXIT_BAD_INPUT = 2
SWITCH_INTERVAL_S = 0.001
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _log_to(handler: logging.Handler) -> None:
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)


def _run(args: argparse.Namespace) -> int:
    # Imported here: only `run` needs the screens and the inputs.
    from .app import App, RunOptions
    from .devices import StartError

    config = load_config(args.config)
    store = args.store or config.store_path or default_store_path()
    # Input threads (gpiozero's callbacks, the serial reader) wait for the GIL while the
    # main loop runs Python; at Python's 5 ms a fifth of them came later than the settle
    # window covers while the screen drew (bench/fairness.py). The inputs budget this.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    _log_to(logging.StreamHandler(sys.stderr))  # the journal, under systemd
    try:
        app = App(RunOptions(config, store, input=args.input, display=args.display))
    except (StartError, StoreError) as err:
        logging.getLogger("referee").error("cannot start: %s", err)
        return EXIT_BAD_INPUT
    if app.display == "terminal":
        # Log lines would tear the terminal's picture: they go beside the store.
        log_file = store.with_name("referee.log")
        print(f"referee: logging to {log_file}", file=sys.stderr)
        _log_to(logging.handlers.RotatingFileHandler(log_file, maxBytes=1_000_000, backupCount=1))
    return app.run()


def _replay(args: argparse.Namespace) -> int:
    path: Path = args.script
    try:
        # Read as it is played: a script of 100,000 inputs is never all in memory.
        with path.open(encoding="utf-8") as lines:
            script, inputs = read_script(lines)
            played = replay(script.settings, (inp for _, inp in inputs), lobby=script.lobby)
            state = played.alone()  # no undo history to report: its memory goes at once
            del played
    except (OSError, UnicodeDecodeError) as err:
        print(f"{path}: cannot read the script: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ScriptError as err:
        print(err.where(str(path)), file=sys.stderr)
        return EXIT_BAD_INPUT
    _print_report(script.settings, state)
    return 0


def _print_report(settings: Settings, state: State) -> None:
    json.dump(report(settings, state), sys.stdout, indent=2)  # written as it is made
    print()


def _state(args: argparse.Namespace) -> int:
    path: Path = args.store or default_store_path(reading=True)
    with Store.open_readonly(path) as store:
        game = store.latest_game()
    if game is None:
        print(f"{path}: no game in this store yet", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print_report(game.settings, game.state().alone())
    return 0


def _config(args: argparse.Namespace) -> int:
    if args.example:
        print(example_config(), end="")
        return 0
    config = load_config(args.config)
    print(render_config(config), end="")
    return 0


def _check_buttons(args: argparse.Namespace) -> int:
    from .app import is_raspberry_pi, pick_input
    from .check_buttons import ButtonCheck
    from .devices import StartError, open_input, open_lights, open_speaker

    config = load_config(args.config)
    _log_to(logging.StreamHandler(sys.stderr))
    display = "terminal" if sys.stdin.isatty() else "none"
    with contextlib.ExitStack() as opened:
        try:
            source = open_input(pick_input(args.input), config, display=display, stdin_fd=None)
            opened.callback(source.close)
            lights = open_lights(config, source)
            if lights is not None:
                opened.callback(lights.close)
            speaker = open_speaker(config, source, desktop=not is_raspberry_pi())
            opened.callback(speaker.close)
        except StartError as err:
            print(f"referee: {err}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return ButtonCheck(config, source, lights, speaker, sys.stdout).run()


def _absolute(text: str) -> Path:
    # lgpio changes the working directory when it loads: a relative path must not move.
    return Path(text).absolute()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="referee", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="referee a game at the table (the daemon)")
    run.add_argument("--config", type=_absolute, metavar="FILE", help="the settings file")
    run.add_argument("--store", type=_absolute, metavar="FILE", help="the ledger (SQLite)")
    run.add_argument(
        "--input",
        default="auto",
        metavar="auto|gpio|keyboard|serial[:DEVICE]",
        help="where the buttons are: auto picks GPIO on a Raspberry Pi, else the keyboard",
    )
    run.add_argument(
        "--display",
        default="auto",
        choices=["auto", "window", "terminal", "none"],
        help="auto picks a window where there is a screen, else the terminal",
    )
    run.set_defaults(func=_run)
    rep = commands.add_parser("replay", help="play a script through the rules and print the state")
    rep.add_argument("script", type=Path, metavar="SCRIPT")
    rep.set_defaults(func=_replay)
    sta = commands.add_parser("state", help="print the latest game in the store as replay does")
    sta.add_argument(
        "--store",
        type=Path,
        metavar="FILE",
        help="default: $STATE_DIRECTORY/referee.db, else in the user's data directory",
    )
    sta.set_defaults(func=_state)
    check = commands.add_parser(
        "check-buttons", help="name each button as it is pressed; cycle the LEDs and tones"
    )
    check.add_argument("--config", type=_absolute, metavar="FILE", help="the settings file")
    check.add_argument(
        "--input", default="auto", metavar="auto|gpio|keyboard|serial[:DEVICE]", help="as for run"
    )
    check.set_defaults(func=_check_buttons)
    cfg = commands.add_parser("config", help="check the settings file and print the settings")
    which = cfg.add_mutually_exclusive_group()
    which.add_argument("--config", type=Path, metavar="FILE", help="the settings file to check")
    which.add_argument("--example", action="store_true", help="print every key and its default")
    cfg.set_defaults(func=_config)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except (ConfigError, StoreError) as err:  # each says what is wrong, and where, in one line
        print(err, file=sys.stderr)
        return EXIT_BAD_INPUT
    return code


if __name__ == "__main__":
    sys.exit(main())
