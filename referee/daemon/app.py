"""`referee run`: the one place that wires inputs, arbiter, engine, store and outputs.

One thread, this one, owns the engine, the store and the screens (docs/design.md). It sleeps
in one wait on every input source's file descriptor (the kernel wakes it), the
inbox's pipe (signals) and the store's folder (inotify: the store deleted or moved is
written anew), until news comes or the next thing is due: a decision the
sources' watermark must pass, a timer, a frame or the watchdog.
A press about to be decided it waits for awake (PRESS_AWAKE_NS).
Then it reads every source until empty, and only then decides: in event time, behind
the watermark (docs/design.md, "Event time"), so a stall may delay a decision, never change
it. At idle it wakes only for the watchdog and, with a window, to take its events. The
ledger is written behind it, by the ledger's own thread: an input's effects are shown
without waiting for the disk (docs/design.md, "The store").

This module holds the loop and the wiring, nothing else: the page's writes are
requests.py's, the microphone's clips and REPLAY listening.py's, the camera's watching.py's.
"""

import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from referee.buttons import HINT, REPLAY
from referee.config import Config
from referee.errors import UnsavedInputs
from referee.inbox import (
    Asked,
    Finished,
    Inbox,
    LedgerNews,
    Quit,
    Seen,
    SourceStatus,
    Status,
    Unread,
    signals_to,
)
from referee.inputs.edges import Edge, LostTrack
from referee.inputs.keyboard import WindowKeys
from referee.outputs import captions
from referee.outputs.lights import led_modes
from referee.outputs.sound import HINT_HEARD, Plan, countdown_plan, sounds_for
from referee.rules import Phase
from referee.store import rescue
from referee.store.mark import served_at
from referee.store.paths import pin_path, socket_path
from referee.store.store import Store
from referee.store.watch import StoreWatch
from referee.units import NS_PER_S
from referee.view import Join, Notice, Severity, View

from .arbiter import Arbiter
from .control_socket import open_control
from .devices import (
    check_openable,
    look_for_microphone,
    open_devices,
    open_microphone,
    open_screen,
    pick_display,
    pick_input,
)
from .listening import Listening
from .lobby import JoinSign
from .mux import Item
from .page_process import PAGE
from .requests import Requests, rules_at_start
from .session import Outcome, Session
from .systemd import Notifier
from .watching import Watching

if TYPE_CHECKING:  # pygame is imported only when a window is opened, numpy with a microphone
    from referee.audio.cutter_process import CutterProcess

log = logging.getLogger(__name__)

MESSAGES_KEPT = 6
WINDOW_POLL_NS = 500_000_000
# A frame is drawn ahead of its moment by as long as the last one took, up to this.
FRAME_LEAD_MAX_NS = 20_000_000
# The share of its time the loop may spend drawing: a frame that took longer than the
# frame rate allows is followed by a rest of a third of what it took. A loop drawing
# without a rest is busy the whole second, and at SCHED_FIFO (daemon/realtime.py) the
# kernel's real-time throttling then stops it, and the sound's thread with it, for 50 ms
# of every second (sched_rt_runtime_us: 95 %): bench/latency.py's loop drawing on every
# pass heard and showed 1 press in 20 some 40-57 ms late, waiting on the CPU's queue.
DRAW_SHARE = 0.75
# A press due to be decided this soon is waited for awake (Inputs.wait): a sleeping CPU
# may wake milliseconds late, and a press waits only the kernel's bound and the tie
# window. So the box spends at most this much CPU on each press.
PRESS_AWAKE_NS = 2_000_000
NOT_SERVED = "not served now"  # the lobby's sign while the page's process is dead


@dataclass(frozen=True)
class RunOptions:
    config: Config
    store_path: Path
    input: str = "auto"  # auto | gpio | keyboard | serial:DEVICE
    display: str = "auto"  # auto | window | kms[:CARD] | terminal | none; or A+B: both


