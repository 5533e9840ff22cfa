"""`referee run` on a store, in this process: its main loop in a thread, on the terminal
display and the keyboard (a pipe), as the page's tests need a daemon to ask."""

import io
import os
import threading
from collections.abc import Callable
from dataclasses import replace

from referee.buttons import KEYMAP
from referee.config import CameraConfig, CameraJudge, default_config
from referee.daemon.app import App, RunOptions
from referee.outputs.terminal import CLEAR

KEY_OF = {button: key for key, button in KEYMAP.items()}


class Daemon:
    """The loop's parts as App.run has them, woken at once by a request or a key."""

    def __init__(
        self,
        store,
        *,
        camera: str = "off",
        judge: CameraJudge = CameraJudge.SHOW,
        hint_where: bool = False,
        **rules,
    ) -> None:
        """camera, judge, hint_where: the settings' [camera] source (a folder:
        tests/camera_frames.py), what it does with the SET a caller takes, and whether a
        hint asked again says where."""
        config = default_config()
        config = replace(config, game=replace(config.game, **{"players": 4, **rules}))
        config = replace(config, camera=CameraConfig(camera, judge, hint_where))
        self._keys, self._typing = os.pipe()
        self.screen = io.StringIO()
        options = RunOptions(config, store, input="keyboard", display="terminal")
        self.app = App(options, stdin_fd=self._keys, stdout=self.screen)
        self._stop = threading.Event()
        self._passed = threading.Condition()  # notified at the end of each pass of the loop
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        app = self.app
        while not self._stop.is_set():
            app.present(app.view())
            app.requests.keep_changes()
            for item in app.inputs.wait(0.05):
                app._take(item)
            app.step(app.clock())
            with self._passed:
                self._passed.notify_all()

    def wait_for(self, check: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
        """Wait until check() holds, looked at after each pass of the loop. The bound says
        "it never happened", not how fast: a camera's or a cutter's process started on two
        cores shared at a load of 15 took more than 5 s (the benchmarks time them)."""
        with self._passed:
            assert self._passed.wait_for(check, timeout_s), f"not within {timeout_s} s: {what}"

    def shown(self) -> str:
        """The terminal's last picture."""
        return self.screen.getvalue().rpartition(CLEAR)[2]

    def press(self, button: str) -> None:
        """The button's key typed on the daemon's keyboard."""
        os.write(self._typing, KEY_OF[button].encode())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.app.close()
        os.close(self._keys)
        os.close(self._typing)
