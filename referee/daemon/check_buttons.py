"""`referee check-buttons`: what a builder runs after wiring, to see every part work.

1. Each buzzer's LED lights on its own, P1 to P8, then all of them.
2. Each seat's note plays on the beeper, P1 to P8.
3. Every button is then named as it goes down and up, through the same debounce the
   game uses: how long it was held, how many bounces it made, and a warning for one
   held down so long the game would call it stuck (a wire on the NC lug, a short).
4. At Ctrl-C (or `q` on a keyboard), a summary: every button's presses and bounces,
   and the ones never seen, with where to look; and, when more buzzers answered than
   the rules seat, the `players` to set and the file to set it in.
"""

import time
from collections.abc import Callable
from typing import TextIO

from referee.buttons import PLAYER_BUTTONS, REPLAY
from referee.config import Config
from referee.inbox import Quit, SourceStatus, signals_to
from referee.inputs.edges import Edge, LostTrack
from referee.outputs.lights import LedMode
from referee.outputs.sound import QueuedSpeaker, call_out
from referee.units import NS_PER_MS, NS_PER_S

from .arbiter import Arbiter
from .devices import Devices

LED_STEP_S = 0.4


class ButtonCheck:
    def __init__(
        self,
        config: Config,
        devices: Devices,
        out: TextIO,
        *,
        clock: Callable[[], int] = time.monotonic_ns,
        pause: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.inputs = devices.inputs
        self.on_gpio = devices.on_gpio
        self.lights = devices.lights
        self.speaker = devices.speaker
        self.out = out
        self.clock = clock
        self.pause = pause
        self.arbiter = Arbiter(config.buttons)
        # Every button the source reads, the seats the rules leave empty included.
        self.buttons = tuple(b for s in self.inputs.sources for b in s.buttons)
        self.seats = sum(1 for b in self.buttons if b in PLAYER_BUTTONS)
        self._levels: dict[str, tuple[bool, int]] = {}  # as last reported
        self._stuck: set[str] = set()

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def run(self) -> int:
        debounce_ms = self.config.buttons.debounce_ns / NS_PER_MS
        self.say(f"buttons: {self.inputs.name}; debounce {debounce_ms:g} ms")
        self.cycle_leds()
        self.play_tones()
        self.say("press and release every button; Ctrl-C (q on a keyboard) when done")
        for button in self.inputs.held_at_start():
            self.arbiter.held_at_start(button, self.clock())
        with signals_to(self.inputs.inbox):
            self.watch()
        self.summary()
        return 0

    def cycle_leds(self) -> None:
        if self.lights is None:
            self.say("LEDs: none with this input")
            return
        seats = range(1, self.seats + 1)
        for seat in seats:
            self.say(f"LED P{seat} on (the others off)")
            self.lights.show({s: LedMode.ON if s == seat else LedMode.OFF for s in seats})
            self.pause(LED_STEP_S)
        self.say("every LED on")
        self.lights.show(dict.fromkeys(seats, LedMode.ON))
        self.pause(2 * LED_STEP_S)
        self.lights.show(dict.fromkeys(seats, LedMode.OFF))

    def play_tones(self) -> None:
        for seat in range(1, self.seats + 1):
            sound = call_out(seat)
            self.say(f"P{seat}'s note: {sound.notes[0][0]} Hz")
            self.speaker.play(sound)
            if isinstance(self.speaker, QueuedSpeaker):
                self.speaker.wait_quiet(timeout_s=2)

    def watch(self) -> None:
        done = False
        while not done:
            wake = self.inputs.wake_ns(self.arbiter.next_due_ns(0))
            timeout = None if wake is None else max(0, wake - self.clock()) / NS_PER_S
            for item in self.inputs.wait(timeout):
                match item:
                    case Quit():
                        done = True  # after what came with it is reported
                    case SourceStatus(text=text):
                        self.say(text)
                    case Edge():
                        self.arbiter.take(item)
                        self.report(item.button)
                    case LostTrack(button=button, t_ns=t_ns):
                        self.arbiter.lose_track(button, t_ns)
            self.arbiter.advance(self.inputs.watermark_ns, 0)
            for button in list(self._levels):
                self.report(button)  # a tap ends when its debounce window does
            self.report_stuck()

    def report(self, button: str) -> None:
        """Say how the button's debounced level changed since it was last reported."""
        down, since = self.arbiter.level(button)
        was_down, down_since = self._levels.get(button, (False, since))
        self._levels[button] = (down, since)
        if down and not was_down:
            self.say(f"{button} down")
        elif was_down and not down:
            bounces = self.arbiter.counts(button)[1]
            held = (since - down_since) / NS_PER_MS
            self.say(f"{button} up: held {held:.0f} ms, {bounces} bounces so far")

    def report_stuck(self) -> None:
        stuck = set(self.arbiter.stuck)
        for button in sorted(stuck - self._stuck):
            self.say(f"{button} STUCK: held down, ignored until released (NC lug? short to GND?)")
        for button in sorted(self._stuck - stuck):
            self.say(f"{button} released: no longer stuck")
        self._stuck = stuck

    def summary(self) -> None:
        self.say("")
        self.say(f"{'button':<8} {'pin':<8} {'presses':>7} {'bounces':>7}")
        never = []
        for button in self.buttons:
            presses, bounces = self.arbiter.counts(button)
            pin = self.config.pins[button] if self.on_gpio else ""
            note = "  never pressed" if not presses else ""
            note += "  STUCK" if button in self._stuck else ""
            self.say(f"{button:<8} {pin:<8} {presses:>7} {bounces:>7}{note}")
            if not presses:
                never.append(button)
        if REPLAY in never:  # a pin with no button reads up: the same as one never pressed
            never.remove(REPLAY)
            self.say(
                f"{REPLAY} never seen: right for a box without that button (UNDO held a"
                " second replays); else check it as the others."
            )
        if never:
            self.say(
                f"never seen: {', '.join(never)}. Check that each one's COM lug goes to GND and"
                " its NO lug to its pin (wiring.md, 'When something is wrong')."
            )
        else:
            self.say("every button works.")
        self.say_seats()

    def say_seats(self) -> None:
        """More buzzers answered than the rules seat: which setting, in which file, seats
        them all (the installed file says players = 4, whatever the box has wired)."""
        game = self.config.game
        players = game.players
        answered = [
            seat
            for seat, button in enumerate(PLAYER_BUTTONS, 1)
            if button in self.buttons and self.arbiter.counts(button)[0]
        ]
        wired = max(answered, default=0)
        if players < wired <= game.book.seats[1]:
            counted = len(answered) == wired
            lead = f"{wired} buzzers answered" if counted else f"buzzers up to P{wired} answered"
            path = self.config.path
            where = (
                f"{path}, then restart the referee (sudo systemctl restart referee)"
                if path is not None
                else "a settings file (`referee config --example > referee.toml` writes one)"
            )
            self.say(
                f"{lead}, the rules seat {players}: for {wired} seats set players = {wired}"
                f" in [rules] of {where}."
            )
        elif self.seats > players:
            off = f"P{players + 1}" + (f"-P{self.seats}" if self.seats > players + 1 else "")
            self.say(
                f"{off}: checked, but off in a game: the rules have {players} seats"
                f" ([rules] players = {players})."
            )
