"""Lines framed on "\\n" from bytes as they come, each at most a bound long: the serial
board's (inputs/serial_board.py) and the camera's process's (camera/process.py). A reader
that frames its own would hand on half a line on a timeout, or hoard a line without end."""


class LineFramer:
    """Bytes in as they come, complete lines out (without their "\\n")."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self._partial = bytearray()
        self._skipping = False  # inside a line already handed out or dropped: up to its "\\n"

    def feed(self, data: bytes) -> list[bytes]:
        """The lines data completes; the unfinished rest waits for more. A line longer
        than max_line is handed out cut at max_line + 1 bytes (to be found bad) the
        moment it is that long, and the rest of it is skipped: noise is not hoarded."""
        *ends, rest = data.split(b"\n")
        lines = []
        for end in ends:
            if self._skipping:
                self._skipping = False
            else:
                lines.append(bytes(self._partial + end)[: self.max_line + 1])
            self._partial.clear()
        if not self._skipping:
            self._partial += rest
            if len(self._partial) > self.max_line:
                lines.append(bytes(self._partial[: self.max_line + 1]))
                self._partial.clear()
                self._skipping = True
        return lines

    def skip_line(self) -> None:
        """Drop what is left of the current line: its start was thrown away."""
        self._partial.clear()
        self._skipping = True

    def reset(self) -> None:
        self._partial.clear()
        self._skipping = False
