"""One game at the table: the engine's state, the ledger that keeps it, and the game clock.

Every input is written to the ledger before `play` returns its effects, so nothing is
shown that a power cut could lose (while the disk fails, inputs wait in order in memory
and the screen says so). The game clock is the daemon's monotonic clock shifted so that
a game starts at 0 and a resumed game carries on from its last stored input: the time
the box was off does not count, and a running timer gets back the time between that
input and the power cut.
"""

import logging
from dataclasses import replace

from .arbiter import Decision
from .edges import PLAYER_BUTTONS
from .rules import (
    Effect,
    Ignored,
    Input,
    Phase,
    Settings,
    State,
    Tick,
    new_game,
    parse_input,
    settings_values,
    step,
    words,
)
from .store import Ledger, Store, StoreError

log = logging.getLogger(__name__)


class Session:
    settings: Settings
    state: State
    ledger: Ledger
    origin_ns: int  # the monotonic time at the game clock's 0
    last_ns: int  # the game time of the latest input

    def __init__(self, store: Store, rules: Settings, *, tie_floor_ns: int, now_ns: int) -> None:
        """Resume the store's latest game, or start one in the lobby. now_ns: monotonic."""
        self.store = store
        # The tie window never goes below what the input can resolve (DESIGN.md, arbiter).
        self.rules = replace(rules, tie_ns=max(rules.tie_ns, tie_floor_ns))
        game = store.latest_game()
        if game is None:
            self._new_game(now_ns)
            return
        self.settings = game.settings
        self.state = game.state()
        self.ledger = Ledger(store, game.id)
        last_ns = game.inputs[-1].t_ns if game.inputs else 0
        self.origin_ns = now_ns - last_ns
        self.last_ns = last_ns
        log.info(
            "resumed game %d (%d inputs, phase %s)", game.id, len(game.inputs), self.state.phase
        )
        if self.settings != self.rules:  # the settings file, or the input's resolution
            was, will = settings_values(self.settings), settings_values(self.rules)
            differ = [f"{k} {was[k]} (the next game: {will[k]})" for k in was if was[k] != will[k]]
            log.info("game %d keeps the rules it started with: %s", game.id, ", ".join(differ))

    def _new_game(self, now_ns: int) -> None:
        self.settings = self.rules
        self.state = new_game(self.settings, lobby=True)
        self.ledger = Ledger(self.store, self.store.new_game(self.settings, lobby=True))
        self.origin_ns = now_ns
        self.last_ns = 0
        log.info(
            "game %d: %s rules, %d seats",
            self.ledger.game_id,
            self.settings.rules,
            self.settings.players,
        )

    def game_ns(self, mono_ns: int) -> int:
        return mono_ns - self.origin_ns

    def mono_ns(self, game_ns: int) -> int:
        return game_ns + self.origin_ns

    def play(self, decision: Decision) -> list[Effect]:
        """A decided button press: its input goes to the engine and the ledger."""
        if decision.button == "SUPER" and self.state.phase is Phase.OVER:
            return self._next_game(decision.t_ns)
        # The replay scripts' words for it: one grammar for scripts, ledger and buttons.
        button = decision.button
        said = ["press", button[1:]] if button in PLAYER_BUTTONS else [button.lower()]
        return self._feed(parse_input(said, self.game_ns(decision.t_ns)))

    def _next_game(self, now_ns: int) -> list[Effect]:
        """SUPER after the end: a new game, once every input of this one is saved."""
        if not self.ledger.flush():
            return [Ignored(f"the ended game is not all saved yet ({self.ledger.trouble})")]
        try:
            self._new_game(now_ns)
        except StoreError as err:
            log.error("cannot start a new game: %s", err)
            return [Ignored(f"no new game: {err.reason}")]
        return []

    def tick(self, mono_ns: int) -> list[Effect]:
        """Let the game's timers fire up to now; only a tick that fired one is kept."""
        return self._feed(Tick(self.game_ns(mono_ns)))

    @property
    def deadline_mono_ns(self) -> int | None:
        deadline = self.state.deadline
        return None if deadline is None else self.mono_ns(deadline)

    def _feed(self, inp: Input) -> list[Effect]:
        if inp.t_ns < self.last_ns:
            raise ValueError(f"{words(inp)} at {inp.t_ns} ns comes before {self.last_ns} ns")
        state, effects = step(self.settings, self.state, inp)
        if not isinstance(inp, Tick) or state is not self.state:
            self.ledger.append(inp)  # durable (or queued and shown as trouble) before shown
        self.state = state
        self.last_ns = inp.t_ns
        return effects
