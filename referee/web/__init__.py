"""The page on the table's phones: `referee web`, a process of its own beside the daemon
(docs/design.md, "The page"; its contract is docs/web.md).

pin       the PIN, its file, the sessions it opens and the wait after wrong ones
follow    the latest game, read from the store each time the daemon writes it
server    the routes (Starlette): the state, its events, the login; every refusal JSON
listen    the address `[web] listen` names and its socket, without the server's imports
join      how a phone joins: the address it reaches and the PIN, for the lobby's screen
mark      a page served, and where: a lock `referee web` holds beside the store
serve     uvicorn on that socket
page/     the page itself: one HTML file, its style and script inline
"""
