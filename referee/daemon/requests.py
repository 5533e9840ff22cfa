"""The page's writes, as the main loop takes them between two decisions (inbox.Asked, from
daemon/control_socket.py): each is shown at once, kept once shown, and answered once it is
on the disk, so that nothing is kept that the table was not shown.

One handler a request type (inbox.PageRequest). The rules a phone set for the next games
live here (`next_rules`): read from the store at the start, over the settings file's.
"""

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from referee.config import ConfigError, NextRules, with_phone
from referee.errors import StoreError
from referee.inbox import (
    Asked,
    DeleteClips,
    FileRules,
    Hint,
    NameSeat,
    NewGame,
    Photo,
    Reply,
    SetRules,
    Table,
)
from referee.rules import Phase, Settings, settings_changes
from referee.store.ledger import Change
from referee.store.paths import phone_path
from referee.store.store import Store

from .session import Session

if TYPE_CHECKING:
    from referee.audio.clips import ClipStore

    from .watching import Watching

log = logging.getLogger(__name__)


def rules_at_start(file: Settings, store: Store) -> tuple[NextRules, str | None]:
    """The settings file's rules and those a phone set over them (the store keeps them);
    the file's alone, and the trouble to show that says why, when those cannot be read or
    no longer go with the file's."""
    try:
        rules, trouble = with_phone(file, store.next_rules())
    except StoreError as err:
        rules, trouble = NextRules.of(file), f"the rules a phone set cannot be read: {err}"
    if trouble is not None:
        log.warning("%s", trouble)
    if rules.over_file is not None:  # whose settings win is said, not guessed at
        log.info("%s (`referee config --reset-page` sets them back)", rules.over_file)
    return rules, trouble


