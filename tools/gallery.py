"""Every screen, drawn headless to PNG files: `python -m tools.gallery OUTDIR`.

Each screen is reached the honest way, by playing inputs through the real rules engine,
so the pictures show what a table would see. `make screens` fills docs/screens/.
"""

import argparse
import math
import random
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pygame

from referee.claim import Claim
from referee.config import NextRules
from referee.inbox import SeenCard
from referee.outputs.captions import cards_seen
from referee.outputs.display import render
from referee.rules import (
    NS_PER_MS,
    NS_PER_S,
    End,
    Input,
    Press,
    RuleSet,
    Settings,
    State,
    Super,
    Verdict,
    new_game,
    step,
)
from referee.view import ClaimSeen, DeckSeen, Join, Notice, ReplayView, Severity, TableSeen, View

# A 3.5" SPI panel, a TV, and portrait: Touch Display 2, and a 480x800 DSI panel.
SIZES = ((480, 320), (1280, 720), (720, 1280), (480, 800))
GPIO = "GPIO (lgpio: kernel edge times)"
KEYBOARD = "keyboard (8 ms resolution)"


def at(seconds: float) -> int:
    return round(seconds * NS_PER_S)


class Table:
    """A game played input by input, remembering what the effects said."""

    def __init__(self, settings: Settings, names: dict[int, str] | None = None) -> None:
        self.settings = settings
        self.names = tuple(sorted((names or {}).items()))  # typed on the page
        self.state: State = new_game(settings)
        self.messages: list[str] = []

    def play(self, *inputs: Input) -> "Table":
        for inp in inputs:
            self.state, effects = step(self.settings, self.state, inp)
            self.messages.extend(e.text for e in effects)
        return self

    def join(self, *seats: int, t: float = 1.0) -> "Table":
        """Everyone joins in the lobby and SUPER starts the game."""
        return self.play(*(Press(p, at(t + i / 10)) for i, p in enumerate(seats)), Super(at(t + 1)))

    def call(self, seat: int, t: float, valid: bool) -> "Table":
        return self.play(Press(seat, at(t)), Verdict(valid, at(t + 2)))

    def view(
        self,
        now: float,
        notices: Sequence[Notice] = (),
        source: str = GPIO,
        *,
        listening: bool = False,
        watching: bool = False,
        table: TableSeen | None = None,
        join: Join | None = None,
    ) -> View:
        return View(
            settings=self.settings,
            state=self.state,
            now_ns=at(now),
            messages=tuple(self.messages[-3:]),
            notices=tuple(notices),
            source=source,
            listening=listening,
            watching=watching,
            table=table,
            names=self.names,
            join=join,
        )


# The lobby's page address and PIN, as a box on a home Wi-Fi shows them (daemon/lobby.py).
JOIN = Join("http://192.168.1.23:8080/", "481093")
# Names from the page: one too long for a 3.5" screen's marks, which shorten it.
FOUR = {1: "Ann", 2: "Bob", 3: "Cy", 4: "Alexandrina"}
EIGHT = {**FOUR, 5: "Eve", 6: "Maximilian", 7: "Gus", 8: "Hal"}


def _midgame(settings: Settings) -> Table:
    """Four players some way in: Ann and Bob have scored, Cy called wrongly and is locked."""
    return (
        Table(settings, FOUR)
        .join(1, 2, 3, 4)
        .call(1, 10, valid=True)
        .call(2, 20, valid=True)
        .call(1, 25, valid=True)
        .call(3, 30, valid=False)
    )


def _eight() -> Table:
    """Eight players, named, some way in: P6 called wrongly and is locked."""
    eight = Table(Settings(players=8), EIGHT).join(*range(1, 9))
    for i, seat in enumerate((1, 5, 2, 8, 5, 7, 3, 5, 8, 1)):
        eight.call(seat, 10 + 10 * i, valid=True)
    return eight.call(6, 120, valid=False)


