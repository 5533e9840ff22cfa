"""The PIN's turns (referee/web/login.py, docs/web.md "Who may do what"): about five guesses
a minute from everywhere together, with no race around it, and never a judge kept out by
someone guessing on the Wi-Fi: their right PIN waits its turn, it is not refused."""

import http.client
import json
import random
import select
import socket
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.store.paths import pin_path
from referee.store.pin import read_pin
from referee.units import NS_PER_S
from referee.web.login import EVERY_NS, TRIES, Turns

from .test_web import served

ATTACKER = "127.0.0.2"
JUDGE = "127.0.0.3"


def sent(address, source, pin):
    """A login sent from the source address as the page sends it; its socket, to read the
    answer from (`answer`) once it comes."""
    host = f"{address[0]}:{address[1]}"
    body = json.dumps({"pin": pin}).encode()
    sock = socket.create_connection(address, timeout=10, source_address=(source, 0))
    sock.sendall(
        f"POST /api/login HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n"
        "Sec-Fetch-Site: same-origin\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    return sock


def answer(sock):
    """The status of the answer on the socket, and its JSON."""
    with sock:
        response = http.client.HTTPResponse(sock, method="POST")
        response.begin()
        return response.status, json.loads(response.read())


def wrong_pin(store):
    pin = read_pin(pin_path(store))
    return pin, "000000" if pin != "000000" else "111111"


def test_a_judge_signs_in_while_someone_keeps_guessing(store):
    """The attack: wrong PINs one after the other, from a few connections at once. Before,
    five of them made every login wait a minute, the right PIN too, for as long as they
    went on; now the judge's right PIN waits for the next check at most."""
    every_s = 0.3
    (host, port), stop = served(store, turns=Turns(every_ns=int(every_s * NS_PER_S)))
    pin, wrong = wrong_pin(store)
    try:
        started = time.monotonic()
        guessing = [sent((host, port), ATTACKER, wrong) for _ in range(3)]
        answered = []
        while len(answered) < 3 * TRIES:  # the guesser asks again each time it is answered
            ready, _, _ = select.select(guessing, [], [], 10)
            assert ready, "the guesses were never answered"
            for sock in ready:
                answered.append(answer(sock))
                guessing.remove(sock)
                guessing.append(sent((host, port), ATTACKER, wrong))
            if len(answered) == TRIES:
                judge_at = time.monotonic()
                judge = sent((host, port), JUDGE, pin)
                status, body = answer(judge)  # it waits its turn, among the guesses
                assert (status, body) == (200, {"session": True})
                assert time.monotonic() - judge_at < 2 * every_s + 1.0  # a loaded machine
        took = time.monotonic() - started
        for sock in guessing:
            sock.close()
        # Only one guess at a time from an address: the newer takes the older's place.
        assert {(status, body["error"]) for status, body in answered} <= {
            (401, "wrong PIN"),
            (429, "another PIN from this phone came after it"),
        }
        wrongs = sum(status == 401 for status, _ in answered)
        assert wrongs <= TRIES + took / every_s + 1  # the judge's check was given back
    finally:
        stop()


def test_guesses_sent_at_once_get_no_more_checks(store):
    """Twenty addresses guess at the same moment: five are checked at once, the others
    wait their turns (no more than five answered before the next check is free)."""
    (host, port), stop = served(store, turns=Turns(every_ns=60 * NS_PER_S))
    _, wrong = wrong_pin(store)
    try:
        waiting = [sent((host, port), f"127.0.0.{10 + n}", wrong) for n in range(20)]
        answered = []
        while len(answered) < TRIES:
            ready, _, _ = select.select(waiting, [], [], 10)
            assert ready, "no guess was answered"
            for sock in ready:
                answered.append(answer(sock))
                waiting.remove(sock)
        assert answered == [(401, {"error": "wrong PIN"})] * TRIES
        # A sixth answer would be a check beyond the five: none comes in half a second.
        assert select.select(waiting, [], [], 0.5)[0] == []
        for sock in waiting:
            sock.close()
    finally:
        stop()


def test_five_pins_at_once_then_the_next_waits_its_turn_and_is_checked(store):
    every_s = 0.2
    (host, port), stop = served(store, turns=Turns(every_ns=int(every_s * NS_PER_S)))
    pin, wrong = wrong_pin(store)
    try:
        first = time.monotonic()  # the first check: no earlier than this
        for _ in range(TRIES):
            assert answer(sent((host, port), ATTACKER, wrong))[0] == 401
        assert answer(sent((host, port), ATTACKER, pin)) == (200, {"session": True})
        assert time.monotonic() - first >= every_s  # it waited for a check to be free
    finally:
        stop()


# The turns themselves, as a property: every schedule of guesses from a few addresses, and
# a judge who asks at any moment.

E = EVERY_NS


@settings(max_examples=300)
@given(
    addresses=st.integers(1, 4),
    asks=st.lists(st.tuples(st.integers(0, 3 * E), st.integers(0, 3)), min_size=1, max_size=60),
    judge_at=st.integers(0, 40 * E),
    judge_wrong=st.integers(0, 2),
    seed=st.integers(0, 2**32),
)
def test_guessing_is_five_a_minute_and_a_judge_always_gets_a_turn(
    addresses, asks, judge_at, judge_wrong, seed
):
    """Whatever the guessers do: (1) no window of time has more wrong PINs checked than
    TRIES and one every EVERY_NS; (2) a judge's right PIN is checked, never refused, one
    check after those of the guessers placed before it: an address goes first while it
    has fewer wrong PINs in the last hour than the judge (or as many, and asked first),
    then behind. A judge without a wrong PIN waits for the next free check, and for each
    address that waits at that moment without a wrong PIN yet, once."""
    turns = Turns()
    order = random.Random(seed)  # the order the waiting logins wake in
    waiting: dict[str, int] = {}  # client: ticket (one each, as the server's logins)
    wrong_at: list[int] = []
    judge = "judge"
    judged_at = None
    ahead = None
    # The judge typed a wrong PIN or two before, long enough ago that the guessers' fill
    # the memory since (each of theirs counts, as the judge's).
    for n in range(judge_wrong):
        assert turns.turn(judge, turns.ask(judge, n), n)
        turns.checked(judge, n, wrong=True)
        wrong_at.append(n)
    t = judge_wrong
    moments = []
    for gap, who in asks:
        t += gap
        moments.append((t, f"a{who % addresses}"))
    moments.append((judge_at + judge_wrong, judge))
    moments.sort(key=lambda m: m[0])
    now = 0

    def serve(now):
        """Every waiting login that finds its turn, tried in any order, as waking tasks."""
        nonlocal judged_at
        while True:
            taken = False
            for client in order.sample(sorted(waiting), len(waiting)):
                if turns.turn(client, waiting[client], now):
                    del waiting[client]
                    taken = True
                    if client == judge:
                        turns.checked(client, now, wrong=False)
                        judged_at = now
                    else:
                        turns.checked(client, now, wrong=True)
                        wrong_at.append(now)
            if not taken:
                return

    pending = list(moments)
    while pending or waiting:
        free = turns.free_at_ns(now) if waiting else None
        if pending and (free is None or pending[0][0] <= free):
            now, client = pending.pop(0)
            if client == judge:  # who may go first: see the docstring
                ahead = sum(
                    max(0, judge_wrong + (c in waiting) - turns.wrong(c, now))
                    for c in (f"a{n}" for n in range(addresses))
                )
            waiting[client] = turns.ask(client, now)
        else:
            now = max(now, free)
        serve(now)
    assert judged_at is not None
    judge_asked = judge_at + judge_wrong
    assert judged_at <= judge_asked + (ahead + 1) * E, (judged_at - judge_asked) / E
    # (1) over every window between two checks
    for i, first in enumerate(wrong_at):
        for j in range(i, len(wrong_at)):
            assert j - i + 1 <= TRIES + (wrong_at[j] - first) // E
