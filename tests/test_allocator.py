"""Memory given back to the system (referee/linux/allocator.py): the pages of a library
loaded, read once and not again, go back to the kernel (the camera's process, issue 32)."""

import mmap
import os
import tempfile
from pathlib import Path

from referee.linux import allocator

SIZE = 4 << 20


def _resident_kb(path: Path) -> int:
    """The resident kB of this process's mappings of `path` (/proc/self/smaps)."""
    total, mapped = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields[0]) > 8 and ":" not in fields[0]:
            mapped = len(fields) >= 6 and fields[5] == str(path)
        elif mapped and fields[0] == "Rss:":
            total += int(fields[1])
    return total


def test_the_pages_of_a_file_mapped_here_alone_go_back_and_come_back_when_read():
    # On the disk, not a tmpfs: a tmpfs's pages have nowhere to go without swap.
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        library = Path(folder, "libsome.so")
        data = os.urandom(SIZE)
        library.write_bytes(data)
        with library.open("rb") as file:
            os.fsync(file.fileno())  # clean pages: nothing to write back first
            with mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ) as mapped:
                read = sum(mapped[i] for i in range(0, SIZE, mmap.PAGESIZE))
                assert _resident_kb(library) >= SIZE // 1024 * 0.9
                other = Path(folder).with_name(Path(folder).name + "-other")
                assert allocator.give_back_file_pages([other]) == 0  # another folder's
                assert _resident_kb(library) >= SIZE // 1024 * 0.9
                assert allocator.give_back_file_pages([Path(folder)]) == 1
                assert _resident_kb(library) < SIZE // 1024 / 4
                # Read again, the same bytes: only what is read is resident again.
                assert mapped[SIZE // 2] == data[SIZE // 2]
                assert sum(mapped[i] for i in range(0, SIZE, mmap.PAGESIZE)) == read