def _replay_of_the_call() -> ReplayView:
    """The call's 3 s clip replayed, a third of the way through: P2's "Set!" and P4's 4.2 ms
    later over a room's murmur, shown from 150 ms before the first to 350 ms after the last
    (made up here: the gallery needs no microphone)."""
    noise = random.Random(7)
    clip_s, first_s, last_s = 3.0, 0.85, 1.4
    lows, highs = [], []
    for i in range(600):
        t = first_s + (last_s - first_s) * i / 600
        level = 0.03
        for start, loud in ((0.995, 0.8), (1.0034, 0.6)):  # the shouts' onsets
            if t >= start:
                fall = math.exp(-(t - start) / 0.25) * (0.6 + 0.4 * math.sin(t * 900) ** 2)
                level += loud * fall
        lows.append(-level * noise.uniform(0.7, 1.0))
        highs.append(level * noise.uniform(0.7, 1.0))
    return ReplayView(
        title="P2's call at 1:00.0, 4x slower",
        lows=tuple(lows),
        highs=tuple(highs),
        presses=((2, 1.0 / clip_s), (4, 1.0042 / clip_s), (1, 1.037 / clip_s)),
        onsets=(0.995 / clip_s, 1.0034 / clip_s),
        soft=(1.0034 / clip_s,),  # the second voice, over the first one's vowel
        gaps=(),
        cursor=1.02 / clip_s,
        span=(first_s / clip_s, last_s / clip_s),
    )