class App:
    def __init__(
        self,
        options: RunOptions,
        *,
        clock: Callable[[], int] = time.monotonic_ns,
        stdin_fd: int | None = None,
        stdout: TextIO | None = None,
        cutter: "CutterProcess | None" = None,
    ) -> None:
        """cutter: the clips' cutter forked at the daemon's start (early.fork_cutter),
        for the clips' writer; stopped at once if the microphone does not listen."""
        self.options = options
        self.clock = clock
        self.messages: deque[str] = deque(maxlen=MESSAGES_KEPT)
        self.troubles: dict[tuple[str, str], str] = {}  # (source, condition) -> what is wrong
        self.unsaved: UnsavedInputs | None = None  # at exit: where the waiting inputs went
        # Whatever opened is closed again if a later part cannot open (and by close()).
        with contextlib.ExitStack() as opened:
            kind, displays = pick_input(options.input), pick_display(options.display)
            check_openable(kind, displays, stdin_fd)
            # The ledger next: a store that cannot be used (another referee's, not a
            # store) stops the box before any device is touched.
            self.store = Store.open(options.store_path)
            opened.callback(self.store.close)
            self.inbox = Inbox()
            opened.callback(self.inbox.close)
            # The page's writes (control_socket.py): closed before the inbox its requests go to.
            self.control = open_control(socket_path(self.store.path), self.inbox)
            if self.control is not None:
                opened.callback(self.control.close)
            rules, trouble = rules_at_start(options.config.game, self.store)
            if trouble is not None:
                self.troubles[("rules", "phone")] = trouble
            self.join: JoinSign | None = None  # while the page is served (page_at)
            self.notifier = Notifier()
            opened.callback(self.notifier.close)
            # One screen, or several shown as one (outputs/composite.py): the loop holds one.
            shown = open_screen(displays, self.inbox, options.config.display, stdout, clock)
            self.screen, self.window = shown.screen, shown.window
            self.display = shown.kind  # "terminal"; several joined by +: "window+terminal"
            self.shown_as = shown.name  # as the log names it: "kms (card0 1280x720)"
            if self.screen is not None:
                opened.callback(self.screen.close)
            started_ns = self.clock()  # before any edge the buttons can stamp
            devices = open_devices(
                options.config,
                kind,
                self.inbox,
                display=self.display,
                window=self.window,
                stdin_fd=stdin_fd,
                clock=clock,
            )
            opened.callback(devices.close)
            self.inputs, self.lights, self.speaker = devices.inputs, devices.lights, devices.speaker
            self.microphone, trouble = open_microphone(options.config.audio)
            if self.microphone is not None:
                opened.callback(self.microphone.close)
                self.microphone.tell(self.inbox.put)  # lost and back: the notices
            if trouble is not None:
                self.troubles[("microphone", "open")] = trouble
            audio = options.config.audio
            # None at the start: looked for now and then (a USB one plugged in late).
            look = look_for_microphone(audio) if self.microphone is None else None
            self.listening = Listening(
                self.microphone, audio, self.store.path, self.inbox, clock, cutter, look
            )
            opened.callback(self.listening.close)  # before the microphone it cuts from
            clips = self.listening.clip_store()
            self.watching = Watching(options.config.camera, self.inbox, clips, started_ns)
            opened.callback(self.watching.close)
            self.store_watch = StoreWatch(self.store.path, clock)
            opened.callback(self.store_watch.close)
            if (watched := self.store_watch.fileno()) is not None:
                self.inputs.wake_on(watched)
            self.arbiter = Arbiter(options.config.buttons)
            self.session = Session(
                self.store,
                rules.settings,
                tie_floor_ns=self.inputs.resolution_ns,
                now_ns=started_ns,
                told=lambda: self.inbox.put(LedgerNews()),
            )
            self.requests = Requests(
                self.session,
                rules,
                self.messages,
                self.troubles,
                self.listening.clip_store,
                self.hint,
                self.watching,
                clock,
            )
            opened.callback(self._save_what_waits)
            if self.session.resumed:
                self.messages.append(self.session.resumed)
            self._close = opened.pop_all()
        self._last_ping = self.clock()
        self._next_frame_ns = 0
        self._frame_lead_ns = 0  # how long the last frame took to draw and flip
        self._next_window_poll = 0
        self._plan: Plan = ()

    def page_at(self, listen: str, *, elsewhere: bool = False) -> None:
        """The page is served at listen (HOST:PORT): the lobby shows its address and the
        PIN (daemon/lobby.py). elsewhere: by another process, so only while it marks the page
        served, at the address it serves at (store/mark.py)."""
        store = self.store.path
        served = (lambda: served_at(store)) if elsewhere else None
        self.join = JoinSign(listen, pin_path(store), self.clock, served=served)

    # --- the loop --------------------------------------------------------------------------

    def run(self) -> int:
        with signals_to(self.inbox):
            for button in self.inputs.held_at_start():
                self.arbiter.held_at_start(button, self.clock())
            self.notifier.ready(f"{self.inputs.name}, game {self.session.ledger.game_id}")
            log.info(
                "input %s, display %s, store %s", self.inputs.name, self.shown_as, self.store.path
            )
            try:
                return self._loop()
            finally:
                self.notifier.stopping()
                self.close()

    def _loop(self) -> int:
        while True:
            view = self.view()
            self.present(view)
            self.requests.keep_changes()
            self._poll_window()
            now = self.clock()
            for item in self.inputs.wait(self._timeout(now, view), awake=self._press_due(now)):
                if isinstance(item, Quit):
                    log.info("stopping: %s", item.reason)
                    return 0
                self._take(item)
            self.step(self.clock())

    @property
    def _window_polled(self) -> bool:
        """A window that is not the input: its events are taken now and then."""
        return self.window is not None and not isinstance(self.inputs.sources[0], WindowKeys)

    def _poll_window(self) -> None:
        """A window's events (its closing, its uncovering) wait in SDL's queue, which has
        no descriptor to wait on; taken, they go to the inbox and wake the wait."""
        now = self.clock()
        if self.window is not None and self._window_polled and now >= self._next_window_poll:
            self.window.take_events()
            self._next_window_poll = now + WINDOW_POLL_NS

    def step(self, now_ns: int) -> list[Outcome]:
        """Decide what the sources' watermark has passed, play it, let the timers fire."""
        outcomes: list[Outcome] = []
        watermark = self.inputs.watermark_ns
        tie_ns = self.session.settings.tie_ns
        decisions = self.arbiter.advance(watermark, tie_ns)
        for decision in decisions:
            if decision.button == REPLAY:  # no input of the rules: nothing of it is kept
                self.messages.append(self.listening.replay(decision.t_ns, now_ns, self.session))
                continue
            if decision.button == HINT:  # advice, no input of the rules: nothing is kept
                self.hint(decision.t_ns)
                continue
            outcomes += self.session.play(decision)
            # At each decision, not once the batch is played: of calls opened and judged in
            # one batch (a loop kept from its inputs a moment), none is open after it.
            self.listening.presses(self.session)
            self.watching.snap(self.session)
            if self.session.claim_mono_ns is not None:
                outcomes += self.check_claim(self.session.claim_mono_ns)
        horizon = self.arbiter.horizon(watermark)
        if (seen := self.watching.entry(horizon, self.session.call_mono_ns)) is not None:
            outcomes += self.session.camera(seen)
        outcomes += self.session.tick(horizon)
        for outcome in outcomes:
            log.info("%s", outcome.text)
            self.messages.append(outcome.text)
        for sound in sounds_for(outcomes):
            self.speaker.play(sound)
        self.session.ledger.hand_over()  # after the beep: the disk comes second
        if self.store_watch.due(now_ns) and (said := self.session.ledger.check_path()):
            self.messages.append(said)
        interval = self.notifier.watchdog_interval_ns
        if interval and now_ns >= self._last_ping + interval:
            self.notifier.watchdog()
            self._last_ping = now_ns
        return outcomes

    def hint(self, t_ns: int) -> str:
        """The camera's answer to "is there a SET?", asked at t_ns (monotonic): on the
        screen, in the log, and a double pip that says the question was heard."""
        said = self.watching.hint(t_ns)
        log.info("hint: %s", said)
        self.messages.append(said)
        self.speaker.play(HINT_HEARD)
        return said

    def check_claim(self, t_ns: int) -> list[Outcome]:
        """The camera's check of the no-SET claim made at t_ns (monotonic): on the screen
        and in the log, and with [camera] judge = "decide" entered at once, its buttons
        decided up to it."""
        said, verdict = self.watching.check(t_ns, judged=self.session.state.claim)
        if said is not None:
            log.info("the no-SET claim: %s", said)
            self.messages.append(said)
        return [] if verdict is None else self.session.camera(verdict)

    def present(self, view: View) -> None:
        """Show the view: the screens, the lights, and the timed sounds of its countdown."""
        # Only a frame drawn holds the next one back: a pass that draws nothing (a
        # release, a window poll) must not push a countdown's next second late.
        started = self.clock()
        if self.screen is not None and self.screen.show(view):
            drawn = self.clock()
            took = drawn - started
            self._frame_lead_ns = min(took, FRAME_LEAD_MAX_NS)
            rest = round(took * (1 - DRAW_SHARE) / DRAW_SHARE)
            self._next_frame_ns = drawn + max(NS_PER_S // self.options.config.display.fps, rest)
        if self.lights is not None:
            self.lights.show(led_modes(view))
        plan = tuple((self.session.mono_ns(t), sound) for t, sound in countdown_plan(view))
        if plan != self._plan:
            self.speaker.plan(plan)
            self._plan = plan

    def _take(self, item: Item) -> None:
        match item:
            case Edge():
                self.arbiter.take(item)
            case LostTrack(button=button, t_ns=t_ns):
                self.arbiter.lose_track(button, t_ns)
            case SourceStatus(source=name, text=text, ok=ok, condition=condition):
                # A trouble going on (a count of bad lines growing) changes its notice,
                # not the messages, whose last one is the game's.
                if ok or (name, condition) not in self.troubles:
                    self.messages.append(text)
                if ok:
                    self.troubles.pop((name, condition), None)
                else:
                    self.troubles[(name, condition)] = text
            case Status():
                self._log_status()
            case LedgerNews():
                pass  # the notices are read from the ledger for the next frame
            case Seen():
                game = (self.session.settings, self.session.state)
                self.watching.seen(item, self.session.call_mono_ns, game)
            case Unread():
                self.watching.unread(item)
            case Asked():
                self.requests.take(item)
            case Finished(take=take):
                if (said := take(self.clock())) is not None:
                    log.info("%s", said)
                    self.messages.append(said)

    def _log_status(self) -> None:
        state = self.session.state
        log.info(
            "status: game %d, phase %s, %d inputs waiting for the disk; input %s, "
            "watermark %.3f s behind; %d late inputs; notices: %s",
            self.session.ledger.game_id,
            state.phase,
            self.session.ledger.pending,
            self.inputs.name,
            (self.clock() - self.inputs.watermark_ns) / NS_PER_S,
            self.session.late,
            "; ".join(n.text for n in self.notices()) or "none",
        )

    def _press_due(self, now_ns: int) -> bool:
        """A press is to be decided within PRESS_AWAKE_NS."""
        due = self.inputs.wake_ns(self.arbiter.press_due_ns(self.session.settings.tie_ns))
        return due is not None and due - now_ns <= PRESS_AWAKE_NS

    def _timeout(self, now_ns: int, view: View) -> float | None:
        """Seconds until the next thing is due (None: until news comes)."""
        tie_ns = self.session.settings.tie_ns
        # What the watermark must pass: a decision the arbiter holds, or a timer.
        wanted = [self.arbiter.next_due_ns(tie_ns), self.session.deadline_mono_ns]
        wanted.append(self.watching.entry_ns)  # the camera's claim, once decided up to it
        times = [self.inputs.wake_ns(min((t for t in wanted if t is not None), default=None))]
        if self.screen is not None and (frame := captions.next_change_ns(view)) is not None:
            # No sooner than the settings' frame rate allows.
            at = self.session.mono_ns(frame) - self._frame_lead_ns
            times.append(max(at, self._next_frame_ns))
        if self.screen is not None:
            times.append(self.screen.wake_ns)  # the console's screen, to ask for it back
        if self._window_polled:
            times.append(self._next_window_poll)
        if self.notifier.watchdog_interval_ns:
            times.append(self._last_ping + self.notifier.watchdog_interval_ns)
        times.append(self.store_watch.wake_ns)
        if self._joining:
            assert self.join is not None
            times.append(self.join.due_ns)  # the Wi-Fi may come up, the PIN change
        due = min((t for t in times if t is not None), default=None)
        return None if due is None else max(0, due - now_ns) / 1e9

    def view(self) -> View:
        """What the outputs show. Its clock is the wall clock, not the watermark: a timer
        on the screen runs to its deadline on time, while the decisions wait for the
        watermark (a press stamped before the deadline still pauses the countdown).

        A frame shows the moment it is flipped, not the moment it is begun: the view is
        of the clock one frame's drawing ahead, so a timer's second turns when it is due."""
        now = self.session.game_ns(self.clock() + self._frame_lead_ns)
        return View(
            settings=self.session.settings,
            state=self.session.state,
            now_ns=max(now, self.session.last_ns),
            messages=tuple(self.messages),
            notices=self.notices(),
            source=self.inputs.name,
            listening=self.listening.listening,
            watching=self.watching.watching,
            table=self.watching.view(),
            replay=self.listening.view(self.clock()),
            names=tuple(sorted(self.session.names.items())),
            join=self._join() if self._joining else None,
        )

    def _join(self) -> Join | None:
        """The lobby's sign: no address to offer while the page's process is dead."""
        if self.join is None:
            return None
        join = self.join.join()  # None while no page is served at all
        if join is not None and (PAGE, "link") in self.troubles:
            return Join(None, join.pin, NOT_SERVED)
        return join

    @property
    def _joining(self) -> bool:
        """The lobby shows how a phone joins the page."""
        return self.join is not None and self.session.state.phase is Phase.LOBBY

    def notices(self) -> tuple[Notice, ...]:
        notices = [Notice(text) for text in self.troubles.values()]
        notices += [Notice(f"{b} is held down: ignored until released") for b in self.arbiter.stuck]
        if late := self.session.late:
            notices.append(Notice(f"{late} input{'s' if late > 1 else ''} came late: see the log"))
        if trouble := self.session.ledger.trouble:
            notices.append(Notice(trouble, Severity.ERROR))
        if next_game := self.session.next_game:
            notices.append(Notice(next_game, Severity.INFO))
        over_file = self.requests.next_rules.over_file_shown
        if self.session.state.phase is Phase.LOBBY and over_file is not None:
            notices.append(Notice(over_file, Severity.INFO))
        return tuple(notices)

    def close(self) -> None:
        self._close.close()

    def _save_what_waits(self) -> None:
        self.session.close()
        ledger = self.session.ledger
        ledger.check_path()  # a store deleted just now: not lost at the exit
        if not ledger.flush():
            log.error("%d inputs could not be saved: %s", ledger.pending, ledger.trouble)
            self.unsaved = rescue.keep(ledger)
            for change in ledger.unsaved_changes:  # made again in a moment: no rescue file
                log.error("not saved: %s", change.said)
