"""One webhook request: to an address checked at send time, with short timeouts, a capped
response and no redirects.

Server-side request forgery is the risk: an endpoint URL (or a DNS name that later resolves
elsewhere) could make Redline post to its own host, the cloud metadata service or the private
network. So the name is resolved here, every address it resolves to must be public (unless
``WEBHOOKS_ALLOW_PRIVATE_ADDRESSES`` is on), and the connection goes to the address that was
checked, never to a second resolution. Standard library only (``http.client``): it follows no
redirects, and it lets the socket be opened to the checked address while TLS still verifies the
certificate for the URL's host name.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

CONNECT_TIMEOUT = 3.0
READ_TIMEOUT = 10.0
#: Bytes of a response read at most; the rest is never read.
RESPONSE_LIMIT = 64 * 1024
#: Characters of a response kept in the delivery log.
EXCERPT_LIMIT = 1000


class Refused(Exception):
    """The URL is not one Redline posts to (scheme, credentials, or a non-public address)."""


@dataclass(frozen=True)
class Target:
    """A URL taken apart: what to connect to and what to ask for."""

    scheme: str
    host: str
    port: int
    path: str


@dataclass(frozen=True)
class Response:
    """What came back: the status and the start of the body."""

    status: int
    excerpt: str
    location: str = ""


def parse(url: str) -> Target:
    """``url`` as a :class:`Target`; :class:`Refused` unless it is http(s) with a host and no
    user name or password (those would travel in the clear in the delivery log)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise Refused(f"not a URL: {error}") from None
    if parts.scheme not in ("http", "https"):
        raise Refused("only http and https URLs are allowed")
    if not parts.hostname:
        raise Refused("the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise Refused("the URL must not carry a user name or password")
    default = 443 if parts.scheme == "https" else 80
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(parts.scheme, parts.hostname, port or default, path)


#: NAT64's well-known prefix (RFC 6052): the last 32 bits are the IPv4 address reached.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the operator's prefix
#: length, so it cannot be judged, and it is never globally routable anyway.
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
#: IPv4-compatible addresses (``::a.b.c.d``, deprecated but still parsed and routed by some
#: stacks): the last 32 bits are an IPv4 address.
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
#: Teredo (RFC 4380): the client's IPv4 address is obfuscated in the last 32 bits and a relay
#: chosen by the network carries the packet; no webhook receiver needs it, so it is refused.
TEREDO = ipaddress.IPv6Network("2001::/32")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and reaches (IPv4-mapped, IPv4-compatible,
    NAT64, 6to4), or None when it carries none."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64 or ip in IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(address: str) -> bool:
    """True for a globally routable unicast address (not loopback, private, link-local,
    shared, reserved or multicast).

    An IPv6 address that carries an IPv4 address the network delivers to (IPv4-mapped
    ``::ffff:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4
    ``2002::/16``) is judged as that IPv4 address: ``[64:ff9b::a9fe:a9fe]`` is the metadata
    service ``169.254.169.254``. Python's own ``is_global`` calls most of these global.
    Teredo and local-use NAT64 are refused whatever they carry."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in TEREDO or ip in NAT64_LOCAL:
            return False
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            ip = embedded
    return ip.is_global and not ip.is_multicast


def check_literal(url: str, *, allow_private: bool) -> None:
    """What can be checked without resolving a name (the admin's form): the URL's shape, and
    the address when the host is an IP literal. :class:`Refused` when it fails."""
    target = parse(url)
    try:
        ipaddress.ip_address(target.host)
    except ValueError:
        if not allow_private and target.host.rstrip(".").lower() in ("localhost",):
            raise Refused("localhost is not a public address") from None
        return
    if not allow_private and not is_public(target.host):
        raise Refused(f"{target.host} is not a public address")


def resolve(target: Target, *, allow_private: bool) -> list[str]:
    """The addresses to connect to, in the resolver's order, when every one of them is allowed
    (a name with one private address among public ones is refused outright)."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise ConnectionError(f"cannot resolve {target.host}: {error}") from None
    addresses = [info[4][0] for info in infos]
    if not addresses:
        raise ConnectionError(f"{target.host} resolves to no address")
    if not allow_private:
        refused = [a for a in addresses if not is_public(a)]
        if refused:
            raise Refused(f"{target.host} resolves to a non-public address ({refused[0]})")
    return list(dict.fromkeys(addresses))


def _connect(addresses: list[str], port: int, timeout: float) -> socket.socket:
    """A connection to the first of ``addresses`` that answers (IPv6 first may fail where the
    host has no IPv6 route); the last error when none does."""
    error: OSError = ConnectionError("no address")
    for address in addresses:
        try:
            return socket.create_connection((address, port), timeout=timeout)
        except OSError as failed:
            error = failed
    raise error


def post(
    url: str,
    *,
    body: bytes,
    headers: dict[str, str],
    allow_private: bool,
    connect_timeout: float = CONNECT_TIMEOUT,
    read_timeout: float = READ_TIMEOUT,
) -> Response:
    """POST ``body`` to ``url``. :class:`Refused` for a URL or address Redline does not post
    to; ``OSError`` (connection, TLS, timeout) and ``http.client.HTTPException`` pass through."""
    target = parse(url)
    addresses = resolve(target, allow_private=allow_private)
    sock = _connect(addresses, target.port, connect_timeout)
    try:
        sock.settimeout(read_timeout)
        if target.scheme == "https":
            context = ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=target.host)
        connection = http.client.HTTPConnection(target.host, target.port, timeout=read_timeout)
        # The checked socket, so http.client never resolves the name a second time.
        connection.sock = sock
        default_port = 443 if target.scheme == "https" else 80
        name = f"[{target.host}]" if ":" in target.host else target.host
        host_header = name if target.port == default_port else f"{name}:{target.port}"
        connection.putrequest("POST", target.path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host_header)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        content = response.read(RESPONSE_LIMIT)
        return Response(
            status=response.status,
            excerpt=content.decode("utf-8", errors="replace")[:EXCERPT_LIMIT],
            location=response.getheader("Location", "") or "",
        )
    finally:
        sock.close()
