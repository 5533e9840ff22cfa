"""referee: the software of a box that referees the card game SET at a real table."""

import argparse
import contextlib
import json
import logging
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from . import __version__
from .config import Config, example_config, load_config, render_config, with_phone
from .errors import (
    EXIT_BAD_INPUT,
    RefereeError,
    ScriptFileError,
    StartError,
    StoreError,
    StoreInUse,
    UnsavedInputs,
)
from .linux.files import looked_at
from .rules import ScriptError, read_script, replay, report
from .rules.script import KINDS, LAST_S
from .store.paths import default_store_path
from .store.store import Store
from .terminal_log import StderrLog, held_logs, stderr_to_log

SWITCH_INTERVAL_S = 0.001
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

log = logging.getLogger(__name__)


def _log_to(handler: logging.Handler) -> None:
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)


def _run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    store = args.store or config.store_path or default_store_path()
    # The sound's thread waits for the GIL while the main loop draws: at Python's 5 ms a
    # planned pip could start 5 ms late; the inputs have no thread left to wait.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    _log_to(StderrLog())  # the journal, under systemd
    # First, while this process runs no other thread (a fork then is safe) and has loaded
    # little but what the clips' cutter needs: it shares those pages with the daemon, and
    # holds no copy of what the daemon loads and writes later (early.fork_cutter).
    from .audio.early import fork_cutter

    cutter = fork_cutter(config.audio)
    # Imported here: only `run` needs the screens, the inputs and the page's process.
    from .daemon import realtime
    from .daemon.app import App, RunOptions
    from .daemon.page_process import PageProcess

    with contextlib.ExitStack() as running:
        if cutter is not None:  # the clips' writer stops it; if none was made, this does
            from .audio.clip_writer import STOP_S

            running.callback(cutter.stop, STOP_S)
        _put_back_waiting(store)
        # Nothing may write on a terminal that shows the game: what is logged while it
        # opens waits, and then goes where stderr goes for as long as the game is shown.
        release = running.enter_context(held_logs())
        options = RunOptions(config, store, input=args.input, display=args.display)
        app = App(options, cutter=cutter)
        if "terminal" in app.display.split("+"):  # alone, or beside a window or kms
            running.enter_context(stderr_to_log(store))
        release()
        if (listen := _page_listen(args, config)) == "off":
            pass
        elif args.web is None:  # served by a process of its own: referee-web.service
            app.page_at(listen, elsewhere=True)
        else:
            page = running.enter_context(PageProcess(store, args.config, listen, app.inbox.put))
            app.messages.append(page.said)
            if page.listening is not None:
                app.page_at(page.listening)
        # Last, so that every thread and process started so far stays at normal priority.
        log.info("%s", realtime.run_first(0, app.speaker.thread_id))
        code = app.run()
    if app.unsaved is not None:
        raise app.unsaved
    return code


def _page_listen(args: argparse.Namespace, config: Config) -> str:
    """Where the page is served: `run --web`'s HOST:PORT (its process beside the daemon's),
    else `[web] listen` (referee-web.service, on a box); "off" for nowhere."""
    from .config.pi_header import is_raspberry_pi
    from .page_socket import resolve_listen

    return resolve_listen(args.web or config.web.listen, on_a_pi=is_raspberry_pi())


def _put_back_waiting(store: Path) -> None:
    """Inputs a full or failing disk refused at the last exit go back in before the game
    resumes: a game resumed without them could not take them afterwards."""
    from .store import rescue

    for found in rescue.waiting_for(store):
        try:
            kept = rescue.read(found)
            with Store.open(store) as opened:
                game, count = rescue.recover(kept, opened, found)
        except ScriptFileError as err:
            log.warning("%s", err)
            continue
        except StoreInUse:
            raise
        except StoreError as err:
            raise UnsavedInputs(
                f"{found}: inputs {store} could not take at the last exit; it still cannot"
                f" ({err.reason}): free it, then start again"
            ) from None
        said = f"{found}: put back {_inputs(count)} into game {game} of {store}"
        if removed := _removed(found):
            log.warning("%s; %s", said, removed)  # the next start puts back nothing again
        else:
            log.info("%s", said)


