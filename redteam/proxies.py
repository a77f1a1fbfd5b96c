"""The client's address behind reverse proxies, trusted only from configured proxies.

Gunicorn (like any WSGI server) sets ``REMOTE_ADDR`` to the connection's peer: behind a reverse
proxy that is the proxy, so every client would share one address and a login lockout keyed on
it would lock everyone out. The client's own address is in ``X-Forwarded-For``, but that header
is whatever the client sent plus what each proxy appended. So it is read only when the peer is
a proxy in ``REDLINE_TRUSTED_PROXIES``, from the right: each trusted proxy's entry is skipped,
and the first address no trusted proxy stands for is the client. Entries further left were
written by the client and are never believed.

django-ipware (what django-axes offers) is not used: its trusted-proxy list is compared with
the last entries *inside* the header, which the client can write, and it never checks the
connection's peer, so a client connecting directly could name any address it likes.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@lru_cache(maxsize=8)
def trusted_networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    """The networks of ``REDLINE_TRUSTED_PROXIES`` entries (addresses or CIDR networks)."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"REDLINE_TRUSTED_PROXIES: {entry!r} is not an IP address or network"
            ) from None
    return tuple(networks)


def _address(text: str) -> Address | None:
    """An address as a proxy writes it (``1.2.3.4``, ``[2001:db8::1]:443``, ``1.2.3.4:80``),
    IPv4-mapped IPv6 as its IPv4; None for anything else."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: Address, networks: tuple[Network, ...]) -> bool:
    return any(address.version == net.version and address in net for net in networks)


def client_address(request: HttpRequest) -> str | None:
    """The client's address: ``REMOTE_ADDR``, or, when that is a trusted proxy, the
    right-most ``X-Forwarded-For`` entry that is not a trusted proxy itself."""
    remote = request.META.get("REMOTE_ADDR")
    networks = trusted_networks(tuple(settings.REDLINE_TRUSTED_PROXIES))
    peer = _address(remote or "")
    if peer is None or not networks or not _trusted(peer, networks):
        return remote
    client = peer
    for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        address = _address(hop)
        if address is None:
            # Not an address a proxy writes: what is left of it cannot be believed.
            break
        client = address
        if not _trusted(address, networks):
            break
    return str(client)
