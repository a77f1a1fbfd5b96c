"""A NUL character anywhere in a URL is a 400 before any view runs (PostgreSQL refuses NUL in
text, so such a value used to surface as a 500 wherever it reached a query)."""

from __future__ import annotations

import pytest

URLS = [
    "/attacks/?labels=k:%00",
    "/attacks/?labels=%00:v",
    "/conversations/?harm_category=%00",
    "/dashboards/?labels=k:%00",
    "/dashboards/part/volume/?harm_category=%00",
    "/search/?q=%00",
    "/conversations/%00/",
    "/api/v1/attack-results/?labels=k:%00",
    "/api/v1/conversations/?harm_category=a%00b",
    "/admin/memory/messagepiece/?response_error__exact=%00",
    "/attacks/?%00=1",
]


@pytest.mark.parametrize("url", URLS)
def test_a_nul_in_the_url_is_a_400(admin_client, url):
    response = admin_client.get(url)
    assert response.status_code == 400
    assert b"null characters (NUL)" in response.content
    if url.startswith("/api/"):
        assert "null characters" in response.json()["detail"]


def test_the_same_urls_without_the_nul_are_served(admin_client):
    for url in URLS:
        response = admin_client.get(url.replace("%00", "x"))
        assert response.status_code < 500, url
        assert b"null characters" not in response.content, url