def _recover(args: argparse.Namespace) -> int:
    from .store import rescue

    path: Path = args.file
    kept = rescue.read(path)
    store_path: Path = args.store or kept.store
    with Store.open(store_path) as store:
        game, count = rescue.recover(kept, store, path)
    removed = _removed(path) or "the file is removed"
    print(f"{path}: put back {_inputs(count)} into game {game} of {store_path}; {removed}")
    return 0


def _inputs(count: int) -> str:
    return f"{count} input{'' if count == 1 else 's'}"


def _removed(path: Path) -> str | None:
    """Remove a rescue file put back; what to say if it cannot be (a folder of root's, a
    read-only disk): it does no harm, putting it back again adds nothing."""
    try:
        path.unlink()
    except OSError as err:
        return f"the file cannot be removed ({err.strerror}): remove it by hand"
    return None


def _replay(args: argparse.Namespace) -> int:
    path: Path = args.script
    try:
        # Read as it is played: a script of 100,000 inputs is never all in memory. Bytes
        # that are not UTF-8 are kept, as surrogates, for their line to be named.
        with path.open(encoding="utf-8", errors="surrogateescape") as lines:
            script, inputs = read_script(_utf8(lines))
            played = replay(script.settings, (inp for _, inp in inputs), lobby=script.lobby)
            state = played.alone()  # no undo history to report: its memory goes at once
            del played
    except OSError as err:
        raise ScriptFileError(f"{path}: cannot read the script: {err.strerror or err}") from None
    except ScriptError as err:
        raise ScriptFileError(err.where(str(path))) from None
    _print_report(report(script.settings, state))
    return 0


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of a byte


def _utf8(lines: Iterable[str]) -> Iterator[str]:
    """The lines, each checked to have been UTF-8: ScriptError names the first that was not."""
    for number, line in enumerate(lines, start=1):
        if number == 1 and line.startswith(("\udcff\udcfe", "\udcfe\udcff")):
            raise ScriptError(number, "saved as UTF-16: save the script as UTF-8")
        if byte := _NOT_UTF8.search(line):
            code = ord(byte[0]) - 0xDC00
            raise ScriptError(number, f"byte 0x{code:02X} is not UTF-8: save the script as UTF-8")
        yield line


def _print_report(body: dict[str, Any]) -> None:
    json.dump(body, sys.stdout, indent=2)  # written as it is made
    print()


def _store_options(command: argparse.ArgumentParser) -> None:
    """--config and --store, as `run` takes them: for the commands that read its store."""
    command.add_argument(
        "--config", type=_absolute, metavar="FILE", help="the settings file, as for run"
    )
    command.add_argument(
        "--store",
        type=_absolute,
        metavar="FILE",
        help="default: the settings' [store] path, as for run",
    )


def _store_of(args: argparse.Namespace) -> Path:
    """The store `run` would use with the same settings."""
    path: Path = (
        args.store or load_config(args.config).store_path or default_store_path(reading=True)
    )
    return path


def _state(args: argparse.Namespace) -> int:
    path = _store_of(args)
    with Store.open_readonly(path) as store:
        game = store.latest_game()
    if game is None:
        print(f"{path}: no game in this store yet", file=sys.stderr)
        return EXIT_BAD_INPUT
    _print_report(game.report(game.state().alone()))
    return 0


