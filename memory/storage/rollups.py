"""Rebuild and check the dashboard rollups (``manage.py dashboard_rollups``).

The triggers keep the rollups exact on every write (:mod:`memory.models.rollup_sql`); these
are for operators: after restoring a backup made without the triggers, after a migration
that rebuilt one of the raw tables on SQLite (which drops its triggers), or to prove the
counts.
"""

from __future__ import annotations

from django.db import connections, transaction

from memory.models import rollup_sql
from memory.storage.write import serialise_writers


def rollups_rebuild(*, using: str = "default") -> dict[str, int]:
    """Re-create the rollup triggers and recount every rollup from the raw tables, in one
    transaction; returns the rows written per rollup table.

    On PostgreSQL the raw tables are locked against writes meanwhile (readers go on), so no
    write lands between the recount and the triggers' next change.
    """
    connection = connections[using]
    with transaction.atomic(using=using):
        # First the writers' lock, as every writer takes it: a writer that holds it and waits
        # for a table this locks would otherwise deadlock with it.
        serialise_writers(using=using)
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                tables = ", ".join(
                    (
                        rollup_sql.ATTACK,
                        rollup_sql.CONVERSATION,
                        rollup_sql.SCORE,
                        rollup_sql.LABEL_LINK,
                        rollup_sql.HARM_LINK,
                        rollup_sql.PIECE,
                        rollup_sql.CONVERTER_LINK,
                        rollup_sql.RELATED,
                        rollup_sql.IDENTIFIER,
                    )
                )
                cursor.execute(f"LOCK TABLE {tables} IN SHARE MODE")
            for statement in rollup_sql.drop_sql(connection.vendor):
                cursor.execute(statement)
            for statement in rollup_sql.create_sql(connection.vendor):
                cursor.execute(statement)
        return rollup_sql.rebuild(connection)


def rollups_check(*, using: str = "default") -> list[str]:
    """Every difference between the rollups and a recount from the raw tables, and every
    missing trigger, as sentences; empty when the rollups are exact. Reads in one transaction
    (one snapshot on PostgreSQL)."""
    connection = connections[using]
    outermost = not connection.in_atomic_block
    with transaction.atomic(using=using):
        if connection.vendor == "postgresql" and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        return rollup_sql.check(connection)
