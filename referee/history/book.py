"""Every game of a store, read and replayed once: its summary kept in the page's cache
(cache.py) by its id and its version, its timeline for the few games looked at last.

A game's summary takes a replay of all its inputs (about 10 ms for a game of 160 inputs
on this project's machine): a store of thousands of games must not cost that at every
request. A game the daemon writes changes its version, and only that game is read
again. The store is opened for each read and closed at once, as `referee state` does
(docs/design.md, "The page"): its inputs read first, replayed once it is closed.

One thread at a time uses a History (the page's server gives it one of its own).
"""

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.rules.timeline import Timeline, timeline
from referee.store.reads import ListedGame
from referee.store.store import Store

from .cache import SummaryCache
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
    """How far counting every game has come: the cache holds them all once `done`."""

    counted: int
    total: int

    @property
    def done(self) -> bool:
        return self.counted == self.total


class History:
    def __init__(self, path: Path, cache: Path | None = None) -> None:
        """`cache`: the file of the summaries (None: in memory)."""
        self.path = path
        self.cache = SummaryCache(cache, path)
        # By the game as listed: its latest input and its settings (a lobby's may change).
        self._timelines: OrderedDict[ListedGame, Timeline] = OrderedDict()

    def close(self) -> None:
        self.cache.close()

    def page(self, before: int | None, limit: int, *, timelines: bool = False) -> Page:
        """The games before `before` (an id), newest first, at most `limit`; with their
        timelines if asked."""
        through = None if before is None else before - 1
        with Store.open_readonly(self.path) as store:
            listed = store.games(through=through, limit=limit + 1)
            more = len(listed) > limit
            listed = listed[:limit]
            versions = self._versions(store, listed)
        kept = self.cache.summaries((g, versions[g.id]) for g in listed if g.id in versions)
        # A timeline kept whose summary is not (the cache was made anew) is made again too.
        wanted = [g for g in listed if g.id not in kept or (timelines and g not in self._timelines)]
        made = self._made(wanted, versions)
        kept.update((s.game.id, s) for s in made.summaries)
        lines = {**self._timelines, **made.timelines} if timelines else {}
        return Page(
            [kept[g.id] for g in listed if g.id in kept],
            {g.id: lines[g] for g in listed if g in lines},
            listed[-1].id if more else None,
        )

    def game(self, game_id: int) -> tuple[GameSummary, Timeline] | None:
        """One game's summary and timeline; None if there is no such game."""
        with Store.open_readonly(self.path) as store:
            listed = store.games(through=game_id, limit=1)
            if not listed or listed[0].id != game_id:
                return None
            versions = self._versions(store, listed)
        line = self._timelines.get(listed[0])
        kept = self.cache.summaries([(listed[0], versions.get(game_id, 0))])
        if line is None or game_id not in kept:
            made = self._made(listed, versions)
            line = made.timelines.get(listed[0])
            if line is None:  # gone between the list and the read (written anew)
                return None
            kept = {s.game.id: s for s in made.summaries}
        self._timelines.move_to_end(listed[0])
        return kept[game_id], line

    def count(self, budget: int) -> Counted:
        """Count every game in the store, replaying at most `budget` not counted yet, read
        READ_AT_ONCE at a time: the store's list and the cache's are walked side by side,
        never held (docs/design.md, "The page": its history and stats)."""
        missing: list[tuple[int, int]] = []  # the first `budget` not counted, with versions
        left = total = 0
        gone: list[int] = []
        with Store.open_readonly(self.path) as store:
            for kind, game_id, version in _merged(store.versions(), self.cache.versions()):
                if kind == "gone":
                    gone.append(game_id)
                    continue
                total += 1
                if kind == "new":
                    left += 1
                    if len(missing) < budget:
                        missing.append((game_id, version))
        self.cache.forget(gone)
        # A few games to count are the latest changing (the game being played), which the
        # phones look at next; many are the store's old games, whose timelines would only
        # take memory.
        keep = len(missing) <= READ_AT_ONCE
        for first in range(0, len(missing), READ_AT_ONCE):
            chunk = dict(missing[first : first + READ_AT_ONCE])
            with Store.open_readonly(self.path) as store:
                listed = [g for i in chunk for g in store.games(through=i, limit=1) if g.id == i]
            made = self._made(listed, chunk, keep=keep)
            left -= len(made.summaries)
        return Counted(total - left, total)

    def _versions(self, store: Store, listed: Sequence[ListedGame]) -> dict[int, int]:
        """The versions of the games listed, by id."""
        if not listed:
            return {}
        ids = {g.id for g in listed}
        return {i: v for i, v in store.versions(min(ids), max(ids)) if i in ids}

    def _made(
        self, listed: Sequence[ListedGame], versions: dict[int, int], *, keep: bool = True
    ) -> "_Made":
        """The games listed read and summarized, kept in the cache under their versions
        (a game written since it was listed is read again next time); if `keep`, their
        timelines, kept among the last looked at too."""
        with Store.open_readonly(self.path) as store:
            stored = [g for g in (store.game(g.id) for g in listed) if g is not None]
        by_id = {g.id: g for g in listed}
        made = _Made([], {})
        for game in stored:
            listing = by_id[game.id]
            line = timeline(game.settings, game.inputs, lobby=game.lobby)
            last_ns = game.inputs[-1].t_ns if game.inputs else 0
            made.summaries.append(summarize(listing, line, last_ns))
            if keep:
                made.timelines[listing] = line
                self._timelines[listing] = line
                self._timelines.move_to_end(listing)
                while len(self._timelines) > TIMELINES:
                    self._timelines.popitem(last=False)
        self.cache.put([(s, versions.get(s.game.id, 0)) for s in made.summaries])
        return made


@dataclass(frozen=True)
class _Made:
    summaries: list[GameSummary]
    timelines: dict[ListedGame, Timeline]


def _merged(
    store: Iterator[tuple[int, int]], cache: Iterator[tuple[int, int]]
) -> Iterator[tuple[str, int, int]]:
    """The store's games and the cache's, both by id, walked side by side: each game with
    whether the cache has it as the store does ("kept"), not or not so ("new"), or has a
    game the store no longer has ("gone")."""
    kept = next(cache, None)
    for game_id, version in store:
        while kept is not None and kept[0] < game_id:
            yield "gone", kept[0], kept[1]
            kept = next(cache, None)
        if kept is not None and kept[0] == game_id:
            yield ("kept" if kept[1] == version else "new"), game_id, version
            kept = next(cache, None)
        else:
            yield "new", game_id, version
    while kept is not None:
        yield "gone", kept[0], kept[1]
        kept = next(cache, None)
