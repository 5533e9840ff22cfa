"""`referee web`'s memory once it has counted the stats of a store of many games.

    .venv/bin/python bench/stats.py [--games 2000 ...] [--baseline-games 40] [--calls 50]

Stores in a temporary folder, written as the box writes its games: the baseline's
(--baseline-games) and each large one (--games, one or more sizes). Each game is
tests/tables.py's table_game (seeded: every run writes the same games), `super` with
four seats, about four inputs a call (--calls 50: some 200 inputs, a long evening's
game), its seats named from a table of PLAYERS regulars. On each store the real `referee
web` (bench/web.py's `serving`: its own process, uvicorn) is asked for `/api/stats`
until it has counted every game (a 503 that says how far it came, asked again at once
rather than after its Retry-After: the memory is the same, the run shorter), then
RESERVED more times, with the exports the cache answers too (EXPORTS). Its RSS (/proc's
VmRSS) is taken at rest (SETTLE_S after the last answer): before the first request, once
counted, and after the stats are served again; and the highest it reached (VmHWM).
Beside it: the stats' answer and the page's cache file (referee/history/cache.py) on the
disk.

Target (issue 19): the page's part within 40 MB. The exit status is 1 when a large
store's server, at rest or at its highest, is over it.
"""

import argparse
import json
import random
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from machine import header, load, store_dir
from web import rss_mb, serving

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests/

from referee.rules import Settings
from referee.store.paths import summaries_path
from referee.store.store import Store
from tests.tables import table_game

MAX_MB = 40
PLAYERS = ("Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jo")
SETTLE_S = 1.0
RESERVED = 3
EXPORTS = ("games.csv", "stats.csv")
SEATS = 4


@dataclass
class Row:
    games: int
    inputs: int
    requests: int  # until the stats were counted
    counting_s: float
    before_mb: float
    counted_mb: float
    served_mb: float
    highest_mb: float
    answer_kb: float  # the stats' JSON
    cache_mb: float  # the cache file and its -wal


def write_store(path: Path, games: int, calls: int) -> int:
    """`games` games in a new store at `path`, in one transaction each as the box writes
    a game anew; how many inputs they hold."""
    settings = Settings(players=SEATS)
    inputs = 0
    with Store.open(path) as store:
        for seed in range(games):
            played = table_game(settings, seed, calls=calls)
            seated = random.Random(seed).sample(PLAYERS, SEATS)
            names = dict(enumerate(seated, 1))
            store.new_game(settings, lobby=False, inputs=played, names=names)
            inputs += len(played)
    return inputs


def stats_counted(port: int, path: str = "/api/stats") -> tuple[int, float, int]:
    """Ask for the stats (or another counted answer) until they are counted: how many
    requests, how long it took, how long the answer is in bytes."""
    began = time.monotonic()
    for requests in range(1, 10**6):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}") as answer:
                body = answer.read()
            if path == "/api/stats":
                json.loads(body)
            return requests, time.monotonic() - began, len(body)
        except urllib.error.HTTPError as counting:
            if counting.code != 503:
                raise
    raise RuntimeError("the stats were never counted")


def measure(store: Path, games: int, inputs: int) -> Row:
    with serving(store) as (server, port):
        time.sleep(SETTLE_S)
        before = rss_mb(server.pid)
        requests, seconds, answer = stats_counted(port)
        time.sleep(SETTLE_S)
        counted = rss_mb(server.pid)
        for _ in range(RESERVED):
            stats_counted(port)
        for name in EXPORTS:
            stats_counted(port, f"/api/export/{name}")
        time.sleep(SETTLE_S)
        cache = summaries_path(store)
        on_disk = [cache, cache.with_name(cache.name + "-wal")]
        return Row(
            games,
            inputs,
            requests,
            seconds,
            before,
            counted,
            rss_mb(server.pid),
            rss_mb(server.pid, "VmHWM"),
            answer / 1000,
            sum(p.stat().st_size for p in on_disk if p.exists()) / 1e6,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--games", type=int, nargs="+", default=[2000], help="each large store's games"
    )
    parser.add_argument("--baseline-games", type=int, default=40, metavar="N")
    parser.add_argument("--calls", type=int, default=50, help="about a game's calls")
    args = parser.parse_args()
    header("`referee web`'s memory with the stats of many games (bench/stats.py)")
    largest = ", ".join(str(n) for n in args.games)
    print(f"target: at most {MAX_MB} MB at rest and at the highest, with {largest} games")
    print()
    print("| games | inputs | requests to count | counting s | RSS MB before | counted |"
          f" served {RESERVED} more times, exports | highest (VmHWM) | stats kB |"
          " cache MB |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    with store_dir() as folder:
        for games in (args.baseline_games, *args.games):
            store = Path(folder) / f"{games}-games.db"
            row = measure(store, games, write_store(store, games, args.calls))
            rows.append(row)
            print(
                f"| {row.games} | {row.inputs} | {row.requests} | {row.counting_s:.1f} |"
                f" {row.before_mb:.1f} | {row.counted_mb:.1f} | {row.served_mb:.1f} |"
                f" {row.highest_mb:.1f} | {row.answer_kb:.1f} | {row.cache_mb:.1f} |",
                flush=True,
            )
    baseline, *large = rows
    print()
    for one in large:
        grown = one.served_mb - baseline.served_mb
        print(f"{one.games} games less {baseline.games}, served: {grown:+.1f} MB")
    highest = max(max(one.served_mb, one.highest_mb) for one in large)
    met = highest <= MAX_MB
    print(f"at the end: {load()}")
    print(f"at most {MAX_MB} MB: {highest:.1f} MB at the highest: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
