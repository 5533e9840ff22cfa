"""check-buttons: each LED and tone in turn, then every button named as it goes down and up."""

import dataclasses
import io
from pathlib import Path

from referee.buttons import in_play
from referee.config import default_config
from referee.daemon.check_buttons import ButtonCheck
from referee.daemon.devices import Devices
from referee.daemon.mux import Inputs
from referee.inbox import Inbox, Quit
from referee.inputs.edges import Edge
from referee.outputs import sound
from referee.outputs.lights import LedMode
from referee.rules import RuleSet, Settings

MS = 1_000_000
S = 1_000 * MS
T0 = 100 * S


class ScriptedButtons:
    """An input source that presses buttons as a builder would, then asks to stop."""

    name = "GPIO (mock)"
    resolution_ns = 100_000
    buttons = in_play(4)

    def __init__(self, edges: list[Edge]) -> None:
        self.items = [*edges, Quit("done")]
        self.watermark_ns = T0

    def fileno(self) -> None:
        return None

    def wake_ns(self, wanted_ns: int | None) -> int:
        return T0  # now: everything is there at once

    def read(self) -> list:
        items, self.items = self.items, []
        self.watermark_ns = T0 + 20 * S  # all of it, up to the end of the script
        return items

    def held_at_start(self) -> tuple[str, ...]:
        return ()

    def close(self) -> None:
        pass


class Recorder:
    def __init__(self) -> None:
        self.got: list = []

    def show(self, modes) -> None:
        self.got.append(dict(modes))

    def play(self, played) -> None:
        self.got.append(played)

    def close(self) -> None:
        pass


def devices(source, lights=None, speaker=None, *, on_gpio=False) -> Devices:
    inputs = Inputs([source], Inbox(), clock=lambda: T0 + 20 * S)
    return Devices(inputs, lights, speaker or Recorder(), inputs.close, on_gpio)


def run(edges: list[Edge], source=None) -> tuple[str, Recorder, Recorder]:
    out, lights, speaker = io.StringIO(), Recorder(), Recorder()
    check = ButtonCheck(
        default_config(), devices(source or ScriptedButtons(edges), lights, speaker), out,
        clock=lambda: T0 + 20 * S, pause=lambda seconds: None,
    )  # fmt: skip
    assert check.run() == 0
    return out.getvalue(), lights, speaker


def test_leds_and_tones_each_in_turn():
    _, lights, speaker = run([])
    on = [[s for s, mode in modes.items() if mode is LedMode.ON] for modes in lights.got]
    assert on == [[1], [2], [3], [4], [1, 2, 3, 4], []]
    assert speaker.got == [sound.call_out(seat) for seat in (1, 2, 3, 4)]


def test_presses_bounces_a_stuck_button_and_the_summary():
    bouncy = [Edge("P2", T0 + S + i * 200_000, i % 2 == 0) for i in range(5)]  # 3 ups, 2 downs...
    text, _, _ = run([
        Edge("P1", T0, True), Edge("P1", T0 + 120 * MS, False),  # a clean press
        *bouncy, Edge("P2", T0 + S + 150 * MS, False),  # bounces going down
        Edge("VALID", T0 + 2 * S, True), Edge("VALID", T0 + 2 * S + 5 * MS, False),  # a tap
        Edge("P3", T0 + 3 * S, True),  # and never released
    ])  # fmt: skip
    lines = text.splitlines()
    assert "P1 down" in lines and "P1 up: held 120 ms, 0 bounces so far" in lines
    assert "P2 up: held 150 ms, 4 bounces so far" in lines
    assert "VALID up: held 5 ms, 0 bounces so far" in lines  # a tap shorter than the window
    assert "P3 STUCK: held down, ignored until released (NC lug? short to GND?)" in lines
    table = {line.split()[0]: line.split()[1:] for line in lines[lines.index("") + 2 :]
             if line and line.split()[0] in ("P1", "P2", "P3", "P4", "VALID", "UNDO")}  # fmt: skip
    assert table["P1"] == ["1", "0"]  # a source that is no GPIO has no pins to show
    assert table["P2"] == ["1", "4"]
    assert table["P3"][-1] == "STUCK"
    assert table["P4"][-2:] == ["never", "pressed"]
    assert "never seen: P4, INVALID, SUPER, UNDO." in text
    assert (
        "REPLAY never seen: right for a box without that button (UNDO held a second replays);"
        " else check it as the others."
    ) in lines


