"""Migration operations that keep large tables cheap to upgrade (used by the migrations).

Django alters a constraint on SQLite by copying the whole table, once per constraint: changing
the six checks of ``memory_messagepiece`` would copy a million-piece table twelve times. These
helpers change the migration state as Django would, and the database in one pass per table.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import migrations
from django.db.migrations.operations.base import Operation


def rebuilt_checks(app_label: str, operations: list[Operation]) -> list[Operation]:
    """``operations`` (``RemoveConstraint`` / ``AddConstraint`` pairs rewriting check
    constraints under their old names) as state only, then each table changed once: rebuilt
    with its new checks on SQLite (which cannot alter a check in place), each check dropped
    and added again on PostgreSQL.

    Unapplying leaves the new checks in place: they accept exactly the rows the old ones did.
    """
    changed: dict[str, set[str]] = defaultdict(set)
    for operation in operations:
        if isinstance(operation, migrations.AddConstraint):
            changed[operation.model_name].add(operation.constraint.name)

    def forwards(apps: Any, schema_editor: Any) -> None:
        for model_name, names in changed.items():
            model = apps.get_model(app_label, model_name)
            if schema_editor.connection.vendor == "sqlite":
                # Rebuilt from the migration state, which by now holds every index too.
                schema_editor._remake_table(model)
                continue
            for constraint in model._meta.constraints:
                if constraint.name in names:
                    schema_editor.remove_constraint(model, constraint)
                    schema_editor.add_constraint(model, constraint)

    return [
        migrations.SeparateDatabaseAndState(state_operations=operations),
        migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False),
    ]


def indexes_into_state(app_label: str, operations: list[migrations.AddIndex]) -> list[Operation]:
    """``AddIndex`` operations for indexes an earlier migration created in plain SQL: added
    to the state (so a later table rebuild on SQLite recreates them), and created only where
    missing from the database."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        connection = schema_editor.connection
        for operation in operations:
            model = apps.get_model(app_label, operation.model_name)
            with connection.cursor() as cursor:
                present = connection.introspection.get_constraints(cursor, model._meta.db_table)
            if operation.index.name not in present:
                schema_editor.add_index(model, operation.index)

    return [
        migrations.SeparateDatabaseAndState(
            state_operations=operations,
            database_operations=[
                migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)
            ],
        )
    ]
