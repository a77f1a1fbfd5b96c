"""Piece counts per conversation and each score's home conversation, kept by every write path."""

import copy
import importlib
import uuid

import pytest
from django.db import connection
from django.db.models import Count

from memory.models import Conversation, MessagePiece, Score
from memory.transfer.ingest.service import ingest
from tests.conftest import FIXTURES_DIR
from tests.factories import NOW, make_conversation, make_identifier, make_message, make_piece
from tests.ingest.conftest import load

pytestmark = pytest.mark.django_db

EXPORT = FIXTURES_DIR / "pyrit-1.1.0-small" / "export.json"


def _state() -> tuple[dict, dict]:
    """Stored piece counts and score homes, next to the values recomputed from the pieces."""
    counts = dict(Conversation.objects.values_list("conversation_id", "piece_count"))
    homes = dict(Score.objects.values_list("id", "conversation__conversation_id"))
    return counts, homes


def _expected() -> tuple[dict, dict]:
    counts = dict.fromkeys(Conversation.objects.values_list("conversation_id", flat=True), 0)
    counts.update(
        MessagePiece.objects.values("message__conversation__conversation_id")
        .annotate(n=Count("id"))
        .values_list("message__conversation__conversation_id", "n")
    )
    by_piece = dict(
        MessagePiece.objects.values_list("id", "message__conversation__conversation_id")
    )
    homes = {
        pk: by_piece.get(piece) for pk, piece in Score.objects.values_list("id", "message_piece_id")
    }
    return counts, homes


def _split(data: dict) -> tuple[dict, dict]:
    """The export as two payloads: its scores alone, then everything else."""
    rest = copy.deepcopy(data)
    scores = {"scores": rest.pop("scores")}
    return scores, rest


def test_a_fixture_export_gets_its_counts_and_homes():
    assert ingest(payload=load(EXPORT)).errors == []
    counts, homes = _state()
    assert (counts, homes) == _expected()
    assert sum(counts.values()) == MessagePiece.objects.count() > 0
    assert sum(home is not None for home in homes.values()) > 0
    # Re-sending changes nothing.
    ingest(payload=load(EXPORT))
    assert _state() == (counts, homes)


def test_scores_sent_before_their_pieces_are_adopted_when_the_pieces_arrive():
    scores, rest = _split(load(EXPORT))
    assert ingest(payload=scores).errors == []
    assert Score.objects.exclude(conversation=None).count() == 0
    assert ingest(payload=rest).errors == []
    assert _state() == _expected()
    assert Score.objects.exclude(conversation=None).exists()


def test_scores_sent_after_their_pieces_find_them_in_the_database():
    scores, rest = _split(load(EXPORT))
    ingest(payload=rest)
    ingest(payload=scores)
    assert _state() == _expected()


def test_pieces_added_to_a_stored_conversation_are_counted():
    data = load(EXPORT)
    pieces = [p for c in data["conversations"] for m in c["messages"] for p in m["message_pieces"]]
    first, second = pieces[: len(pieces) // 2], pieces[len(pieces) // 2 :]
    ingest(payload={"message_pieces": first})
    ingest(payload={"message_pieces": second})
    counts, _ = _state()
    assert counts == _expected()[0]
    assert sum(counts.values()) == len(pieces)


def _score(piece_id):
    return Score.objects.create(
        score_value="true",
        score_type="true_false",
        scorer_class_identifier=make_identifier("SubStringScorer"),
        message_piece_id=piece_id,
        timestamp=NOW,
    )


def test_pieces_and_scores_saved_one_by_one_keep_them_too():
    conversation = make_conversation()
    piece_id = uuid.uuid4()
    early = _score(piece_id)
    assert early.conversation_id is None
    make_piece(make_message(conversation, 0), id=piece_id)
    early.refresh_from_db()
    assert early.conversation_id == conversation.pk
    assert _score(piece_id).conversation_id == conversation.pk
    make_piece(make_message(conversation, 1))
    conversation.refresh_from_db()
    assert conversation.piece_count == 2
    assert _state() == _expected()


def test_migration_backfill_recomputes_what_ingestion_kept():
    ingest(payload=load(EXPORT))
    kept = _state()
    Conversation.objects.update(piece_count=0)
    Score.objects.update(conversation=None)
    migration = importlib.import_module("memory.migrations.0007_piece_counts_and_score_homes")
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL_PIECE_COUNTS)
        cursor.execute(migration.BACKFILL_SCORE_HOMES)
    assert _state() == kept
