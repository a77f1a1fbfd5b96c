"""Migration 0011 takes the attack ↔ label link table over as ``AttackLabel`` and gives it a
(label, attack) index: the links survive an upgrade and a downgrade, and a label filter reads
attack ids from that index alone."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from memory.models import AttackLabel, AttackResult
from tests.factories import make_attack, make_label

TABLE = "memory_attackresult_label_index"


def _indexes() -> dict[str, list[str]]:
    with connection.cursor() as cursor:
        return {
            name: info["columns"]
            for name, info in connection.introspection.get_constraints(cursor, TABLE).items()
            if info["index"] and not info["primary_key"]
        }


@pytest.mark.django_db(transaction=True)
def test_links_survive_a_downgrade_and_an_upgrade():
    red, blue = make_label(value="op_red"), make_label(value="op_blue")
    first, second = make_attack(), make_attack()
    first.label_index.add(red, blue)
    second.label_index.add(red)
    links = set(AttackLabel.objects.values_list("attackresult_id", "label_id"))
    assert len(links) == 3

    call_command("migrate", "memory", "0010", verbosity=0)
    old = _indexes()
    assert ["label_id"] in old.values()
    assert "memory_attack_label_idx" not in old

    call_command("migrate", verbosity=0)
    new = _indexes()
    assert new["memory_attack_label_idx"] == ["label_id", "attackresult_id"]
    assert ["label_id"] not in new.values()
    assert set(AttackLabel.objects.values_list("attackresult_id", "label_id")) == links
    assert set(AttackResult.objects.filter(label_index=red)) == {first, second}


@pytest.mark.django_db
def test_a_link_is_unique_per_attack_and_label():
    label, attack = make_label(), make_attack()
    attack.label_index.add(label)
    attack.label_index.add(label)
    assert AttackLabel.objects.filter(attackresult=attack, label=label).count() == 1


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plan")
def test_a_label_filter_reads_attack_ids_from_the_covering_index():
    label = make_label()
    make_attack().label_index.add(label)
    ids = AttackLabel.objects.filter(label=label).values("attackresult_id")
    sql, params = ids.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "COVERING INDEX memory_attack_label_idx" in plan
