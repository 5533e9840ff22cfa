"""Phones following the page: event streams of `referee web` read by a process of their own.

    .venv/bin/python bench/phones.py PORT N

It opens N event streams (GET /api/events, bench/web.py's Stream), each waiting for its
first state, and says `ready` on its standard output. Then it reads them all as their
events come (select), noting each state event a stream completes: when it arrived, on
CLOCK_MONOTONIC in ns (time.monotonic_ns(), the clock the box stamps its edges on) as the
read that completed it returned (the events one read completes share its time), and the
game time of the latest input in its state (its timers' `at_ms`: which inputs it shows).
When its standard input ends (the benchmark closes it) it prints, for each stream, the
state events it received after its first, [arrival ns, at_ms or null] each, a JSON list
of lists, and exits. A stream the server ends is read no more.

A process, not a thread of the benchmark (bench/web.py's `following`): the benchmark's
process holds the box's App, and a thread of it reading would take the App's GIL, which
phones on Wi-Fi never do.
"""

import json
import select
import sys
import time

from web import Stream

TIMERS = b'"timers":'
DECODER = json.JSONDecoder()


def at_ms(state: bytes) -> float | None:
    """The game time of the state's latest input (ms), None where it has no game: only
    its timers are decoded, not the whole game."""
    start = state.find(TIMERS)
    if start < 0:
        return None
    timers, _ = DECODER.raw_decode(state[start + len(TIMERS) :].decode())
    return float(timers["at_ms"])


def main() -> None:
    port, n = int(sys.argv[1]), int(sys.argv[2])
    streams = [Stream(port, phone) for phone in range(n)]  # each from its own address
    print("ready", flush=True)
    reading = {one.sock.fileno(): one for one in streams}
    arrivals: dict[int, list[tuple[int, float | None]]] = {fd: [] for fd in reading}
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([stdin, *reading], [], [])
        for fd in ready:
            if fd == stdin:
                print(json.dumps(list(arrivals.values())), flush=True)
                return
            one = reading[fd]
            if not one.take():
                del reading[fd]
            now = time.monotonic_ns()
            arrivals[fd] += [(now, at_ms(state)) for state in one.states]


if __name__ == "__main__":
    main()
