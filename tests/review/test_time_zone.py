"""Date filters mean the same instant on every page, whatever ``TIME_ZONE`` is.

A ``datetime-local`` input has no offset: what the browser sends is read in the current time
zone, so what the page puts back in the input must be written in that zone too, and the
legend must name it. Lists and dashboards share one helper for it.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture
def berlin(settings):
    settings.TIME_ZONE = "Europe/Berlin"


def _inputs(html: str) -> dict[str, str]:
    """The values of the two date-time inputs (not the hidden copies other forms carry)."""
    pattern = r'type="datetime-local"[^>]*name="(timestamp_after|timestamp_before)" value="([^"]*)"'
    return dict(re.findall(pattern, html))


def _legend(html: str) -> str:
    found = re.search(r'<legend>Time <span class="hint-inline">\(([^)]*)\)</span>', html)
    assert found, "no time legend"
    return found.group(1)


@pytest.mark.parametrize("url", ["/attacks/", "/dashboards/"])
def test_a_typed_local_time_comes_back_unchanged(berlin, member, url):
    client = Client()
    client.force_login(member("viewer"))
    # What a browser sends from the inputs: local times without an offset.
    html = client.get(
        url, {"timestamp_after": "2025-01-10T10:00", "timestamp_before": "2025-07-10T18:30:15"}
    ).content.decode()
    assert _inputs(html) == {
        "timestamp_after": "2025-01-10T10:00",
        "timestamp_before": "2025-07-10T18:30:15",
    }
    assert _legend(html) == "Europe/Berlin"


@pytest.mark.parametrize("url", ["/attacks/", "/dashboards/"])
def test_an_instant_with_an_offset_is_shown_in_the_current_time_zone(berlin, member, url):
    client = Client()
    client.force_login(member("viewer"))
    html = client.get(url, {"timestamp_after": "2025-01-10T09:00:00Z"}).content.decode()
    assert _inputs(html)["timestamp_after"] == "2025-01-10T10:00"
