"""`referee web`: the page's server in a process of its own (docs/design.md, "The page").

The socket is bound before uvicorn starts (listen.py), so that an address in use or not
this computer's is one line naming it, as every mistake a user can fix is.
"""

import asyncio
import logging
import socket
from pathlib import Path

import uvicorn

from referee.rules import Settings

from .listen import address
from .server import create_app

log = logging.getLogger(__name__)

# How long a stop waits for open event streams before it closes them: they never end by
# themselves, and `systemctl stop` should not wait out its own timeout.
GRACEFUL_S = 1


class _Server(uvicorn.Server):
    """uvicorn, which ends the event streams when it stops: else it waits for them until
    its graceful shutdown's timeout, and then cuts them off with an error in the log."""

    def __init__(self, config: uvicorn.Config, closing: asyncio.Event) -> None:
        super().__init__(config)
        self._closing = closing

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._closing.set()
        await super().shutdown(sockets)


def serve(store: Path, pin: Path, sock: socket.socket, rules: Settings) -> None:
    """Serve the page on the listening socket until SIGTERM or SIGINT; `rules`: the
    settings file's."""
    closing = asyncio.Event()
    config = uvicorn.Config(
        create_app(store, pin, rules=rules, closing=closing),
        lifespan="on",
        log_config=None,  # the referee's own logging, to the journal
        access_log=False,  # a phone's every request would fill the journal
        proxy_headers=False,  # nothing stands in front: a header never names the client
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_S,
    )
    log.info("the page at %s (store %s)", address(sock), store)
    _Server(config, closing).run(sockets=[sock])
