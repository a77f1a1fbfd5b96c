"""Fixtures for the ingestion API: bearer tokens of ``bot`` (tests/conftest.py), fixture data."""

import json

import pytest
from django.test import Client

from redteam.tokens import api_token_create
from tests.conftest import FIXTURES_DIR

EXPORT_110 = FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json"
EXPORT_012 = FIXTURES_DIR / "pyrit-0.12.1-legacy" / "export.json"


def load(path):
    """A fixture export as Python data."""
    return json.loads(path.read_text())


def _bearer(user, scope):
    _, raw = api_token_create(user=user, scope=scope)
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


@pytest.fixture
def ingest_client(bot):
    """A client sending the bot's ingest-scope token."""
    return _bearer(bot, "ingest")


@pytest.fixture
def read_client(bot):
    """A client sending a read-scope token of the same (ingest-group) user."""
    return _bearer(bot, "read")


def post_json(client, payload, *, query=""):
    """POST ``payload`` as JSON to the ingestion endpoint."""
    return client.post(
        f"/api/v1/ingest/{query}", data=json.dumps(payload), content_type="application/json"
    )
