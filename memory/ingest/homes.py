"""Each score's home conversation: that of the piece whose id it names (``Score.conversation``).

Ingestion sets it when a score is written and the piece is known, and adopts scores stored
before their piece when the piece arrives. The dashboards count the scores behind a set of
conversations through it (docs/dashboards.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection

from django.db.models import OuterRef, Subquery

from memory.ingest.bulk import chunked
from memory.models import MessagePiece, Score


def piece_conversations(piece_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
    """``{piece id: conversation pk}`` for the stored pieces among ``piece_ids``."""
    found: dict[uuid.UUID, int] = {}
    for chunk in chunked(piece_ids):
        found.update(
            MessagePiece.objects.filter(pk__in=chunk).values_list("pk", "message__conversation_id")
        )
    return found


def adopt_scores(piece_ids: Collection[uuid.UUID]) -> int:
    """Give scores without a home that name one of these (new) pieces the piece's conversation.

    One ``UPDATE`` per 30,000 pieces, searching only the partial index of homeless scores, so
    it costs next to nothing when, as usual, scores arrive with or after their pieces.
    """
    home = MessagePiece.objects.filter(pk=OuterRef("message_piece_id")).values(
        "message__conversation_id"
    )[:1]
    adopted = 0
    for chunk in chunked(piece_ids):
        adopted += Score.objects.filter(
            conversation__isnull=True, message_piece_id__in=chunk
        ).update(conversation_id=Subquery(home))
    return adopted
