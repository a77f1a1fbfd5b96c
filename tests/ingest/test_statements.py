"""The statements one ingestion runs do not grow with the batch (issue 3's pinned counts)."""

from __future__ import annotations

import pytest
from django.db import connection

from bench.payloads import batch
from memory.transfer.ingest.service import ingest
from tests.queries import count_queries

pytestmark = pytest.mark.django_db


def _statements(payload) -> int:
    count, report = count_queries(ingest, payload=payload)
    assert report.ok, report.errors[:3]
    return count


# Into an empty database (27): BEGIN; look up stored conversations, pieces, scores and attack
# results by id; identifiers (savepoint, look up, insert, read back, release); insert
# conversations (with their piece counts) and read them back; insert messages and read them
# back; insert pieces, converter links and the conversations' converter index; adopt scores
# stored before their pieces; insert scores (with their home conversation), attack results;
# labels and harm categories (insert, read back each) and the conversations' two link tables;
# COMMIT. The same batch again (16): BEGIN; the four look-ups, each followed by reading the
# stored rows it found (plus a conversation's messages and an attack's related
# conversations); identifiers (savepoint, look up, read back, release); COMMIT — nothing
# written. PostgreSQL adds the advisory lock serialising writers. A first pass that stores a
# successful attack also asks, in its transaction, which webhook endpoints want
# ``attack.succeeded`` (none here, so nothing is queued).
FIRST, AGAIN = 27, 16


@pytest.mark.parametrize("conversations", [2, 40, 130])
def test_statements_per_batch_are_independent_of_its_size(conversations):
    """20, 400 and 1,300 pieces (with as many scores and one attack per conversation)."""
    lock = 1 if connection.vendor == "postgresql" else 0
    payload = batch(1, conversations=conversations)
    announce = int(any(a["outcome"] == "success" for a in payload["attack_results"]))
    assert _statements(payload) == FIRST + lock + announce
    assert _statements(payload) == AGAIN + lock
