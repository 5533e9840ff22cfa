"""The page on the table's phones: `referee web`, a process of its own beside the daemon
(docs/design.md, "The page"; its contract is docs/web.md).

serve         uvicorn on the socket (page_socket.py binds it, or the daemon hands it down)
server        the routes (Starlette): the state, its events, the login; every refusal JSON
guard         what one phone may hold (connections, streams), the names it may ask for
login         the sessions the PIN opens (store/pin.py), the turns in which PINs are checked
follow        the latest game, read from the store each time the daemon writes it
history_api   the history, the stats and the exports (history/); settings_api the rules
clips_api     the calls' clips (audio/clips.py): lists, waveforms, sounds
params        a request's parameters, checked; worker the threads that read at length
page/         the page itself: one HTML file, its style and script inline

It imports nothing of the daemon, the inputs nor the outputs: a phone's write goes to the
daemon over its control socket (control.py), and the lobby's sign is the daemon's own
(daemon/lobby.py, store/mark.py).
"""
