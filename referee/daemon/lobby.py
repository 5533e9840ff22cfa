"""How a phone joins the page, for the lobby's screen: the address it reaches and the PIN.

The page is served at `[web] listen` (or `run --web HOST:PORT`). An address of every
interface (0.0.0.0, ::) is no address a phone can type: the box's own address on the
local network is shown instead, the source address of a UDP socket connected to an
address of that network (connecting a UDP socket only picks a route: nothing is sent,
and the daemon's sandbox lets no packet out anyway). A box with none says "no network".
The daemon looks again every CHECK_NS while the lobby is shown: the Wi-Fi may come up,
or change, after the box has started, and `referee pin --new` may change the PIN.

A page the daemon does not serve itself (`run` without `--web`: referee-web.service on a
box, or `referee web` started by hand) is shown only while its server marks it served
(store/mark.py), at the address it serves at: an address where nothing answers is no way
to join.
"""

import ipaddress
import logging
import socket
from collections.abc import Callable
from pathlib import Path

from referee.config import listen_address
from referee.errors import PinError
from referee.store.pin import ensure_pin
from referee.units import NS_PER_S
from referee.view import Join

log = logging.getLogger(__name__)

CHECK_NS = 10 * NS_PER_S
# While no page is served, looked at sooner: a box boots its page's service after the
# daemon, and the table should not wait 10 s for the code (a look is microseconds).
UNSERVED_CHECK_NS = 2 * NS_PER_S
# An address in each private range (RFC 1918): a box with a default route reaches them
# all through it; one without (its own access point, say) perhaps one of them.
PRIVATE = ("10.254.254.254", "192.168.254.254", "172.31.254.254")
ROUTES = Path("/proc/net/route")
NO_NETWORK = "no network"
THIS_COMPUTER = "this computer only"


def lan_ipv4(routes: Path = ROUTES) -> str | None:
    """The box's IPv4 address on its local network, or None: the source address of a
    route to a private address, else to a network of the routing table's."""
    for target in (*PRIVATE, *_routed(routes)):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))  # a route is chosen; nothing is sent
                source = ipaddress.IPv4Address(probe.getsockname()[0])
        except OSError:
            continue  # no route there
        if not (source.is_loopback or source.is_unspecified):
            return str(source)
    return None


def _routed(routes: Path) -> list[str]:
    """An address in each network the kernel routes to (/proc/net/route), but loopback's."""
    try:
        lines = routes.read_text().splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) < 8 or fields[0] == "lo":
            continue
        try:
            network = ipaddress.IPv4Network(
                (_address(fields[1]), str(_address(fields[7]))), strict=False
            )
        except ValueError:
            continue
        if network.prefixlen:  # the default route's: PRIVATE went through it already
            found.append(str(network[1] if network.num_addresses > 1 else network[0]))
    return found


def _address(little_endian_hex: str) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int.from_bytes(bytes.fromhex(little_endian_hex), "little"))


def page_url(listen: str, lan: Callable[[], str | None] = lan_ipv4) -> tuple[str | None, str]:
    """The page's address at listen (HOST:PORT) as a phone types it, and why a phone
    cannot reach it ("" when it can)."""
    host, port = listen_address(listen)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:  # a name (localhost, box.local): as it is
        return f"http://{host}:{port}/", THIS_COMPUTER if host == "localhost" else ""
    if ip.is_unspecified:
        found = lan()
        return (None, NO_NETWORK) if found is None else (f"http://{found}:{port}/", "")
    shown = f"[{ip}]" if ip.version == 6 else str(ip)
    return f"http://{shown}:{port}/", THIS_COMPUTER if ip.is_loopback else ""


class JoinSign:
    """What the lobby shows a phone: the page's address and the PIN, looked at again
    every CHECK_NS (`due_ns`); `clock` is monotonic nanoseconds. served: where another
    process serves the page now (HOST:PORT; "": at `listen`), or None while none does
    (store/mark.py's served_at); not given, this one serves it at `listen`."""

    def __init__(
        self,
        listen: str,
        pin: Path,
        clock: Callable[[], int],
        lan: Callable[[], str | None] = lan_ipv4,
        served: Callable[[], str | None] | None = None,
    ) -> None:
        self._listen, self._pin, self._clock, self._lan = listen, pin, clock, lan
        self._served = served
        self._join: Join | None = None
        self._looked = False
        self._said: str | None = None  # the PIN's trouble, logged once
        self._at: str | None = listen  # where the page was served when last looked at
        self.due_ns = 0

    def join(self) -> Join | None:
        """How to join now, or None while nothing serves the page; looked at again when due."""
        now = self._clock()
        if not self._looked or now >= self.due_ns:
            self._looked = True
            at = self._where()
            self.due_ns = now + (UNSERVED_CHECK_NS if at is None else CHECK_NS)
            self._join = None
            if at is not None:
                url, unreachable = page_url(at, self._lan)
                self._join = Join(url, self._read_pin(), unreachable)
        return self._join

    def _where(self) -> str | None:
        """Where the page is served now (HOST:PORT), or None; each change said in the log."""
        found = self._listen if self._served is None else self._served()
        at = None if found is None else found or self._listen  # "": not written yet
        if at != self._at:
            if at is None:
                log.info(
                    "no page is served for this store (referee-web.service, `referee web`"
                    " or `referee run --web`): the lobby shows no address until one is"
                )
            else:
                log.info("the page is served at %s: the lobby shows how to join", at)
            self._at = at
        return at

    def _read_pin(self) -> str | None:
        try:
            pin = ensure_pin(self._pin)
        except PinError as err:
            if str(err) != self._said:
                log.error("the lobby shows no PIN: %s", err)  # its path, never the PIN
                self._said = str(err)
            return None
        self._said = None
        return pin
