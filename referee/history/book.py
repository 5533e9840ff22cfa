"""Every game of a store, read and replayed once: its summary cached by its id and its
latest input, its timeline for the few games looked at last.

A game's summary takes a replay of all its inputs (about 10 ms for a game of 160 inputs
on this project's machine): a store of thousands of games must not cost that at every
request. A game the daemon writes changes its latest input, and only that game is read
again. The store is opened for each read and closed at once, as `referee state` does
(docs/design.md, "The page"): its inputs read first, replayed once it is closed.

One thread at a time uses a History (the page's server gives it one of its own).
"""

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.rules.timeline import Timeline, timeline
from referee.store import ListedGame, Store, StoredGame

from .summary import GameSummary, summarize

# The timelines kept: the games a few phones look at now (a timeline is tens of kB).
TIMELINES = 16
# The games a count reads at a time: the store held open for a few ms each.
READ_AT_ONCE = 10


@dataclass(frozen=True)
class Page:
    games: list[GameSummary]  # newest first
    timelines: dict[int, Timeline]  # theirs by id, when asked for
    next: int | None  # the `before` of the next page; None after the last


@dataclass(frozen=True)
class Counted:
    """How far counting every game has come: `summaries` once all are counted."""

    counted: int
    total: int
    summaries: tuple[GameSummary, ...] | None


class History:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._summaries: dict[int, GameSummary] = {}
        # By the game as listed: its latest input and its settings (a lobby's may change).
        self._timelines: OrderedDict[ListedGame, Timeline] = OrderedDict()

    def page(self, before: int | None, limit: int, *, timelines: bool = False) -> Page:
        """The games before `before` (an id), newest first, at most `limit`; with their
        timelines if asked."""
        with Store.open_readonly(self.path) as store:
            through = None if before is None else before - 1
            listed = store.games(through=through, limit=limit + 1)
            more = len(listed) > limit
            listed = listed[:limit]
            if timelines:
                wanted = [g for g in listed if g not in self._timelines]
            else:
                wanted = self._missing(listed)
            stored = self._read(store, wanted)
        made = self._replay(stored, listed)
        lines = {**self._timelines, **made} if timelines else {}
        return Page(
            [self._summaries[g.id] for g in listed if g.id in self._summaries],
            {g.id: lines[g] for g in listed if g in lines},
            listed[-1].id if more else None,
        )

    def game(self, game_id: int) -> tuple[GameSummary, Timeline] | None:
        """One game's summary and timeline; None if there is no such game."""
        with Store.open_readonly(self.path) as store:
            listed = store.games(through=game_id, limit=1)
            if not listed or listed[0].id != game_id:
                return None
            kept = self._timelines.get(listed[0])
            stored = [] if kept else self._read(store, listed)
        if kept is None:
            kept = self._replay(stored, listed).get(listed[0])
            if kept is None:  # gone between the list and the read (written anew)
                return None
        self._timelines.move_to_end(listed[0])
        return self._summaries[game_id], kept

    def count(self, budget: int) -> Counted:
        """Count every game in the store, replaying at most `budget` not counted yet, read
        READ_AT_ONCE at a time: each chunk's inputs are garbage once it is replayed, and
        the fewer there are at once, the fewer of the allocator's arenas the summaries
        kept among them hold on to (docs/design.md, "The page": its history and stats)."""
        with Store.open_readonly(self.path) as store:
            listed = store.games()
        missing = self._missing(listed)[:budget]
        # A few games to count are the latest changing (the game being played), which the
        # phones look at next; many are the store's old games, whose timelines would only
        # take memory.
        keep = len(missing) <= READ_AT_ONCE
        for first in range(0, len(missing), READ_AT_ONCE):
            with Store.open_readonly(self.path) as store:
                stored = self._read(store, missing[first : first + READ_AT_ONCE])
            self._replay(stored, listed, keep=keep)
        # Games no longer in the store (written anew under other ids) are forgotten.
        ids = {g.id for g in listed}
        for gone in self._summaries.keys() - ids:
            del self._summaries[gone]
        left = len(self._missing(listed))
        if left:
            return Counted(len(listed) - left, len(listed), None)
        return Counted(len(listed), len(listed), tuple(self._summaries[g.id] for g in listed))

    def _missing(self, listed: Sequence[ListedGame]) -> list[ListedGame]:
        return [g for g in listed if (s := self._summaries.get(g.id)) is None or s.game != g]

    def _read(self, store: Store, games: Sequence[ListedGame]) -> list[StoredGame]:
        read = (store.game(g.id) for g in games)
        return [g for g in read if g is not None]

    def _replay(
        self, stored: Sequence[StoredGame], listed: Sequence[ListedGame], *, keep: bool = True
    ) -> dict[ListedGame, Timeline]:
        """Summarize the games read, under what the list says of them (a game written
        since it was listed is read again next time); if `keep`, their timelines, kept
        among the last looked at too."""
        by_id = {g.id: g for g in listed}
        made = {}
        for game in stored:
            listing = by_id[game.id]
            line = timeline(game.settings, game.inputs, lobby=game.lobby)
            last_ns = game.inputs[-1].t_ns if game.inputs else 0
            self._summaries[game.id] = summarize(listing, line, last_ns)
            if keep:
                made[listing] = line
                self._timelines[listing] = line
                self._timelines.move_to_end(listing)
                while len(self._timelines) > TIMELINES:
                    self._timelines.popitem(last=False)
        return made
