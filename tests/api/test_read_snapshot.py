"""The read API's bodies over real PyRIT output, pinned byte for byte.

The piece, score and conversation serializers are written for speed (prebuilt field lists, no
serializer built per row). ``golden/read_api_sha256.json`` holds the SHA-256 of every body the
generic DRF serializers sent for the same imports before that rewrite, per database
(PostgreSQL's ``jsonb`` orders object keys its own way, so JSON fields differ in key order
between the two); every body must still hash the same. Rewrite the pins only for a deliberate
change of the API's output: ``REDLINE_PRINT_GOLDEN=1 pytest -s tests/api/test_read_snapshot.py``
prints them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from django.db import connection

from memory.models import Conversation
from memory.transfer.importers.service import import_pyrit_db
from tests.importers.conftest import DB_012, DB_12, copy_fixture

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).parent / "golden" / "read_api_sha256.json"


@pytest.fixture
def imported(tmp_path):
    """Both fixture generations, media included: PyRIT 1.2 (scores on loose content,
    expectations, human scores; images and audio) and 0.12.1 (legacy shapes)."""
    for source in (DB_12, DB_012):
        summary = import_pyrit_db(path=copy_fixture(source, tmp_path))
        assert summary.ok, summary.warnings


def _bodies(client) -> dict[str, bytes]:
    """Every conversation's detail and the whole list of pieces and of scores, as sent."""
    urls = [
        f"/api/v1/conversations/{conversation_id}/"
        for conversation_id in Conversation.objects.order_by("conversation_id").values_list(
            "conversation_id", flat=True
        )
    ]
    urls += ["/api/v1/message-pieces/?limit=1000", "/api/v1/scores/?limit=1000"]
    bodies = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:500])
        bodies[url] = response.content
    return bodies


def test_bodies_are_byte_for_byte_those_of_the_generic_serializers(admin_client, imported):
    hashes = {url: hashlib.sha256(body).hexdigest() for url, body in _bodies(admin_client).items()}
    if os.environ.get("REDLINE_PRINT_GOLDEN"):
        print(f"\n{connection.vendor!r}: {{")
        for url, digest in hashes.items():
            print(f"    {url!r}: {digest!r},")
        print("},")
    pinned = json.loads(GOLDEN.read_text())[connection.vendor]
    assert sorted(hashes) == sorted(pinned)
    assert [url for url, digest in hashes.items() if pinned[url] != digest] == []