def views() -> dict[str, View]:
    """The gallery's screens by name, each the state a real game passes through."""
    four = Settings(players=4)
    out: dict[str, View] = {}

    lobby = Table(four).play(Press(1, at(1)), Press(3, at(2)))
    out["lobby"] = lobby.view(2.5, source=KEYBOARD, join=JOIN)
    out["lobby-no-network"] = lobby.view(2.5, join=Join(None, JOIN.pin, "no network"))
    # Seats named on the page, whole beside the QR code; a phone's rules over the file's.
    official = Settings(rules=RuleSet.OFFICIAL, players=4)
    named = Table(official, {1: "Chloé", 2: "Bob", 3: "Maximilian"}).play(Press(1, at(1)))
    file = Settings(rules=RuleSet.SOLO, players=1)
    over_file = NextRules.of(file, {"rules": "official"}).over_file_shown or ""
    out["lobby-named"] = named.view(2.5, [Notice(over_file, Severity.INFO)], join=JOIN)

    midgame = _midgame(four).play(Press(3, at(40)))  # locked: the engine says why it ignores it
    out["scoreboard"] = midgame.view(41)
    # A box with a microphone and a camera, which sees twelve cards read surely, no SET:
    # the deck by sight under the scores (docs/rules.md, "The deck counted by sight").
    seen = TableSeen(cards=12, sure=12, sets=0, deck=DeckSeen(12, midgame.state.taken))
    out["scoreboard-camera"] = midgame.view(41, listening=True, watching=True, table=seen)
    # The hint asked twice with [camera] hint_where (docs/rules.md, "Is there a SET?").
    where = cards_seen([(0, 2, 1, 2), (1, 2, 1, 0), (2, 2, 1, 1)])
    hinted = midgame.view(41, watching=True, table=TableSeen(cards=12, sure=12, sets=2))
    out["hint"] = replace(hinted, messages=(*hinted.messages[1:], f"there is a SET{where}"))

    photo = _midgame(four).play(
        Press(2, at(60)), Press(4, at(60) + 4_200_000), Press(1, at(60) + 37_000_000)
    )
    out["call"] = photo.view(62.4, listening=True)  # a box with a microphone: its mark
    out["replay"] = replace(out["call"], replay=_replay_of_the_call())
    # P2 picked up three cards: the camera saw them go, and they are not a SET.
    three = Claim(
        (
            SeenCard((0, 0, 0, 1), True, (100, 80, 90, 130)),
            SeenCard((1, 0, 0, 1), True, (300, 80, 90, 130)),
            SeenCard((2, 1, 0, 1), True, (500, 80, 90, 130)),
        )
    )
    taken = _midgame(four).play(Press(2, at(60)))
    claim = TableSeen(cards=9, sure=9, sets=1, claim=ClaimSeen(three))
    out["call-camera"] = taken.view(62.5, listening=True, watching=True, table=claim)

    tied = _midgame(replace(four, tie_ns=2 * NS_PER_MS)).play(
        Press(2, at(60)),
        Press(4, at(60) + 1_100_000),
        Press(1, at(60) + 15_000_000),
        Verdict(True, at(63)),
    )
    out["tie"] = tied.view(64.5)

    joining = _midgame(four).play(Super(at(70)), Press(1, at(71)), Press(4, at(71.5)))
    out["super-join"] = joining.view(72)

    flipped = _midgame(four).play(Super(at(70)), Press(1, at(71)), Press(4, at(71.5)))
    flipped.play(Super(at(73)))
    out["countdown-7s"] = flipped.view(76)
    out["countdown-2.4s"] = flipped.view(80.6)

    reminder = replace(four, must_use_flipped=True)
    strict = _midgame(reminder).play(Super(at(70)), Press(1, at(71)), Press(4, at(71.5)))
    out["countdown-flipped"] = strict.play(Super(at(73))).view(78)

    out["super-call"] = flipped.play(Press(4, at(77.5)), Press(1, at(77.5) + 2_600_000)).view(79)

    solo = Table(Settings(rules=RuleSet.SOLO, players=1)).join(1)
    solo.play(Press(1, at(10)), Verdict(True, at(12)), Press(1, at(30)), Verdict(True, at(31)))
    out["solo"] = solo.view(38, source=KEYBOARD)
    # The camera counts a card fewer on the table than the box deals: one fell.
    dropped = DeckSeen(11, solo.state.taken, solo.state.table)
    seen = TableSeen(cards=11, sure=11, sets=2, deck=dropped)
    out["solo-camera"] = solo.view(38, watching=True, table=seen)
    out["solo-claim"] = solo.play(Super(at(40))).view(41, source=KEYBOARD)
    out["solo-over"] = solo.play(Verdict(False, at(42)), End(at(50))).view(51, source=KEYBOARD)
    calling = Table(Settings(rules=RuleSet.SOLO, players=1)).join(1)
    calling.play(Press(1, at(10)), Verdict(True, at(12)), Press(1, at(30)))
    out["solo-call"] = calling.view(33, source=KEYBOARD)

    ended = Table(four).join(1, 2, 3, 4).call(1, 10, True).call(2, 20, True)
    ended.call(4, 30, True).call(1, 40, True).call(2, 50, True).play(End(at(60)))
    out["ranking"] = ended.view(61)

    official = Settings(
        rules=RuleSet.OFFICIAL, players=4, deals=4, dealer_plays=False, tie_ns=2 * NS_PER_MS
    )
    match = Table(official).join(1, 2, 3, 4).call(2, 10, True).call(3, 20, False)
    match.call(4, 30, True).play(Super(at(40)))  # deal 1 over: P2 deals and sits out
    match.call(1, 50, True).call(3, 60, True)
    match.play(Press(1, at(70)), Press(4, at(70) + 1_300_000))
    out["official-tie"] = match.view(71)  # SUPER now: their SETs share cards
    match.play(Super(at(72)))
    out["official"] = match.view(73)
    match.call(4, 80, True).play(Super(at(90))).call(1, 100, True).call(4, 110, False)
    match.play(Super(at(120))).call(2, 130, True).call(3, 140, True).play(Super(at(150)))
    out["official-match-over"] = match.view(151)

    solitaire = Table(Settings(rules=RuleSet.SOLITAIRE, players=1)).join(1)
    for t in range(10, 70, 10):
        solitaire.call(1, t, valid=True)
    solitaire.play(Super(at(75)), Press(1, at(80)), Verdict(False, at(82)))
    out["solitaire"] = solitaire.view(83, source=KEYBOARD)
    out["solitaire-lost"] = solitaire.play(End(at(90))).view(91, source=KEYBOARD)
    won = Table(Settings(rules=RuleSet.SOLITAIRE, players=1)).join(1)
    for t in range(10, 280, 10):
        won.call(1, t, valid=True)
    out["solitaire-won"] = won.play(Super(at(290))).view(291, source=KEYBOARD)

    trouble = [
        Notice("P2's button is held down: ignored until it is released"),
        Notice("button board unplugged: waiting for /dev/ttyACM0"),
        Notice("storage trouble: cannot write referee.db (disk full)", Severity.ERROR),
    ]
    out["notices"] = midgame.view(41, notices=trouble)

    eight = _eight()
    out["eight-players"] = eight.view(125)
    # Eight places, names long and short, two players sharing one.
    out["eight-players-over"] = _eight().play(End(at(130))).view(131)
    crowd = [
        Press(seat, at(130) + i * 3_100_000) for i, seat in enumerate((4, 2, 7, 1, 8, 3, 5, 6))
    ]
    out["call-eight-presses"] = eight.play(*crowd).view(131, notices=trouble)
    return out


def save(outdir: Path, sizes: Sequence[tuple[int, int]] = SIZES) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    saved = []
    for name, view in views().items():
        for w, h in sizes:
            surface = pygame.Surface((w, h))
            render(surface, view)
            path = outdir / f"{name}-{w}x{h}.png"
            pygame.image.save(surface, str(path))
            saved.append(path)
    return saved


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.partition("x")
    try:
        return int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, not {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gallery", description=__doc__)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--size", type=_size, action="append", help="WIDTHxHEIGHT (repeatable)")
    args = parser.parse_args(argv)
    for path in save(args.outdir, args.size or SIZES):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
