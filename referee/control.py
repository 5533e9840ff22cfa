"""The page's writes to the daemon: their wire format, and the client that sends them.

The daemon owns the store, so the page's server (`referee web`, a process of its own)
never writes it: it asks the daemon (docs/design.md, "The page"), over a Unix stream socket
beside the store (paths.socket_path) that the daemon serves (daemon/control_socket.py).
Both ends read this module; `referee config --reset-page` asks the same way.

One request per connection, one line of JSON of at most REQUEST_MAX bytes, sent within
the daemon's READ_S; one line back:

    {"op": "name", "seat": 2, "name": "Ann"}   ->   {"ok": true}  or  {"error": "one line"}
    {"op": "rules", "values": {"pointout_s": 5}}   the next games' rules (config/next_rules.py)
    {"op": "filerules"}                            the settings file's again: phones' forgotten
    {"op": "newgame"}                              a new game, as SUPER after the end
    {"op": "clips", "game": 3}                     delete the clips of a game's calls
    {"op": "hint"}    ->   {"ok": true, "said": "there is a SET"}: is there a SET?
    {"op": "photo"}                                a phone's photo: the phones the camera
    {"op": "table"}   ->   {"ok": true, "said": {...}}: what the camera reads on the table

Each is one type of inbox.py's PageRequest, read here (`parse_request`) and written
(`wire`). An error with `"trouble": true` is the box's (it stopped, the disk refused, it
did not answer in time), not the request's: the same request may do later.
"""

import asyncio
import contextlib
import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .inbox import (
    DeleteClips,
    FileRules,
    Hint,
    NameSeat,
    NewGame,
    PageRequest,
    Photo,
    SetRules,
    Table,
)
from .names import check_name
from .units import ID_MAX, MAX_SEATS

REQUEST_MAX = 4096  # bytes: a name, the rule keys and a few words
ANSWER_S = 2.0  # the loop's answer: the name shown and on the disk (an SD card's stall)
# A socket's path is at most 107 bytes (sun_path); a longer one is reached through its
# folder's descriptor (/proc/self/fd/N/NAME), as long as the name itself is short.
SUN_PATH_MAX = 107
KEYS = {"seat", "name"}


class RequestError(ValueError):
    """A request that cannot be taken: str() says why, in one line."""


class NotRunning(Exception):
    """No daemon answered at the socket: str() says why, in one line."""


def parse_request(data: bytes) -> PageRequest:
    """A request's line, or RequestError saying what is wrong with it."""
    if len(data) > REQUEST_MAX:
        raise RequestError(f"a request is at most {REQUEST_MAX} bytes")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise RequestError("a request is UTF-8") from None
    except (ValueError, RecursionError):
        raise RequestError("a request is one line of JSON") from None
    if not isinstance(value, dict):
        raise RequestError("a request is a JSON object")
    rest = {k: v for k, v in value.items() if k != "op"}
    match value.get("op"):
        case "name":
            return name_request(rest)
        case "rules":
            return rules_request(rest)
        case "newgame":
            return new_game_request(rest)
        case "clips":
            return clips_request(rest)
        case "filerules":
            _no_keys(rest)
            return FileRules()
        case "hint":
            return hint_request(rest)
        case "photo":
            _no_keys(rest)
            return Photo()
        case "table":
            return table_request(rest)
    raise RequestError(
        'unknown "op": the box knows "name", "rules", "filerules", "newgame", "clips", "hint",'
        ' "photo" and "table"'
    )


def _no_keys(value: dict[str, Any]) -> None:
    """A request that takes nothing but its op; or RequestError."""
    if unknown := sorted(value):
        raise RequestError(f"unknown key {_shown(unknown[0])}: it takes none")


def name_request(value: dict[str, Any]) -> NameSeat:
    """`{"seat": N, "name": "..."}` checked, or RequestError: the page's server checks
    what it is sent too, before it asks."""
    if unknown := sorted(value.keys() - KEYS):
        raise RequestError(f"unknown key {_shown(unknown[0])}: give a seat and a name")
    seat, name = value.get("seat"), value.get("name")
    if not isinstance(seat, int) or isinstance(seat, bool):
        raise RequestError('"seat" must be a seat\'s number')
    if not 1 <= seat <= MAX_SEATS:
        raise RequestError(f"seat out of range: 1 to {MAX_SEATS}")
    if not isinstance(name, str):
        raise RequestError('"name" must be a string')
    try:
        return NameSeat(seat, check_name(name))
    except ValueError as err:
        raise RequestError(str(err)) from None


def rules_request(value: dict[str, Any]) -> SetRules:
    """`{"values": {...}}`, a JSON object of rule keys; or RequestError."""
    if unknown := sorted(value.keys() - {"values"}):
        raise RequestError(f"unknown key {_shown(unknown[0])}: give the values")
    values = value.get("values")
    if not isinstance(values, dict):
        raise RequestError('"values" must be a JSON object of rule keys')
    return SetRules(values)


def new_game_request(value: dict[str, Any]) -> NewGame:
    """`{}`: a new game takes nothing else; or RequestError."""
    if unknown := sorted(value.keys()):
        raise RequestError(f"unknown key {_shown(unknown[0])}: a new game takes none")
    return NewGame()


def hint_request(value: dict[str, Any]) -> Hint:
    """`{}`: a hint asks nothing else; or RequestError."""
    _no_keys(value)
    return Hint()


def table_request(value: dict[str, Any]) -> Table:
    """`{}`: what the camera sees asks nothing else; or RequestError."""
    _no_keys(value)
    return Table()


def clips_request(value: dict[str, Any]) -> DeleteClips:
    """`{"game": N}`: the game whose clips go; or RequestError."""
    if unknown := sorted(value.keys() - {"game"}):
        raise RequestError(f"unknown key {_shown(unknown[0])}: give the game")
    game = value.get("game")
    if not isinstance(game, int) or isinstance(game, bool) or not 1 <= game <= ID_MAX:
        raise RequestError(f'"game" must be a game\'s id, 1 to {ID_MAX}')
    return DeleteClips(game)


def _shown(text: str) -> str:
    shown = json.dumps(text)
    return shown if len(shown) <= 30 else f"{shown[:30]}..."


def wire(request: PageRequest) -> dict[str, Any]:
    """The request as its line's JSON object: its op, then its fields."""
    return {"op": request.op, **dataclasses.asdict(request)}


@contextlib.contextmanager
def socket_address(path: Path) -> Iterator[str]:
    """The path as a socket's address: itself, or through its folder's descriptor when
    it is too long for one."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        yield str(path)
        return
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{path.name}"
    finally:
        os.close(folder)


async def ask(path: Path, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The daemon's answer to one request, within timeout_s; NotRunning when none comes."""
    try:
        with socket_address(path) as address:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(address, limit=REQUEST_MAX), timeout_s
            )
    except (FileNotFoundError, ConnectionRefusedError, TimeoutError):
        raise NotRunning("the referee is not running") from None
    except OSError as err:
        raise NotRunning(f"the referee cannot be reached: {err.strerror}") from None
    try:
        writer.write(json.dumps(request).encode() + b"\n")
        line = await asyncio.wait_for(reader.readline(), timeout_s)
    except TimeoutError:
        raise NotRunning(f"the referee did not answer within {timeout_s:g} s") from None
    except (OSError, ValueError):  # ValueError: a line longer than the limit
        raise NotRunning("the referee did not answer") from None
    finally:
        writer.close()
    try:
        answer = json.loads(line)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise NotRunning("the referee did not answer")
    return answer
