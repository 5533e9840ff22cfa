"""Phones following the page: event streams of `referee web` read by a process of their own.

    .venv/bin/python bench/phones.py PORT N

It opens N event streams (GET /api/events, bench/web.py's Stream), each waiting for its
first state, and says `ready` on its standard output. Then it reads them all as their
events come (select), counting each stream's state events, until its standard input ends
(the benchmark closes it); then it prints how many state events each stream received
after its first, a JSON list, and exits. A stream the server ends is read no more.

A process, not a thread of the benchmark (bench/web.py's `following`): the benchmark's
process holds the box's App, and a thread of it reading would take the App's GIL, which
phones on Wi-Fi never do.
"""

import json
import select
import sys

from web import Stream


def main() -> None:
    port, n = int(sys.argv[1]), int(sys.argv[2])
    streams = [Stream(port) for _ in range(n)]
    print("ready", flush=True)
    reading = {one.sock.fileno(): one for one in streams}
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([stdin, *reading], [], [])
        for fd in ready:
            if fd == stdin:
                print(json.dumps([one.got - 1 for one in streams]), flush=True)
                return
            if not reading[fd].take():
                del reading[fd]


if __name__ == "__main__":
    main()