def _history(args: argparse.Namespace) -> int:
    # Imported here: only `history` needs them.
    from .history import export
    from .history.book import History
    from .history.stats import stats
    from .history.summary import player_of

    history = History(_store_of(args))  # its summaries in memory: the page's file is its own
    # A few hundred games' inputs in memory at a time.
    while not history.count(budget=500).done:
        pass
    if args.csv == "games":
        export.write_csv(sys.stdout, export.GAME_COLUMNS, export.game_rows(history.cache))
    elif args.csv == "stats":
        players = stats(history.cache)
        export.write_csv(sys.stdout, export.STATS_COLUMNS, export.stats_rows(players))
    elif args.csv == "calls":
        # A game at a time: a store's every timeline would not fit in memory at once.
        ids = [i for (i,) in history.cache.query("SELECT id FROM games ORDER BY id")]
        found = (history.game(i) for i in ids)
        lines = (one for one in found if one is not None)
        export.write_csv(sys.stdout, export.CALL_COLUMNS, export.call_rows(lines))
    before = None
    while args.csv is None:
        page = history.page(before, 100)
        for g in page.games:
            outcome = g.result or g.phase
            seats = ", ".join(
                f"{player_of(g.game, t.seat)} {t.points}{' (won)' if t.won else ''}"
                for t in g.seats
            )
            when = g.game.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
            print(f"{g.game.id:>5}  {when}  {g.game.settings.rules:<9}  {outcome:<15}  {seats}")
        if page.next is None:
            break
        before = page.next
    return 0


def _web(args: argparse.Namespace) -> int:
    # Imported here: only `web` needs the server.
    from .config.pi_header import is_raspberry_pi
    from .page_socket import bind, host_port, inherited, resolve_listen
    from .store.mark import marked
    from .store.paths import pin_path
    from .store.pin import ensure_pin
    from .web.serve import serve

    _log_to(StderrLog())
    config = load_config(args.config)
    sock = inherited()  # `referee run --web` bound it (and names it in --listen)
    listen = resolve_listen(args.listen or config.web.listen, on_a_pi=is_raspberry_pi())
    if sock is None:
        if listen == "off":
            log.info("[web] listen is off: no page served")
            return 0
        sock = bind(listen)
    store = _store_of(args)
    ensure_pin(pin_path(store))  # made now, for the box to show before a phone asks
    with marked(store, host_port(sock)):  # for the box's lobby to show where
        serve(store, pin_path(store), sock, config.game, listen)
    return 0


def _pin(args: argparse.Namespace) -> int:
    from .store.paths import pin_path
    from .store.pin import ensure_pin, new_pin

    path = pin_path(_store_of(args))
    print(new_pin(path) if args.new else ensure_pin(path))
    return 0


def _listen(args: argparse.Namespace) -> int:
    # Imported here: numpy is for this command alone.
    from .audio.onsets import Onset, OnsetFinder
    from .audio.wav import mono_pieces
    from .audio.wavfile import WavFile

    path: Path = args.file
    with WavFile(path) as wav:  # AudioFileError: one line, before anything is printed
        rate = wav.format.rate
        finder = OnsetFinder(rate)

        def onsets() -> Iterator[Onset]:
            """A piece at a time, each onset printed once found: a file of any length
            is read in the memory of a piece of it and the detector's block."""
            for piece in mono_pieces(wav):
                yield from finder.feed(piece)
            yield from finder.end()

        found = onsets()
        if args.json:  # as json.dump writes {"sample_rate": N, "onsets": [...]}
            print(f'{{"sample_rate": {rate}, "onsets": [', end="")
            for n, o in enumerate(found):
                item = {"t": round(o.t, 6), "sample": o.sample, "band": o.band}
                item["db"] = round(o.strength_db, 1)
                print(", " * bool(n) + json.dumps(item), end="")
            print("]}")
            return 0
        print(f"{path}: {wav.format.frames / rate:.3f} s at {rate} Hz")
        count = 0
        for o in found:
            print(f"{o.t:10.4f} s  sample {o.sample:>9}  {o.band:<8}  +{o.strength_db:.1f} dB")
            count += 1
        print(f"{count} voice onset(s)")
    return 0


