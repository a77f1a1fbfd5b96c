"""A PyRIT database whose pieces hold NUL imports whole, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import sqlite3

import pytest

from memory.models import MessagePiece
from memory.transfer.importers.service import import_pyrit_db
from tests.importers.conftest import DB_110, copy_fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_piece_with_nul_is_imported_byte_for_byte(tmp_path):
    db = copy_fixture(DB_110, tmp_path)
    with sqlite3.connect(db) as connection:
        piece_id, value = connection.execute(
            "SELECT id, converted_value FROM PromptMemoryEntries "
            "WHERE converted_value_data_type = 'text' ORDER BY id LIMIT 1"
        ).fetchone()
        connection.execute(
            "UPDATE PromptMemoryEntries SET converted_value = ? WHERE id = ?",
            (value + "\x00 tail", piece_id),
        )
    total = 162

    summary = import_pyrit_db(path=db)

    assert sum(summary.refused.values()) == 0, summary.warnings
    assert MessagePiece.objects.count() == total
    stored = MessagePiece.objects.get(pk=piece_id)
    assert stored.converted_value == value + "\x00 tail"
