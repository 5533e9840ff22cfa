"""One game at the table: the engine's state, the ledger that keeps it, and the game clock.

Every input goes to the ledger before `play` returns its effects: written at once, or,
given `told`, queued for the ledger's own thread, which writes behind the main loop, so
that an effect never waits for the disk (docs/design.md, "The store", says what a power
cut may then lose; while the disk fails, inputs wait in order in memory and the screen
says so). A game resumed from a store its last writer never closed says so, with the
last input kept, so that the table can press again what came after it. The game clock
is the daemon's monotonic clock shifted so that
a game starts at 0 and a resumed game carries on from its last stored input: the time
the box was off does not count, and a running timer gets back the time between that
input and the power cut.

Inputs come in event-time order (the arbiter releases them behind the sources'
watermark). One that comes after later ones were decided can only come from a source
that broke its promise (docs/design.md, "Event time"). It is never dropped: when nothing but
presses came after it, the game is decided again with it in its place (the state is the
replay of the inputs in event-time order, and the ledger replays in that order); else it
is applied now, at the watermark. Either way it is counted and said.
"""

import bisect
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from referee.buttons import PLAYER_BUTTONS
from referee.names import folded
from referee.rules import (
    NO_SET_CLAIM,
    NS_PER_MS,
    NS_PER_S,
    Effect,
    Ignored,
    Input,
    Phase,
    Press,
    Settings,
    State,
    Tick,
    new_game,
    parse_input,
    replay,
    settings_changes,
    step,
    words,
)
from referee.store.ledger import Ledger
from referee.store.store import Store, StoreError

from .arbiter import Decision

log = logging.getLogger(__name__)

# How many presses since the last other input are kept to decide again with a late one;
# more than any table makes between two verdicts.
RECENT_KEPT = 64


@dataclass(frozen=True)
class LateInput:
    """An input that came after later ones were decided, and what was done with it."""

    words: str
    late_by_ns: int
    redecided: bool  # decided again in its place; else applied at the watermark

    @property
    def text(self) -> str:
        how = "decided again in its place" if self.redecided else "applied now"
        return f"{self.words} came {self.late_by_ns / NS_PER_MS:.1f} ms late: {how}"


Outcome = Effect | LateInput


@dataclass(frozen=True)
class _Recent:
    inp: Press
    before: State  # the state it was played on


