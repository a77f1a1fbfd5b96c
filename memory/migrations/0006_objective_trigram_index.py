"""A trigram index for the attack list's text search on PostgreSQL.

``q`` on the attack list is ``UPPER(objective) LIKE UPPER('%…%')`` (Django's ``icontains``).
No B-tree serves a pattern with a leading wildcard, so PostgreSQL scanned all attack results
(140 ms at 100,000, bench/attack_list.py); a ``pg_trgm`` GIN index on the same expression
serves it. SQLite has no such index type; there the scan is 45 ms at the same size, and
nothing is done.

``pg_trgm`` ships with PostgreSQL and is a trusted extension (PostgreSQL 13+), so the
database owner may create it. Where even that is not allowed, the index is skipped with a
warning rather than failing the migration: search stays correct, only slower.
"""

import logging

from django.db import migrations, transaction
from django.db.utils import DatabaseError

log = logging.getLogger(__name__)

INDEX = "memory_attack_objective_trgm"


def _create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=schema_editor.connection.alias):
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DatabaseError as exc:
        log.warning("pg_trgm is not available (%s); attack text search stays a scan", exc)
        return
    schema_editor.execute(
        f'CREATE INDEX IF NOT EXISTS "{INDEX}" ON "memory_attackresult" '
        'USING gin (UPPER("objective") gin_trgm_ops)'
    )


def _drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'DROP INDEX IF EXISTS "{INDEX}"')


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0005_lean_indexes_and_converter_index"),
    ]

    operations = [migrations.RunPython(_create, _drop, elidable=False)]
