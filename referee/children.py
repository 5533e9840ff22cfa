"""The daemon's child processes (the page's server, the clips' cutter), ended in bounded time."""

import logging
import subprocess

log = logging.getLogger(__name__)


def wait_or_kill(process: subprocess.Popen[bytes], timeout_s: float, name: str) -> None:
    """Wait for a child told to end (a signal, its input closed); killed after timeout_s,
    said in the log: the daemon's own stop must stay quick."""
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        log.warning("%s did not stop in %g s: killed", name, timeout_s)
        process.kill()
        process.wait()
