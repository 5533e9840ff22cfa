"""Memory given back to the system: the C allocator's free memory (glibc keeps what a
process freed for its next allocations, where the page's server and the clips' cutter
would rather hold less: docs/design.md, "The page" and "The microphone"), and the pages
of libraries a process loaded and no longer reads (the camera's: OpenCV's and numpy's)."""

import ctypes
from collections.abc import Iterable
from pathlib import Path

# None where the C library has no malloc_trim (not glibc): there, nothing is given back.
_MALLOC_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None)


def give_back_free_memory() -> None:
    """The pages of the allocator's free chunks returned to the system (malloc_trim(0))."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


# madvise(2)'s advice: reclaim these pages now (Linux 5.4); an older kernel says EINVAL.
_MADV_PAGEOUT = 21
_LIBC = ctypes.CDLL(None, use_errno=True)
_MADVISE = getattr(_LIBC, "madvise", None)
if _MADVISE is not None:
    _MADVISE.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def give_back_file_pages(folders: Iterable[Path]) -> int:
    """The pages of the files under `folders` that this process maps, and no other does,
    handed back to the kernel (MADV_PAGEOUT): a library's code and data that were read
    while it loaded and are not read again. The pages it goes on reading come back one
    at a time as it reads them (a kernel that caches a file in large folios, Linux 6.16's
    ext4, would otherwise keep each folio whole for one page of it read: OpenCV's
    library, 50 of its 78 MB, for 2.4 MB read a frame; bench/camera.py). How many
    mappings were advised; 0 where the kernel or the C library cannot."""
    if _MADVISE is None:
        return 0
    prefixes = tuple(f"{folder}/" for folder in folders)
    advised = 0
    with Path("/proc/self/maps").open() as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or not fields[5].rstrip("\n").startswith(prefixes):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if _MADVISE(start, end - start, _MADV_PAGEOUT) == 0:
                advised += 1
    return advised