class Session:
    settings: Settings
    state: State
    ledger: Ledger
    origin_ns: int  # the monotonic time at the game clock's 0
    last_ns: int  # the game time up to which the game is decided
    late: int  # inputs that came late, this run
    resumed: str | None = None  # what the table must know of a resumed game, for the screen
    names: dict[
        int, str
    ]  # who sits where, by seat: as shown, and then kept (requests.Requests.name_seat)
    # While the game is in its lobby, its inputs, to replay with other rules; else None.
    _lobby: list[Input] | None

    def __init__(
        self,
        store: Store,
        rules: Settings,
        *,
        tie_floor_ns: int,
        now_ns: int,
        told: Callable[[], None] | None = None,
    ) -> None:
        """Resume the store's latest game, or start one in the lobby. now_ns: monotonic.
        told: the ledger writes behind, on its own thread, and calls it when storage
        trouble begins or is over (Ledger.write_behind)."""
        self.store = store
        self._told = told
        self.late = 0
        # The no-SET claim (solo, solitaire) the last press made, for the camera to check.
        self.claim_mono_ns: int | None = None
        self._tie_floor_ns = tie_floor_ns
        self.rules = self._floored(rules)
        game = store.latest_game()
        if game is None:
            self._new_game(now_ns, {})
            return
        self.names = dict(game.names)
        state = game.state()
        self._lobby = list(game.inputs) if state.phase is Phase.LOBBY else None
        self.settings = game.settings
        self.state = state
        if game.settings != self.rules and self._lobby is not None:
            # Not started: it takes the settings in effect now, as a table expects of a
            # box started after its settings were changed; its joins stay.
            try:
                store.settle_lobby(game.id, self.rules)
                self._settle()
                log.info("game %d, not started yet, takes the settings now", game.id)
            except StoreError as err:  # it keeps its own; the screen says what differs
                log.warning("game %d keeps its settings: %s", game.id, err)
        self.ledger = self._ledger(game.id)
        last_ns = game.inputs[-1].t_ns if game.inputs else 0
        self.origin_ns = now_ns - last_ns
        self.last_ns = last_ns
        self._recent: list[_Recent] = []
        self._settled_ns = last_ns  # nothing before this is decided again
        log.info(
            "resumed game %d (%d inputs, phase %s)", game.id, len(game.inputs), self.state.phase
        )
        self._log_clock()
        said = []
        if store.left_open:
            # Its last writer never closed it: inputs shown in the last moments before a
            # power cut may not have reached the disk, and the table must know from where
            # to press again.
            last = game.inputs[-1] if game.inputs else None
            kept = f"{words(last)} at {_game_clock(last.t_ns)}" if last else "none"
            said.append(f"the last input kept is {kept}")
        if (deadline := self.state.deadline) is not None:
            # The time between the last input and the cut is given back to the timer.
            said.append(f"timers restarted at {(deadline - last_ns) / NS_PER_S:.0f} s")
        if said:
            how = " after a power cut or crash" if store.left_open else ""
            self.resumed = f"resumed{how}: {'; '.join(said)}"
            log.log(logging.WARNING if store.left_open else logging.INFO, "%s", self.resumed)
        if self.next_game:
            log.info("game %d keeps the rules it started with; %s", game.id, self.next_game)

    @property
    def next_game(self) -> str | None:
        """What the next game will play by, where it differs from this one's settings (the
        settings file or a phone changed them, or the input's resolution): for the screen;
        else None."""
        if self.settings == self.rules:
            return None
        return "the next game: " + settings_changes(self.settings, self.rules)

    def _log_clock(self) -> None:
        # For a builder comparing the ledger's times with stamps taken beside the box
        # (gpiomon's, a recording's): the kernel's GPIO stamps are on CLOCK_MONOTONIC.
        log.info(
            "game %d's clock: 0 s at CLOCK_MONOTONIC %.6f s",
            self.ledger.game_id,
            self.origin_ns / NS_PER_S,
        )

    def _floored(self, rules: Settings) -> Settings:
        """The tie window never goes below what the input can resolve (docs/design.md,
        "Event time")."""
        return replace(rules, tie_ns=max(rules.tie_ns, self._tie_floor_ns))

    def take_rules(self, rules: Settings) -> bool:
        """The next game's rules from now on; a game still in its lobby takes them at
        once (its joins stay: True), a started one keeps its own (next_game says what the
        next will differ in). The caller keeps them (Store.set_next_rules)."""
        self.rules = self._floored(rules)
        if self._lobby is None or self.settings == self.rules:
            return False
        self._settle()
        return True

    def _settle(self) -> None:
        """The game in the lobby takes the rules: its inputs played again with them, its
        players at the seats it no longer has stood up."""
        assert self._lobby is not None
        self.settings = self.rules
        self.state = replay(self.settings, self._lobby, lobby=True)
        self.names = {seat: name for seat, name in self.names.items() if seat <= self.rules.players}

    @property
    def in_lobby(self) -> tuple[int, Settings] | None:
        """The game's id and settings while it is in its lobby, else None."""
        return None if self._lobby is None else (self.ledger.game_id, self.settings)

    def _ledger(self, game_id: int) -> Ledger:
        ledger = Ledger(self.store, game_id)
        if self._told is not None:
            ledger.write_behind(self._told)
        return ledger

    def _new_game(self, now_ns: int, names: dict[int, str]) -> None:
        """A game in the lobby; the players named at its seats (those it has) stay there."""
        self.settings = self.rules
        self.state = new_game(self.settings, lobby=True)
        self._lobby = []
        names = {seat: name for seat, name in names.items() if seat <= self.settings.players}
        self.ledger = self._ledger(self.store.new_game(self.settings, lobby=True, names=names))
        self.names = names
        self.origin_ns = now_ns
        self.last_ns = 0
        self._recent = []
        self._settled_ns = 0
        log.info(
            "game %d: %s rules, %d seats",
            self.ledger.game_id,
            self.settings.rules,
            self.settings.players,
        )
        self._log_clock()

    def seating(self, seat: int, name: str) -> str | None:
        """Why the player may not sit at the seat now, or None: the seat must be this
        game's, and nobody sits at two seats."""
        if not 1 <= seat <= self.settings.players:
            return f"seat {seat} is not at this table (seats 1 to {self.settings.players})"
        for other, there in self.names.items():
            if other != seat and folded(there) == folded(name):
                return f"{there} already sits at seat {other}"
        return None

    def game_ns(self, mono_ns: int) -> int:
        return mono_ns - self.origin_ns

    def mono_ns(self, game_ns: int) -> int:
        return game_ns + self.origin_ns

    def play(self, decision: Decision) -> list[Outcome]:
        """A decided button press: its input goes to the engine and the ledger."""
        self.claim_mono_ns = None
        if decision.button == "SUPER" and self.state.phase is Phase.OVER:
            return self.start_next(decision.t_ns)
        # The replay scripts' words for it: one grammar for scripts, ledger and buttons.
        button = decision.button
        said = ["press", button[1:]] if button in PLAYER_BUTTONS else [button.lower()]
        inp = parse_input(said, self.game_ns(decision.t_ns))
        if inp.t_ns < self.last_ns:
            return self._late(inp)
        before = self.state
        outcomes: list[Outcome] = list(self._feed(inp))
        if self.state.previous is before and self.state.step == NO_SET_CLAIM:
            self.claim_mono_ns = decision.t_ns
        return outcomes

    @property
    def call_mono_ns(self) -> int | None:
        """The first press of the call waiting for its verdict, if one does (monotonic):
        the camera follows its claim."""
        call = self.state.pending
        return None if call is None else self.mono_ns(call.first_ns)

    def camera(self, claim: Input) -> list[Outcome]:
        """The claim the camera saw (its verdict, or only its cards), stamped with its
        frame's time (monotonic): entered then, or at the last input decided if that is
        later, since the camera's reading comes a frame's work after it."""
        return list(self._feed(replace(claim, t_ns=max(self.game_ns(claim.t_ns), self.last_ns))))

    def start_next(self, now_ns: int) -> list[Outcome]:
        """A new game after the end (SUPER, or a phone), once every input and change of
        this one is saved."""
        ended = self.ledger
        if not ended.flush():
            return [Ignored(f"the ended game is not all saved yet ({ended.trouble})")]
        # Its writer has nothing to write now, and touches the store no more.
        try:
            self._new_game(now_ns, self.names)
        except StoreError as err:
            log.error("cannot start a new game: %s", err)
            return [Ignored(f"no new game: {err.reason}")]
        ended.close()
        return []

    def close(self) -> None:
        """Stop the ledger's writer: what still waits is the caller's (Ledger.close)."""
        self.ledger.close()

    def tick(self, mono_ns: int) -> list[Outcome]:
        """Let the game's timers fire up to mono_ns; only a tick that fired one is kept."""
        t_ns = self.game_ns(mono_ns)
        if t_ns <= self.last_ns:
            return []  # decided that far already (a late input was applied at last_ns)
        return list(self._feed(Tick(t_ns)))

    @property
    def deadline_mono_ns(self) -> int | None:
        deadline = self.state.deadline
        return None if deadline is None else self.mono_ns(deadline)

    def _feed(self, inp: Input) -> list[Effect]:
        if inp.t_ns < self.last_ns:
            raise ValueError(f"{words(inp)} at {inp.t_ns} ns comes before {self.last_ns} ns")
        effects = self._step(inp, save=True)
        self.last_ns = inp.t_ns
        return effects

    def _step(self, inp: Input, *, save: bool) -> list[Effect]:
        before = self.state
        self.state, effects = step(self.settings, before, inp)
        if not isinstance(inp, Tick) or self.state is not before:
            if save:
                self.ledger.append(inp)  # written, or queued for the ledger's writer
                if self._lobby is not None:
                    self._lobby.append(inp)
            self._remember(inp, before)
        if self.state.phase is not Phase.LOBBY:
            self._lobby = None
        return effects

    def _remember(self, inp: Input, before: State) -> None:
        """Keep what a late input needs to be decided again in its place: the presses
        since the last other input, with the state each was played on."""
        if not isinstance(inp, Press):
            self._recent.clear()
            self._settled_ns = inp.t_ns
            return
        self._recent.append(_Recent(inp, before))
        if len(self._recent) > RECENT_KEPT:
            self._settled_ns = self._recent.pop(0).inp.t_ns

    def _late(self, inp: Input) -> list[Outcome]:
        self.late += 1
        redecided = inp.t_ns >= self._settled_ns
        note = LateInput(words(inp), self.last_ns - inp.t_ns, redecided)
        log.warning("%s", note.text)
        if not redecided:
            # A verdict, a timer or another step of the table's came since: what the
            # table did stands, and the late input is taken as coming now.
            return [note, *self._feed(replace(inp, t_ns=self.last_ns))]
        # Only presses came since: play it and them again, from the state before them.
        at = bisect.bisect_right([r.inp.t_ns for r in self._recent], inp.t_ns)
        again = [r.inp for r in self._recent[at:]]
        if at < len(self._recent):
            self.state = self._recent[at].before
        del self._recent[at:]
        self.ledger.append(inp)  # the ledger replays in event-time order: it takes its place
        if self._lobby is not None:
            bisect.insort(self._lobby, inp, key=lambda one: one.t_ns)
        outcomes: list[Outcome] = [note]
        for redone in (inp, *again):
            outcomes += self._step(redone, save=False)
        return outcomes


def _game_clock(t_ns: int) -> str:
    """A time of the game as the table reads it: 4:07.3 (minutes, seconds)."""
    minutes, seconds = divmod(t_ns / NS_PER_S, 60)
    return f"{minutes:.0f}:{seconds:04.1f}"
