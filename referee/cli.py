"""The `referee` command: run, replay, state, check-buttons (DESIGN.md, "Command line")."""

import argparse
import json
import sys
from pathlib import Path

from .config import ConfigError, example_config, load_config, render_config
from .rules import ScriptError, parse_script, replay, report
from .store import Store, StoreError, default_store_path

EXIT_BAD_INPUT = 2


def _replay(args: argparse.Namespace) -> int:
    path: Path = args.script
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        print(f"{path}: cannot read the script: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        script = parse_script(text)
    except ScriptError as err:
        print(err.where(str(path)), file=sys.stderr)
        return EXIT_BAD_INPUT
    state = replay(script.settings, (inp for _, inp in script.inputs), lobby=script.lobby)
    print(json.dumps(report(script.settings, state), indent=2))
    return 0


def _state(args: argparse.Namespace) -> int:
    path: Path = args.store or default_store_path(reading=True)
    try:
        with Store.open_readonly(path) as store:
            game = store.latest_game()
    except StoreError as err:
        print(err, file=sys.stderr)
        return EXIT_BAD_INPUT
    if game is None:
        print(f"{path}: no game in this store yet", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(json.dumps(report(game.settings, game.state()), indent=2))
    return 0


def _config(args: argparse.Namespace) -> int:
    if args.example:
        print(example_config(), end="")
        return 0
    try:
        config = load_config(args.config)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return EXIT_BAD_INPUT
    print(render_config(config), end="")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="referee", description=__doc__)
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
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
    cfg = commands.add_parser("config", help="check the settings file and print the settings")
    which = cfg.add_mutually_exclusive_group()
    which.add_argument("--config", type=Path, metavar="FILE", help="the settings file to check")
    which.add_argument("--example", action="store_true", help="print every key and its default")
    cfg.set_defaults(func=_config)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
