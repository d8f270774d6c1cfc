"""The local address the route to a host leaves from: where that host reaches this machine.

One function for every cluster on other hosts: hosts over SSH (`driver_address`) and a
cluster numaspark did not start (``--master``, spark/address.py). A UDP socket's
``connect`` asks the kernel for the route and sends nothing; the name is resolved first.
"""

from __future__ import annotations

import ipaddress
import socket

from numaspark.errors import UsageError

# connect() needs a port; a UDP connect sends nothing, so any will do
_PROBE_PORT = 9


class NoRouteError(UsageError):
    """No address, or no route, to a host."""


def route_source(host: str) -> str:
    """The local address the route to ``host`` (a name or an address) leaves from."""
    try:
        family, _, _, _, sockaddr = socket.getaddrinfo(host, _PROBE_PORT, type=socket.SOCK_DGRAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise NoRouteError(f"{host}: the name does not resolve ({exc})") from None
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(sockaddr)
            return str(probe.getsockname()[0])
        except OSError as exc:
            raise NoRouteError(f"no route to {host}: {exc.strerror or exc}") from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback (``localhost``, 127.0.0.0/8, ::1), or the
    unspecified address that a client on this machine reaches it by (0.0.0.0)."""
    if host in ("localhost", "0.0.0.0", "::"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return all(
                ipaddress.ip_address(info[4][0]).is_loopback
                for info in socket.getaddrinfo(host, None)
            )
        except (socket.gaierror, UnicodeError, ValueError):
            return False
