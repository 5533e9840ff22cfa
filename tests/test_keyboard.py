"""The keyboard: what is typed in a terminal, and when the window's keys are looked for."""

from referee.inputs.keyboard import KEY_POLL_NS, KEYBOARD_RESOLUTION_NS, WindowKeys, typed

MS = 1_000_000


def test_escape_sequences_typed_are_no_buzzers():
    # Delete, Ctrl+Up, an arrow in application mode, then real keys.
    assert "".join(typed("\x1b[3~\x1b[1;5A\x1bOB1v")) == "1v"


def test_a_lone_escape_and_capitals():
    assert "".join(typed("S\x1b")) == "s"


# --- the window's keys ------------------------------------------------------------------


class FakeWindow:
    """A window whose events come through a descriptor (X11's connection), or none."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.waiting = False
        self.taken = 0

    def events_fd(self) -> int | None:
        return self.fd

    def events_waiting(self) -> bool:
        return self.waiting

    def take_events(self) -> list[tuple[str, bool]]:
        self.taken += 1
        self.waiting = False
        return []


def clock_at(now: list[int]):
    return lambda: now[0]


def test_window_keys_through_a_descriptor_are_waited_on_not_polled():
    now = [1_000 * MS]
    window = FakeWindow(fd=7)
    keys = WindowKeys(window, clock_at(now))
    assert keys.fileno() == 7
    assert keys.resolution_ns == KEYBOARD_RESOLUTION_NS  # taken as they come
    assert keys.wake_ns(None) is None  # nothing due: the descriptor brings news
    assert keys.wake_ns(now[0] + 50 * MS) == now[0] + 50 * MS
    # Events read from the descriptor already (by a drawing's round trip): not slept on.
    window.waiting = True
    assert keys.wake_ns(None) == now[0]
    now[0] += 3 * MS
    assert keys.read() == [] and window.taken == 1
    assert keys.watermark_ns == now[0]


def test_window_keys_without_a_descriptor_are_polled():
    now = [1_000 * MS]
    keys = WindowKeys(FakeWindow(fd=None), clock_at(now))
    assert keys.fileno() is None
    assert keys.resolution_ns == KEY_POLL_NS
    assert keys.wake_ns(None) == now[0] + KEY_POLL_NS
