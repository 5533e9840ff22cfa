"""The C allocator's free memory given back to the system: glibc keeps what a process
freed for its next allocations, where the page's server and the clips' cutter would
rather hold less (docs/design.md, "The page" and "The microphone")."""

import ctypes

# None where the C library has no malloc_trim (not glibc): there, nothing is given back.
_MALLOC_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None)


def give_back_free_memory() -> None:
    """The pages of the allocator's free chunks returned to the system (malloc_trim(0))."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
