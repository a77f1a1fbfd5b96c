"""The database schema matches what the migration state says, and the checks hold.

Django alters a column or a check on SQLite by rebuilding the table from the migration state:
an index the state does not know is then silently lost (migration 0007 dropped one that way;
migration 0009 moved every such index into the models).
"""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import UniqueConstraint

from memory.models import AttackResult, Message
from tests.factories import make_attack, make_conversation

# PostgreSQL only, and only where pg_trgm can be created: it cannot be in the models.
_OUTSIDE_STATE = {"memory_attack_objective_trgm"}


def _state_index_names(model) -> set[str]:
    """The indexes Django creates for ``model`` from the state: field, ``Meta.indexes``,
    ``unique_together`` (many-to-many link tables) and partial unique constraint indexes."""
    editor = connection.schema_editor()  # not entered: only builds statements
    names = {
        str(statement.parts["name"]).strip('"') for statement in editor._model_indexes_sql(model)
    }
    for fields in model._meta.unique_together:
        columns = [model._meta.get_field(field).column for field in fields]
        names.add(editor._create_index_name(model._meta.db_table, columns, suffix="_uniq"))
    names |= {c.name for c in model._meta.constraints if isinstance(c, UniqueConstraint)}
    return names


@pytest.mark.django_db
def test_every_index_in_the_database_is_in_the_migration_state():
    models = [
        m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.app_label in ("memory", "seeds") and m._meta.managed and not m._meta.proxy
    ]
    assert len(models) > 20
    missing = {}
    with connection.cursor() as cursor:
        for model in models:
            table = model._meta.db_table
            found = {
                name
                for name, info in connection.introspection.get_constraints(cursor, table).items()
                if info["index"]
                and not info["primary_key"]
                and not name.startswith("sqlite_autoindex")
            }
            unknown = found - _state_index_names(model) - _OUTSIDE_STATE
            if unknown:
                missing[table] = sorted(unknown)
    assert missing == {}


@pytest.mark.django_db
def test_state_indexes_exist_in_the_database():
    with connection.cursor() as cursor:
        found = set(connection.introspection.get_constraints(cursor, "memory_conversation"))
    # the index migration 0007's rebuild of this table had dropped on SQLite
    assert "memory_conv_target_dash_idx" in found
    assert "memory_conv_target_dash_idx" in _state_index_names(
        apps.get_model("memory", "Conversation")
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "column, value",
    [("role", "robot"), ("role", "User"), ("role", "")],
)
def test_choice_checks_refuse_values_outside_the_choices(column, value):
    conversation = make_conversation()
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(conversation=conversation, sequence=0, **{column: value})


@pytest.mark.django_db
@pytest.mark.parametrize(
    "value, accepted",
    [
        ("a" * 64, True),
        ("0123456789abcdef" * 4, True),
        (None, True),
        ("A" * 64, False),  # upper case
        ("a" * 63, False),
        ("a" * 65, False),
        ("g" + "a" * 63, False),
        ("a" * 63 + "\n", False),
        (" " + "a" * 63, False),
    ],
)
def test_sha256_checks_accept_exactly_lower_case_hex(value, accepted):
    attack = make_attack()
    update = AttackResult.objects.filter(pk=attack.pk)
    if accepted:
        update.update(objective_sha256=value)
        assert AttackResult.objects.get(pk=attack.pk).objective_sha256 == value
    else:  # PostgreSQL refuses 65 characters by the column's length already
        with pytest.raises((IntegrityError, DataError)), transaction.atomic():
            update.update(objective_sha256=value)