def _look(args: argparse.Namespace) -> int:
    # Imported here: OpenCV and the classifier are for this command alone.
    try:
        from .vision.look import look
    except ImportError as err:
        print(
            f"referee look: OpenCV is not installed ({err.name}): install referee[camera]",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    return look(args.photos, as_json=args.json)


def _clips(args: argparse.Namespace) -> int:
    # Imported here: numpy is for the sound's commands alone.
    from .audio.clips import SNAPSHOT, ClipStore, Damaged
    from .store.paths import clips_folder

    folder = clips_folder(_store_of(args))
    clips = ClipStore(folder, max_bytes=0)  # only read or deleted: nothing to make room for
    if args.delete and args.game is None and not args.all:
        print("clips --delete: name a game (--game N) or --all", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:  # a folder beside the store, not one the user named: it may be out of their reach
        if args.delete:
            try:
                gone = clips.delete(args.game)
            except OSError as err:  # a clip that would not go: every other one is gone
                if err.filename is None:
                    raise
                print(f"{err.filename}: not deleted: {err.strerror or err}", file=sys.stderr)
                return 1
            print(f"{folder}: {gone}")
            return 0
        kept = clips.clips(args.game)
        snapshots = clips.snapshots(args.game)
    except OSError as err:
        print(f"{folder}: cannot read the clips: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not kept and not snapshots:
        print(f"{folder}: no clips" + (f" of game {args.game}" if args.game is not None else ""))
        return 0
    for k in kept:
        if isinstance(k, Damaged):
            minutes, seconds = divmod(k.call_ns / 1e9, 60)
            call = f"call at {minutes:.0f}:{seconds:04.1f}"
            print(f"game {k.game}, {call}: {k.name}: damaged, {k.why}")
            continue
        clip = k.clip
        minutes, seconds = divmod(clip.call_ns / 1e9, 60)
        first = clip.presses[0].sample if clip.presses else 0
        presses = ", ".join(
            f"P{m.player} {(m.sample - first) / clip.sample_rate * 1000:+.1f} ms"
            for m in clip.presses
        )
        print(
            f"game {clip.game}, call at {minutes:.0f}:{seconds:04.1f}: {k.sound.name},"
            f" {k.samples / clip.sample_rate:.1f} s; presses {presses or 'none'};"
            f" {len(clip.onsets)} voice onset(s)"
            + (f"; {len(clip.gaps)} gap(s)" if clip.gaps else "")
        )
    for snap in snapshots:  # the camera's, at each call's first press
        minutes, seconds = divmod(snap.call_ns / 1e9, 60)
        said = f"damaged, {snap.why}" if isinstance(snap, Damaged) else f"{len(snap.jpeg)} bytes"
        call = f"game {snap.game}, call at {minutes:.0f}:{seconds:04.1f}"
        print(f"{call}: {snap.name}{SNAPSHOT}, snapshot of the table: {said}")
    return 0


def _config(args: argparse.Namespace) -> int:
    if args.example:
        print(example_config(), end="")
        return 0
    config = load_config(args.config)
    # The rule keys a phone set, which override the file's: in the store `run` would use.
    store = args.store or config.store_path or default_store_path(reading=True)
    if args.reset_page:
        return _reset_page(store)
    try:
        with Store.open_readonly(store) as opened:
            phone = opened.next_rules()
    except StoreError as err:
        phone = {}
        if looked_at(store):  # no store yet: no phone has set anything
            print(f"referee: no rules a phone set: {err}", file=sys.stderr)
    rules, trouble = with_phone(config.game, phone)
    if trouble is not None:
        print(f"referee: {trouble}", file=sys.stderr)
    print(render_config(config, named=args.config is not None, rules=rules, store=store), end="")
    return 0


def _reset_page(store: Path) -> int:
    """The rule keys a phone set are forgotten: by the running referee, which owns the
    store and shows it (its control socket, as the page asks it), else in the store, which
    `run` reads at its start."""
    import asyncio

    from .control import ANSWER_S, NotRunning, ask, wire
    from .inbox import FileRules
    from .store.paths import socket_path

    try:
        answer = asyncio.run(ask(socket_path(store), wire(FileRules()), ANSWER_S + 1))
    except NotRunning as err:
        why = str(err)
    else:
        if "error" in answer:  # the box's trouble (a full disk): its screen says so too
            print(f"referee: {store}: {answer['error']}", file=sys.stderr)
            return 1
        print(f"{store}: the rules a phone set are forgotten: the referee plays by the file's")
        return 0
    if not store.exists():  # no store yet: no phone has set anything (and none is made)
        print(f"{store}: no such store: no rules a phone set")
        return 0
    try:
        with Store.open(store) as opened:
            try:
                phone = ", ".join(f"{k} {v}" for k, v in opened.next_rules().items())
            except StoreError:  # damaged: what was there is gone all the same
                phone = "unreadable"
            opened.set_next_rules({})
    except StoreInUse as err:  # a referee that did not answer, or another program
        raise StoreError(store, f"{why}, and the store is {err.reason}") from None
    forgotten = f"forgotten ({phone})" if phone else "none: nothing to forget"
    print(f"{store}: {why}; the rules a phone set: {forgotten}")
    return 0


def _check_buttons(args: argparse.Namespace) -> int:
    from .daemon.check_buttons import ButtonCheck
    from .daemon.devices import open_devices, pick_input
    from .inbox import Inbox
    from .units import MAX_SEATS

    config = load_config(args.config)
    _log_to(StderrLog())
    display = "terminal" if sys.stdin.isatty() else "none"
    kind = pick_input(args.input)
    with contextlib.closing(Inbox()) as inbox:
        try:
            # Every buzzer the pin map wires, the seats the rules leave empty too.
            devices = open_devices(config, kind, inbox, display=display, seats=MAX_SEATS)
        except StartError as err:
            if kind != "gpio" or config.game.players == MAX_SEATS:
                raise
            # A pin of an empty seat may serve something else (a HAT screen's touch). Said
            # once the seats in play opened: else their own reason is the one line.
            devices = open_devices(config, kind, inbox, display=display)
            print(f"referee: not checking the empty seats: {err}", file=sys.stderr)
        try:
            return ButtonCheck(config, devices, sys.stdout).run()
        finally:
            devices.close()


SCRIPT_HELP = f"""\
A replay script is a text file: an optional first line `config KEY=VALUE ...` with
the rule settings (one with players=N skips the lobby: seats 1 to N play; without it
the game starts in the lobby with every seat open), then one input a line, each with
its time in seconds since the start, never going back:

    config players=4 rules=super tie_ms=0
    0.000 press 2
    0.0123 press 4
    1.5 valid
    20 tick        # only moves time on, so that timers can fire

Inputs: {", ".join(KINDS)} (press N: player N's buzzer; camera valid or camera invalid:
the camera's verdict, with its cards or not; seen 1rSo 2gTd 3pOs?: the cards the camera
saw taken, 1rSo a 1 red solid oval, ? unsure; end left=N: the cards left).
Times run from 0 to {LAST_S:,} s, read to the nanosecond; numbers are plain digits
(a time or a duration may have a point and an exponent: 0.5, 1e-05). UTF-8 text.
A bad line stops the replay with exit status {EXIT_BAD_INPUT} and FILE:LINE: what is wrong.
The rules, the settings and every decision the box takes: docs/rules.md.
"""


def _absolute(text: str) -> Path:
    # lgpio changes the working directory when it loads: a relative path must not move.
    return Path(text).absolute()


def _display(text: str) -> str:
    """Each display's name, as argparse checks a value; which may be joined with `+`,
    devices.joined_displays says (a StartError, in one line, once `run` starts)."""
    for part in text.split("+"):
        kind, _, card = part.partition(":")
        if kind in ("auto", "window", "kms", "terminal", "none") and (not card or kind == "kms"):
            continue
        if part == text:
            use = "use auto, window, kms, kms:/dev/dri/cardN, terminal or none"
            raise argparse.ArgumentTypeError(f"{text!r}: {use}")
        use = "join window, kms or kms:/dev/dri/cardN, and terminal with +"
        raise argparse.ArgumentTypeError(f"{part!r} in {text!r}: {use}")
    return text


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="referee", description=__doc__, epilog="`referee COMMAND --help` says more."
    )
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    top.set_defaults(func=lambda args: _usage(top))
    commands = top.add_subparsers(title="commands", dest="command", metavar="COMMAND")
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
        type=_display,
        metavar="auto|window|kms[:CARD]|terminal|none",
        help="auto picks a window on a desktop, else the console's screen (kms: the first"
        " card with a screen connected) where there is one, else the terminal. Join"
        " several with + to show the game on each: window+terminal, kms+terminal (the"
        " keyboard is then the window's, else the console's)",
    )
    run.add_argument(
        "--web",
        nargs="?",
        const="",
        metavar="HOST:PORT",
        help="serve the page on the phones too, at HOST:PORT (default: [web] listen)",
    )
    run.set_defaults(func=_run)
    rep = commands.add_parser(
        "replay",
        help="play a script through the rules and print the state",
        description="Play a replay script through the rules; print the state as JSON.",
        epilog=SCRIPT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("script", type=Path, metavar="SCRIPT", help="a replay script (see below)")
    rep.set_defaults(func=_replay)
    sta = commands.add_parser("state", help="print the latest game in the store as replay does")
    _store_options(sta)
    sta.set_defaults(func=_state)
    check = commands.add_parser(
        "check-buttons", help="name each button as it is pressed; cycle the LEDs and tones"
    )
    check.add_argument("--config", type=_absolute, metavar="FILE", help="the settings file")
    check.add_argument(
        "--input", default="auto", metavar="auto|gpio|keyboard|serial[:DEVICE]", help="as for run"
    )
    check.set_defaults(func=_check_buttons)
    rec = commands.add_parser(
        "recover",
        help="put inputs a full or failing disk refused back into the store",
        description="Put back into the store the inputs a full or failing disk refused:"
        " `referee run` wrote them to FILE at exit and named it. Exactly the inputs the"
        " store's game lacks are appended, once; then FILE is removed. A FILE cut short or"
        " damaged (it checks itself) puts back nothing and is kept. `run` does this by"
        " itself when it starts and finds FILE.",
    )
    rec.add_argument("file", type=_absolute, metavar="FILE", help="the file `run` named")
    rec.add_argument(
        "--store", type=_absolute, metavar="FILE", help="default: the store FILE names"
    )
    rec.set_defaults(func=_recover)
    lis = commands.add_parser(
        "listen",
        help="print the voice onsets in a recording (a WAV file)",
        description='Print the voice onsets ("Set!" shouts) the box\'s detector finds in a'
        " WAV file (PCM, 8 to 32 bits, 1 to 64 channels, 1 to 768 kHz; read a piece at a time,"
        " whatever its length): to check where the microphone hears"
        " the table best. Each onset: its time in seconds from the file's start, its sample,"
        " the band it rose in (sibilant 5-10 kHz, voiced 150-1000 Hz, low 100-300 Hz) and by"
        " how much.",
    )
    lis.add_argument("file", type=_absolute, metavar="FILE", help="a WAV recording")
    lis.add_argument(
        "--json",
        action="store_true",
        help='print {"sample_rate": N, "onsets": [{"t": SECONDS, ...}, ...]}, sorted by t',
    )
    lis.set_defaults(func=_listen)
    loo = commands.add_parser(
        "look",
        help="read the SET cards in photos: each card, how sure, and the SETs",
        description="Find and read the SET cards in each photo (JPEG or PNG), as the box's"
        " camera reads the table: to place and aim the camera, or to check a layout from a"
        " phone's photo. A card read unsurely (marked ?) is in no SET. A photo that cannot"
        " be read is named with what is wrong, and the exit status is 2.",
    )
    loo.add_argument("photos", type=_absolute, nargs="+", metavar="PHOTO", help="a photo")
    loo.add_argument(
        "--json",
        action="store_true",
        help='one line a photo: {"cards": [{"number": 1, "color": "red", "shading": "solid",'
        ' "shape": "oval", "box": [x, y, w, h], "sure": true}, ...], "sets": [[i, j, k], ...]};'
        " a box in the photo's own pixels, as it is shown (turned as its EXIF says)",
    )
    loo.set_defaults(func=_look)
    cli = commands.add_parser(
        "clips",
        help="list the calls' clips (the microphone's) and snapshots (the camera's), or delete",
        description="The clips of the calls, kept beside the store: each with its game, its"
        " call's time in the game, its presses (their offset from the first) and its voice"
        " onsets; then the camera's snapshot of each call. --delete removes those of a game,"
        " or all of them.",
    )
    _store_options(cli)
    cli.add_argument("--game", type=int, metavar="N", help="only the clips of game N")
    cli.add_argument("--all", action="store_true", help="with --delete: every game's clips")
    cli.add_argument("--delete", action="store_true", help="delete them")
    cli.set_defaults(func=_clips)
    his = commands.add_parser(
        "history",
        help="list every game in the store, or write its games, calls or stats as CSV",
        description="Every game in the store, newest first: when, the rules, how it ended and"
        " each player's points; or, with --csv, the page's exports (docs/web.md, Exports),"
        " every game's, to stdout.",
    )
    _store_options(his)
    his.add_argument("--csv", choices=["games", "calls", "stats"], help="write this CSV")
    his.set_defaults(func=_history)
    web = commands.add_parser(
        "web",
        help="serve the page on the table's phones (read-only beside the daemon)",
        description="Serve the live page (docs/web.md): the latest game of the store, read"
        " as `referee state` reads it, beside the daemon or without it. Writes need the"
        " PIN (`referee pin`). SIGTERM or Ctrl-C ends it.",
    )
    _store_options(web)
    web.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help='default: the settings\' [web] listen; "off" serves nothing',
    )
    web.set_defaults(func=_web)
    pin = commands.add_parser(
        "pin",
        help="print the PIN a phone needs to write (made the first time)",
        description="Print the box's PIN, kept beside the store, readable only by its owner;"
        " made the first time. --new makes another: the sessions the old one opened end.",
    )
    _store_options(pin)
    pin.add_argument("--new", action="store_true", help="replace the PIN with a new one")
    pin.set_defaults(func=_pin)
    cfg = commands.add_parser(
        "config",
        help="check the settings file and print the settings in effect",
        description="Check the settings file and print the settings in effect, as a file that"
        " loads back into them: the rule keys a phone set (kept in the store) marked where"
        " they override the file's.",
    )
    which = cfg.add_mutually_exclusive_group()
    which.add_argument("--config", type=Path, metavar="FILE", help="the settings file to check")
    which.add_argument("--example", action="store_true", help="print every key and its default")
    cfg.add_argument(
        "--store",
        type=_absolute,
        metavar="FILE",
        help="where the rules a phone set are kept (default: as for run)",
    )
    cfg.add_argument(
        "--reset-page",
        action="store_true",
        help="forget the rule keys a phone set on the page: the next game plays by the file's"
        " (through the running referee, else in the store)",
    )
    cfg.set_defaults(func=_config)
    return top


def _usage(top: argparse.ArgumentParser) -> int:
    top.print_help()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except RefereeError as err:  # each says what is wrong, and where, in one line
        print(err, file=sys.stderr)
        return err.exit_status
    return code


if __name__ == "__main__":
    sys.exit(main())
