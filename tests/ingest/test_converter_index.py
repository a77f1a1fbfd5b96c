"""``Conversation.converter_index``: kept by ingestion, filled by migration 0005."""

import importlib

import pytest
from django.db import connection

from memory.models import Conversation, PieceConverter
from memory.transfer.ingest.service import ingest
from tests.conftest import FIXTURES_DIR
from tests.ingest.conftest import load

pytestmark = pytest.mark.django_db

BASE64 = {"class_name": "Base64Converter", "class_module": "pyrit.prompt_converter.base64"}
ROT13 = {"class_name": "ROT13Converter", "class_module": "pyrit.prompt_converter.rot13"}
LEET = {"class_name": "LeetspeakConverter", "class_module": "pyrit.prompt_converter.leet"}


def _piece(number: int, conversation: str, sequence: int, converters: list[dict]) -> dict:
    return {
        "id": f"00000000-0000-4000-8000-{number:012d}",
        "conversation_id": conversation,
        "sequence": sequence,
        "role": "user",
        "original_value": f"prompt {number}",
        "converter_identifiers": converters,
    }


def _index() -> set[tuple[str, str]]:
    return set(
        Conversation.converter_index.through.objects.values_list(
            "conversation__conversation_id", "componentidentifier__class_name"
        )
    )


def test_ingestion_indexes_every_converter_of_every_piece_once():
    report = ingest(
        payload={
            "message_pieces": [
                _piece(1, "conv-a", 0, [BASE64, ROT13]),
                _piece(2, "conv-a", 2, [BASE64]),
                _piece(3, "conv-b", 0, []),
                _piece(4, "conv-c", 0, [ROT13]),
            ]
        }
    )
    assert report.errors == []
    assert _index() == {
        ("conv-a", "Base64Converter"),
        ("conv-a", "ROT13Converter"),
        ("conv-c", "ROT13Converter"),
    }
    # A later batch adds a converter to an existing conversation; a re-sent piece adds nothing.
    ingest(payload={"message_pieces": [_piece(5, "conv-b", 2, [LEET]), _piece(1, "conv-a", 0, [])]})
    assert ("conv-b", "LeetspeakConverter") in _index()
    assert len(_index()) == 4
    ingest(payload={"message_pieces": [_piece(5, "conv-b", 2, [LEET])]})
    assert Conversation.converter_index.through.objects.count() == 4


@pytest.mark.parametrize("export", ["pyrit-1.1.0-small", "pyrit-0.12.1-legacy"])
def test_migration_backfill_rebuilds_what_ingestion_wrote(export):
    ingest(payload=load(FIXTURES_DIR / export / "export.json"))
    written = _index()
    expected = set(
        PieceConverter.objects.values_list(
            "piece__message__conversation__conversation_id", "identifier__class_name"
        )
    )
    assert written and written == expected
    Conversation.converter_index.through.objects.all().delete()
    migration = importlib.import_module("memory.migrations.0005_lean_indexes_and_converter_index")
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL_CONVERTER_INDEX)
    assert _index() == written