class Requests:
    """The page's writes on the loop's session. `messages` and `troubles` are the loop's:
    what the screens say. `clips`: the clips beside the store, when a phone deletes them;
    `hint`: the camera's answer to "is there a SET?" asked at a time (monotonic), shown;
    `camera`: the camera's work, which a phone's photo and the page's look at it ask."""

    def __init__(
        self,
        session: Session,
        next_rules: NextRules,
        messages: deque[str],
        troubles: dict[tuple[str, str], str],
        clips: Callable[[], "ClipStore"],
        hint: Callable[[int], str],
        camera: "Watching",
        clock: Callable[[], int],
    ) -> None:
        self.session = session
        self.next_rules = next_rules
        self._messages, self._troubles = messages, troubles
        self._clips, self._hint, self._clock = clips, hint, clock
        self._camera = camera
        self._shown: list[Change] = []  # the page's changes, to the ledger once shown

    def take(self, asked: Asked) -> None:
        match asked:
            case Asked(request=NameSeat() as request, reply=reply):
                self.name_seat(request, reply)
            case Asked(request=SetRules() | FileRules() as request, reply=reply):
                self.set_rules(request, reply)
            case Asked(request=NewGame(), reply=reply):
                self.new_game(reply)
            case Asked(request=DeleteClips() as request, reply=reply):
                self.delete_clips(request, reply)
            case Asked(request=Hint(), reply=reply):
                self.hint(reply)
            case Asked(request=Photo(), reply=reply):
                if reply.take():  # the phones the camera, or why not; nothing kept
                    reply.give(self._camera.phone(phone_path(self.session.store.path)))
            case Asked(request=Table(), reply=reply):
                if reply.take():
                    reply.give(None, said=self._camera.table(self._clock()))

    def name_seat(self, request: NameSeat, reply: Reply) -> None:
        """The page names a seat: shown at once, kept once shown (keep_changes)."""
        if not reply.take():
            return  # its asker gave up: the table was told nothing
        seat, name = request.seat, request.name
        if (why := self.session.seating(seat, name)) is not None:
            log.info("no name for seat %d: %s", seat, why)
            reply.give(why)
            return
        self.session.names[seat] = name
        # "seat 2", never "P2": the screens write a named seat's P2 as its name (Ann is Ann).
        said = f"seat {seat} is {name}"
        self._messages.append(said)
        game = self.session.ledger.game_id
        self._keep(said, lambda store: store.name_seats(game, [(seat, name)]), reply)

    def set_rules(self, request: SetRules | FileRules, reply: Reply) -> None:
        """The page sets the next games' rules, checked as the settings file's are: a game
        in its lobby takes them at once, a started one keeps its own and the screen says
        what the next will differ in. FileRules sets them back to the settings file's.
        Shown at once, kept once shown (keep_changes)."""
        if not reply.take():
            return
        reset = isinstance(request, FileRules)
        try:
            if isinstance(request, FileRules):  # the store's keys go even when set aside
                rules = NextRules.of(self.next_rules.file)  # (troubles)
            else:
                rules = self.next_rules.changed(request.values)
        except ConfigError as err:
            reply.give(str(err))
            return
        if rules == self.next_rules and not reset:
            reply.give(None)  # nothing changes: nothing to tell, nothing to keep
            return
        changed = settings_changes(self.next_rules.settings, rules.settings)
        self.next_rules = rules
        self._troubles.pop(("rules", "phone"), None)  # a phone's rules are in use again
        lobby = self.session.take_rules(rules.settings)
        whose = "this game's" if lobby else "the next game's"
        if reset:
            said = f"{whose} rules are the settings file's: what phones set is forgotten"
            said += f" ({changed})" if changed else ""
        else:
            said = f"a phone set {whose} rules: {changed or 'as the settings file says'}"
        self._messages.append(said)
        phone, settle = dict(rules.phone), self.session.in_lobby
        self._keep(said, lambda store: store.set_next_rules(phone, settle), reply)

    def new_game(self, reply: Reply) -> None:
        """The page asks for a new game: as SUPER after the end, and only then (a game in
        play is ended at the box, where the table sees it: UNDO held 3 s)."""
        if not reply.take():
            return
        phase = self.session.state.phase
        if phase is Phase.LOBBY:
            reply.give("this game has not started yet: it is a new game already")
            return
        if phase is not Phase.OVER:
            reply.give("a game is under way: end it at the box first (UNDO held 3 s)")
            return
        if refused := self.session.start_next(self._clock()):  # the ended game stays
            said = refused[0].text  # why: the disk has not taken all of it
            self._messages.append(said)
            reply.give(said, trouble=True)
            return
        said = f"a phone started a new game: game {self.session.ledger.game_id}"
        log.info("%s", said)
        self._messages.append(said)
        reply.give(None)

    def delete_clips(self, request: DeleteClips, reply: Reply) -> None:
        """The page deletes the clips of a game's calls: the table is told, and the files
        go on a thread of their own, which answers once they are gone (the loop never
        waits for the disk)."""
        if not reply.take():
            return
        said = f"a phone deleted the clips of game {request.game}"
        log.info("%s", said)
        self._messages.append(said)
        threading.Thread(
            target=_delete_clips,
            args=(self._clips(), request.game, reply),
            name="delete clips",
            daemon=True,  # a clip at a time, its JSON first: a stop halfway leaves whole clips
        ).start()

    def hint(self, reply: Reply) -> None:
        """The page asks whether the table holds a SET: shown as the buttons' gesture shows
        it, and the page told the same. Advice: nothing to keep, answered at once."""
        if reply.take():
            reply.give(None, said=self._hint(self._clock()))

    def _keep(self, said: str, write: Callable[[Store], None], reply: Reply) -> None:
        """A change shown from the next frame on, to the ledger once shown."""
        log.info("%s: to be shown", said)
        self._shown.append(Change(said, write, _saved(reply)))

    def keep_changes(self) -> None:
        """The changes the outputs show now go to the ledger, which answers when they are
        on the disk: nothing is kept that the table was not shown."""
        for change in self._shown:
            log.info("%s: shown; to the ledger", change.said)
            self.session.ledger.keep(change)
        self._shown.clear()


def _delete_clips(clips: "ClipStore", game: int, reply: Reply) -> None:
    try:
        gone = clips.delete(game)
    except OSError as err:
        log.warning("the clips of game %d: %s", game, err)
        reply.give(f"not all deleted: {err.strerror or err}", trouble=True)
        return
    log.info("game %d: %s", game, gone)
    reply.give(None)


def _saved(reply: Reply) -> Callable[[str | None], None]:
    """What the ledger says of a name: on the disk, or the disk's trouble."""
    return lambda why: reply.give(why, trouble=why is not None)
