"""Repeatable filters (``labels``, ``harm_category``, …) take at most ``MAX_REPEATED_VALUES``
distinct values; a repeated value counts once. Every value is a join, and unbounded repeats
let one request exhaust the database (200 copies: PostgreSQL's planner ran out of memory,
SQLite refused the statement)."""

from __future__ import annotations

import pytest

from redteam.core.filters import MAX_REPEATED_VALUES
from tests.api.conftest import get_json

LISTS = ["/attacks/", "/conversations/", "/api/v1/attack-results/", "/api/v1/conversations/"]


def _repeat(name: str, values: list[str]) -> str:
    return "&".join(f"{name}={v}" for v in values)


@pytest.mark.parametrize("url", ["/api/v1/attack-results/", "/api/v1/conversations/"])
def test_one_value_repeated_hundreds_of_times_counts_once(admin_client, memory_world, url):
    _, once = get_json(admin_client, f"{url}?harm_category=violence")
    status, many = get_json(admin_client, f"{url}?{_repeat('harm_category', ['violence'] * 300)}")
    assert status == 200
    assert many["results"] == once["results"] != []


@pytest.mark.parametrize("url", ["/attacks/", "/conversations/"])
def test_pages_answer_a_value_repeated_hundreds_of_times(admin_client, memory_world, url):
    response = admin_client.get(f"{url}?{_repeat('harm_category', ['violence'] * 300)}")
    assert response.status_code == 200


@pytest.mark.parametrize("name", ["harm_category", "labels"])
@pytest.mark.parametrize("url", LISTS)
def test_more_distinct_values_than_the_cap_is_a_400_naming_it(
    admin_client, memory_world, url, name
):
    values = [f"k{n}:v" for n in range(MAX_REPEATED_VALUES + 1)]
    response = admin_client.get(f"{url}?{_repeat(name, values)}")
    assert response.status_code == 400
    assert f"at most {MAX_REPEATED_VALUES} values" in response.content.decode()


def test_the_cap_itself_is_accepted(admin_client, memory_world):
    values = [f"k{n}:v" for n in range(MAX_REPEATED_VALUES)]
    status, body = get_json(admin_client, f"/api/v1/attack-results/?{_repeat('labels', values)}")
    assert status == 200 and body["results"] == []


OUT_OF_RANGE = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"]
DATED = [
    "/attacks/",
    "/conversations/",
    "/dashboards/",
    "/dashboards/part/volume/",
    "/api/v1/attack-results/",
    "/api/v1/conversations/",
    "/api/v1/scores/",
    "/api/v1/message-pieces/",
    "/api/v1/seeds/",
]


@pytest.mark.parametrize("value", OUT_OF_RANGE)
@pytest.mark.parametrize("url", DATED)
def test_a_time_outside_the_years_1_to_9999_in_utc_is_a_400(admin_client, memory_world, url, value):
    name = "date_added_after" if "seeds" in url else "timestamp_after"
    response = admin_client.get(url, {name: value})
    assert response.status_code == 400
    assert "outside the years 1 to 9999 in UTC" in response.content.decode()


@pytest.mark.parametrize("url", DATED)
def test_an_offset_postgresql_would_refuse_means_the_same_instant_in_utc(
    admin_client, memory_world, url
):
    # +21:03 is a valid ISO offset; PostgreSQL refuses offsets beyond ±15:59, so the
    # bound must reach the database already converted to UTC.
    name = "date_added_after" if "seeds" in url else "timestamp_after"
    far_offset = admin_client.get(url, {name: "2000-01-02T09:03:00+21:03"})
    in_utc = admin_client.get(url, {name: "2000-01-01T12:00:00Z"})
    assert far_offset.status_code == in_utc.status_code == 200
    assert far_offset.content.count(b"conv-") == in_utc.content.count(b"conv-")
