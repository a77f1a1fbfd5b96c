"""Media named by pieces whose bytes were not there at import time: which keys still wait for
their bytes, and that the look-up reads the media-key indexes, not every piece."""

from __future__ import annotations

import shutil

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.models import MessagePiece
from memory.models.media import media_key
from memory.storage.media import media_keys_waiting
from memory.transfer.importers.service import import_pyrit_db
from tests.importers.conftest import DB_012, copy_fixture

pytestmark = pytest.mark.django_db


def _named_media(side: str) -> set[str]:
    return set(
        MessagePiece.objects.exclude(**{f"{side}_media_key": ""}).values_list(
            f"{side}_media_key", flat=True
        )
    )


def test_keys_wait_until_their_bytes_are_imported(tmp_path):
    db = copy_fixture(DB_012, tmp_path)
    shutil.rmtree(db.parent / "dbdata")
    assert import_pyrit_db(path=db).media_missing > 0
    named = _named_media("original") | _named_media("converted")
    assert named  # the fixture's image pieces
    asked = named | {media_key("/elsewhere/never-named.png")}
    assert media_keys_waiting(keys=asked) == named

    (tmp_path / "again").mkdir()
    assert import_pyrit_db(path=copy_fixture(DB_012, tmp_path / "again")).media_missing == 0
    assert media_keys_waiting(keys=asked) == set()


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the plans of SQLite's query planner")
def test_the_piece_look_ups_read_the_media_key_indexes():
    with CaptureQueriesContext(connection) as queries:
        media_keys_waiting(keys={"a.png", "b.png"})
    pieces = [q["sql"] for q in queries if "memory_messagepiece" in q["sql"]]
    assert len(pieces) == 2
    with connection.cursor() as cursor:
        plans = []
        for sql in pieces:
            # the captured SQL has its parameters inlined as quoted literals
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
            plans.append(" ".join(row[-1] for row in cursor.fetchall()))
    assert "USING INDEX memory_piece_orig_key_idx" in plans[0], plans[0]
    assert "USING INDEX memory_piece_conv_key_idx" in plans[1], plans[1]
