"""The threads on which the page's server reads at length, each a lane of its own: one for
a game replayed for the history and a clip's listing and waveform, one for the clips'
sounds, so that a hundred downloads of a sound never make the history wait (and a 503).
The live state's reads never wait behind them, and a thread's memory is all each takes
(each thread that allocates gets an arena of its own from the C library, and the page
has 40 MB: docs/design.md, "The page"). At most WAITING_MAX requests wait for a lane;
another is a 503 that says to ask again.
"""

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from starlette.exceptions import HTTPException

from referee.errors import StoreError
from referee.linux.allocator import give_back_free_memory

WAITING_MAX = 8

T = TypeVar("T")


class Worker:
    def __init__(self, name: str = "reader") -> None:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._waiting = 0

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)

    async def run(
        self, job: Callable[..., T], *args: object, bounded: bool = True, **kwargs: object
    ) -> T:
        """The job's result, from the thread; a 503 while too many wait for it (not for a
        job that is not `bounded`: the next piece of an answer already begun), or with
        the reason the store cannot be read."""
        if bounded and self._waiting >= WAITING_MAX:
            raise HTTPException(503, "busy with other requests; ask again", {"Retry-After": "1"})
        self._waiting += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._thread, lambda: _trimmed(job(*args, **kwargs)))
        except StoreError as err:
            raise HTTPException(503, err.reason) from None
        finally:
            self._waiting -= 1


def _trimmed(result: T) -> T:
    """The job's result, what it freed (a count's replays, a clip's samples) given back to
    the system: the page's server is 0.6 to 1.5 MB smaller once it has counted 2,000 games
    (docs/design.md, "The page", its history and stats)."""
    give_back_free_memory()
    return result
