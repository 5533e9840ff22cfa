"""One referee per store: the writer holds an exclusive lock on the store file itself.

Two daemons on one store would interleave two tables' inputs into one game. The lock is
flock(2) on the store file, which SQLite's own locks (fcntl byte ranges) never touch;
the kernel drops it when the process ends, however it ends. Readers (`referee state`)
hold no lock: they only ask whether a writer does (`held`). The holder's PID comes from
/proc/locks and what it runs from /proc/PID, so the refusal can name it: another
referee, or another program that locked the file.
"""

import fcntl
import os
from itertools import pairwise
from pathlib import Path

from referee.errors import StoreInUse
from referee.linux.files import open_regular

from .paths import shm_path

PROC_LOCKS = Path("/proc/locks")


def lock(path: Path) -> int:
    """A descriptor of the store file (created empty if missing) holding its lock.

    StoreInUse if another open store holds it; OSError if the file cannot be opened.
    """
    # A store deleted under a running referee, before it noticed: its SQLite still holds
    # the -shm file beside it, which a store created here would share.
    if not path.exists() and (pid := holder_beside(path)) is not None:
        raise StoreInUse(path, pid or None, program(pid))
    fd = open_regular(path, os.O_RDONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = holder(fd)
        os.close(fd)
        raise StoreInUse(path, pid, None if pid is None else program(pid)) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def held(fd: int) -> bool:
    """Whether a writer holds the lock on the store file open as fd (a reader takes none:
    a shared lock, let go at once, only asks)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def holder(fd: int) -> int | None:
    """The PID holding an flock on the file open as fd, if the kernel says (Linux)."""
    return _holder(os.fstat(fd), "FLOCK") or None


def holder_beside(path: Path) -> int | None:
    """Another process that holds a lock on the store's -shm file (SQLite's, while it has
    the store open): its PID, 0 if this one cannot see it; None if there is none."""
    try:
        st = shm_path(path).stat()
    except OSError:
        return None
    return _holder(st, "POSIX", but=os.getpid())


def _holder(st: os.stat_result, kind: str, but: int | None = None) -> int | None:
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = PROC_LOCKS.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        # "3: FLOCK  ADVISORY  WRITE 14073 fe:00:2187265 0 EOF"; "->" lines wait for it.
        fields = line.split()
        if len(fields) >= 6 and fields[1] == kind and fields[5] == device:
            pid = int(fields[4]) if fields[4].isdigit() else 0  # 0: a process unseen
            if pid != but:
                return pid
    return None


def program(pid: int) -> str | None:
    """What a process runs: "referee" for a referee (its command, or python -m referee),
    else its command's name; None where this user cannot see it."""
    try:
        args = [os.fsdecode(a) for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")]
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
    # A script's process is named after it; run through its interpreter, it is argv[1].
    ours = name == "referee" or any(Path(arg).name == "referee" for arg in args[:2])
    return "referee" if ours or ("-m", "referee") in pairwise(args) else name
