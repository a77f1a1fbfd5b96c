"""The webhook address check and IPv6 addresses that carry an IPv4 address: each form is
refused when what it reaches is private, when the endpoint is saved (the admin's form) and
when a delivery connects (a DNS answer included), and allowed when it reaches a public
address (docs/webhooks.md)."""

from __future__ import annotations

import socket

import pytest
from django.test import Client

from memory.findings.webhooks import transport
from memory.findings.webhooks.services import webhook_endpoints_ping
from memory.models import DeliveryState, WebhookEndpoint
from tests.findings.test_webhooks import endpoint

pytestmark = pytest.mark.django_db

#: Each form of IPv6 that embeds an IPv4 address, aimed at loopback, the metadata service or
#: the private network.
PRIVATE_BEHIND_IPV6 = {
    "IPv4-compatible loopback": "::127.0.0.1",
    "IPv4-compatible metadata": "::a9fe:a9fe",
    "IPv4-mapped loopback": "::ffff:127.0.0.1",
    "IPv4-mapped private": "::ffff:10.0.0.1",
    "NAT64 metadata": "64:ff9b::a9fe:a9fe",
    "NAT64 private": "64:ff9b::a00:1",
    "local-use NAT64": "64:ff9b:1::a9fe:a9fe",
    "6to4 metadata": "2002:a9fe:a9fe::",
    "6to4 loopback": "2002:7f00:1::1",
    "Teredo": "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "Teredo, zero server": "2001::1",
}
#: The same forms reaching a public IPv4 address (8.8.8.8), which are allowed.
PUBLIC_BEHIND_IPV6 = {
    "IPv4-mapped": "::ffff:8.8.8.8",
    "NAT64": "64:ff9b::808:808",
    "6to4": "2002:808:808::1",
}


@pytest.mark.parametrize("address", PRIVATE_BEHIND_IPV6.values(), ids=PRIVATE_BEHIND_IPV6.keys())
def test_an_ipv6_form_carrying_a_private_ipv4_is_not_public(address):
    assert not transport.is_public(address)


@pytest.mark.parametrize("address", PUBLIC_BEHIND_IPV6.values(), ids=PUBLIC_BEHIND_IPV6.keys())
def test_an_ipv6_form_carrying_a_public_ipv4_is_public(address):
    assert transport.is_public(address)


@pytest.mark.parametrize("address", PRIVATE_BEHIND_IPV6.values(), ids=PRIVATE_BEHIND_IPV6.keys())
def test_the_literal_is_refused_when_the_endpoint_is_saved(address, lead):
    url = f"http://[{address}]:8080/hook"
    with pytest.raises(transport.Refused, match="not a public address"):
        transport.check_literal(url, allow_private=False)
    client = Client()
    client.force_login(lead)
    response = client.post(
        "/admin/memory/webhookendpoint/add/",
        {"name": "x", "url": url, "events": [], "format": "json"},
    )
    assert response.status_code == 200
    assert "not a public address" in str(response.context["adminform"].form.errors["url"])
    assert not WebhookEndpoint.objects.exists()


def _resolving_to(monkeypatch, address):
    """DNS that answers every name with ``address``; the connections it leads to, recorded."""
    connected = []

    def getaddrinfo(host, port, *args, **kwargs):
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]

    def create_connection(where, *args, **kwargs):
        connected.append(where)
        raise ConnectionRefusedError("not in this test")

    monkeypatch.setattr(transport.socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(transport.socket, "create_connection", create_connection)
    return connected


@pytest.mark.parametrize("address", PRIVATE_BEHIND_IPV6.values(), ids=PRIVATE_BEHIND_IPV6.keys())
def test_a_name_resolving_to_the_form_is_refused_at_connect_time(address, monkeypatch):
    connected = _resolving_to(monkeypatch, address)
    hook = endpoint(url="https://hooks.example.org/redline")
    [delivery] = webhook_endpoints_ping(endpoints=[hook])
    assert connected == []
    assert delivery.state == DeliveryState.FAILED
    assert delivery.error == (
        f"refused: hooks.example.org resolves to a non-public address ({address})"
    )


@pytest.mark.parametrize("address", PRIVATE_BEHIND_IPV6.values(), ids=PRIVATE_BEHIND_IPV6.keys())
def test_a_saved_literal_is_refused_again_at_connect_time(address):
    # Saved before the check knew the form (or written around the admin): the send refuses it.
    hook = endpoint(url=f"http://[{address}]/hook")
    [delivery] = webhook_endpoints_ping(endpoints=[hook])
    assert delivery.state == DeliveryState.FAILED
    assert delivery.error.startswith("refused: ")
    assert "non-public address" in delivery.error


@pytest.mark.parametrize("address", PUBLIC_BEHIND_IPV6.values(), ids=PUBLIC_BEHIND_IPV6.keys())
def test_a_name_resolving_to_a_public_form_is_connected_to(address, monkeypatch):
    connected = _resolving_to(monkeypatch, address)
    target = transport.parse("https://hooks.example.org/redline")
    assert transport.resolve(target, allow_private=False) == [address]
    with pytest.raises(ConnectionRefusedError):
        transport.post(
            "https://hooks.example.org/redline", body=b"{}", headers={}, allow_private=False
        )
    assert connected == [(address, 443)]
