"""Migration 0031: a label's value becomes text of any length, unique and found by its hash;
the labels stored before get the hash of their text (NUL stored escaped, hashed as NUL)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from memory.models import AttackResult, Label, label_value_sha256
from tests.factories import make_attack


@pytest.mark.django_db(transaction=True)
def test_stored_labels_get_their_hash_and_long_values_fit_after_it():
    attack = make_attack()
    call_command("migrate", "memory", "0030", verbosity=0)
    with connection.cursor() as cursor:
        # as the column before 0031 holds them: NUL written as U+FFFE "0" (redteam.core.nul)
        cursor.execute(
            "INSERT INTO memory_label (key, value) VALUES (%s, %s), (%s, %s)",
            ["operation", "op_red", "note", "a\ufffe0b"],
        )
    call_command("migrate", verbosity=0)

    assert {(label.key, label.value, label.value_sha256) for label in Label.objects.all()} == {
        ("operation", "op_red", label_value_sha256("op_red")),
        ("note", "a\x00b", label_value_sha256("a\x00b")),
    }
    long = Label.objects.create(key="note", value="v" * 4_004)
    attack.label_index.add(long)
    assert list(AttackResult.objects.filter(label_index=long)) == [attack]
    assert Label.objects.filter(Label.matching("note", "v" * 4_004)).get() == long
    with pytest.raises(IntegrityError), transaction.atomic():
        Label.objects.create(key="note", value="v" * 4_004)
