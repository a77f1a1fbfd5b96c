"""Limit/offset pages: ``limit`` is capped like on the cursor endpoints, and no ``limit`` or
``offset`` however large reaches the database as an out-of-range number."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from memory.models import ComponentIdentifier
from redteam.core.pagination import MAX_PAGE_SIZE
from tests.api.conftest import get_json
from tests.factories import sha256_hex

LIMIT_OFFSET_ENDPOINTS = [
    "/api/v1/identifiers/",
    "/api/v1/seed-datasets/",
    "/api/v1/seeds/",
    "/api/v1/seed-groups/",
]
# Beyond SQLite's and PostgreSQL's 64-bit integers (schemathesis found the 500 with this size).
HUGE = 8931009913969559207936


@pytest.mark.parametrize("url", LIMIT_OFFSET_ENDPOINTS)
def test_a_limit_beyond_64_bits_is_a_page_not_a_500(admin_client, memory_world, seed_world, url):
    status, body = get_json(admin_client, url, limit=HUGE)
    assert status == 200
    assert body["count"] > 0
    assert len(body["results"]) == body["count"]


@pytest.mark.parametrize("url", LIMIT_OFFSET_ENDPOINTS)
def test_an_offset_beyond_64_bits_is_an_empty_page(admin_client, memory_world, seed_world, url):
    status, body = get_json(admin_client, url, offset=HUGE, limit=HUGE)
    assert status == 200
    assert body["results"] == [] and body["next"] is None


def test_a_limit_above_the_cap_is_clamped_to_the_cap(admin_client, db):
    ComponentIdentifier.objects.bulk_create(
        ComponentIdentifier(
            hash=sha256_hex(f"bulk-{n}"),
            class_name="OpenAIChatTarget",
            class_module="pyrit.fake",
            params={"n": n},
            pyrit_version="0.12.1",
        )
        for n in range(MAX_PAGE_SIZE + 1)
    )
    status, body = get_json(admin_client, "/api/v1/identifiers/", limit=MAX_PAGE_SIZE * 5)
    assert status == 200
    assert body["count"] == MAX_PAGE_SIZE + 1
    assert len(body["results"]) == MAX_PAGE_SIZE
    following = parse_qs(urlsplit(body["next"]).query)
    assert following["limit"] == [str(MAX_PAGE_SIZE)]
    assert following["offset"] == [str(MAX_PAGE_SIZE)]
