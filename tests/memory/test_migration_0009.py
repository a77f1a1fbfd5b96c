"""Migration 0009 rebuilds tables with new checks on SQLite (in place on PostgreSQL): the rows,
the indexes and what the checks refuse survive an upgrade from 0008."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from memory.models import AttackResult, Message, MessagePiece, Score
from tests.factories import make_attack, make_message, make_piece, make_score

pytestmark = pytest.mark.django_db(transaction=True)


def _indexes(table: str) -> set[str]:
    with connection.cursor() as cursor:
        return {
            name
            for name, info in connection.introspection.get_constraints(cursor, table).items()
            if info["index"]
        }


def test_upgrading_from_0008_keeps_rows_and_indexes_and_checks():
    attack = make_attack()
    piece = make_piece(make_message(attack.conversation, 0))
    score = make_score(piece)
    tables = ["memory_messagepiece", "memory_score", "memory_attackresult", "memory_conversation"]
    before = {table: _indexes(table) for table in tables}

    call_command("migrate", "memory", "0008", verbosity=0)
    call_command("migrate", verbosity=0)

    assert MessagePiece.objects.get(pk=piece.pk).converted_value == piece.converted_value
    assert Score.objects.get(pk=score.pk).score_value == score.score_value
    assert AttackResult.objects.get(pk=attack.pk).objective == attack.objective
    for table in tables:
        assert _indexes(table) >= before[table], table
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(conversation=attack.conversation, sequence=5, role="robot")
    with pytest.raises(IntegrityError), transaction.atomic():
        AttackResult.objects.filter(pk=attack.pk).update(outcome="won")