def test_the_replay_button_is_checked_as_the_others():
    text, _, _ = run([Edge("REPLAY", T0, True), Edge("REPLAY", T0 + 90 * MS, False)])
    lines = text.splitlines()
    assert "REPLAY down" in lines and "REPLAY up: held 90 ms, 0 bounces so far" in lines
    summary = lines[lines.index("") + 2 :]
    [row] = [line.split() for line in summary if line.startswith("REPLAY ")]
    assert row[-2:] == ["1", "0"]
    assert "REPLAY never seen" not in text


def test_on_gpio_the_summary_names_each_buttons_pin():
    from referee.inputs.gpio import GpioButtons
    from tests.fake_gpio import FakeRequest

    config = default_config()
    buttons = GpioButtons(config.pins, config.buttons.resolution_ns, chip=Path("/dev/gpiochip0"),
                          request=FakeRequest.on)  # fmt: skip
    check = ButtonCheck(config, devices(buttons, on_gpio=True), io.StringIO())
    try:
        check.arbiter.take(Edge("P2", T0, True))
        check.summary()
    finally:
        buttons.close()
    lines = check.out.getvalue().splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:-1]}
    assert rows["P2"][:2] == [config.pins["P2"], "1"]
    assert rows["VALID"][:2] == [config.pins["VALID"], "0"]
    assert rows["P8"][:2] == [config.pins["P8"], "0"]  # every wired seat is checked...
    assert (
        lines[-1]
        == "P5-P8: checked, but off in a game: the rules have 4 seats ([rules] players = 4)."
    )


def eight_buzzers(config, presses: list[str], *, path: Path | None = None) -> list[str]:
    """The summary of a check on GPIO whose builder pressed these buttons."""
    from referee.inputs.gpio import GpioButtons
    from tests.fake_gpio import FakeRequest

    config = dataclasses.replace(config, path=path)
    buttons = GpioButtons(config.pins, config.buttons.resolution_ns, chip=Path("/dev/gpiochip0"),
                          request=FakeRequest.on)  # fmt: skip
    check = ButtonCheck(config, devices(buttons, on_gpio=True), io.StringIO())
    try:
        for n, button in enumerate(presses):
            check.arbiter.take(Edge(button, T0 + n * S, True))
        check.summary()
    finally:
        buttons.close()
    return check.out.getvalue().splitlines()


def test_more_buzzers_answering_than_the_rules_seat_says_what_to_set():
    """A box wired with 8 buzzers played 4 seats until the file was edited, and nothing
    said so: the check counts the buzzers that answered and names the setting and file."""
    etc = Path("/etc/referee/referee.toml")
    lines = eight_buzzers(default_config(), [f"P{n}" for n in range(1, 9)], path=etc)
    assert lines[-1] == (
        "8 buzzers answered, the rules seat 4: for 8 seats set players = 8 in [rules] of"
        f" {etc}, then restart the referee (sudo systemctl restart referee)."
    )
    lines = eight_buzzers(default_config(), ["P1", "P2", "P6"], path=etc)
    assert lines[-1].startswith("buzzers up to P6 answered, the rules seat 4: for 6 seats set")


def test_without_a_settings_file_the_check_says_how_to_make_one():
    lines = eight_buzzers(default_config(), [f"P{n}" for n in range(1, 7)])
    assert lines[-1] == (
        "6 buzzers answered, the rules seat 4: for 6 seats set players = 6 in [rules] of a"
        " settings file (`referee config --example > referee.toml` writes one)."
    )


def test_no_seats_to_add_for_the_rules_of_one_player_nor_when_the_rules_seat_them_all():
    solo = default_config()
    solo = dataclasses.replace(solo, game=Settings(rules=RuleSet.SOLO, players=1))
    assert "answered" not in eight_buzzers(solo, ["P1", "P5"])[-1]
    assert "answered" not in eight_buzzers(default_config(), ["P1", "P3"])[-1]


def test_a_machine_without_gpio_says_so_once(monkeypatch, capsys):
    """`check-buttons --input gpio` printed its reason twice, once behind "not checking the
    empty seats:": the empty seats are only left out when the seats in play can open."""
    from referee import cli
    from referee.errors import GpioError
    from referee.inputs import gpio

    def no_chip() -> Path:
        raise GpioError("no GPIO here (test)")

    monkeypatch.setattr(gpio, "find_chip", no_chip)
    assert cli.main(["check-buttons", "--input", "gpio"]) == 2
    assert capsys.readouterr().err.splitlines() == ["no GPIO here (test)"]
