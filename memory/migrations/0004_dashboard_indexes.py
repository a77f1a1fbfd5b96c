"""Covering indexes for the dashboards (memory/dashboards/aggregates.py, docs/dashboards.md).

Each dashboard widget groups 100,000 attack results by one narrow key and counts outcomes.
Read from the tables, every row drags its JSON and text along (and on SQLite a UUID key means
a second lookup); read from an index holding exactly the columns a widget needs, the same
count is several times cheaper. Measured with ``bench/dashboards.py``.

Plain SQL, the same on SQLite and PostgreSQL, and database-only: the indexes are not in the
models' ``Meta`` (the dashboards own this migration, not the models), so the migration state
is unchanged and ``makemigrations`` sees nothing to do. Indexes that start with a unique
column are declared UNIQUE: SQLite's planner then weighs them like the primary-key index
they extend and picks them, because they also cover the query.
"""

from django.db import migrations

#: (name, table, columns, unique, the query it serves)
INDEXES = [
    (
        "memory_attack_dash_idx",
        "memory_attackresult",
        [
            "timestamp",
            "outcome",
            "human_outcome",
            "attack_identifier_id",
            "atomic_attack_identifier_id",
            "conversation_id",
            "last_score_id",
        ],
        False,
        "every attack-level widget (class, target, scorer, eval hash, heat map, trend) and "
        "date-range filters: scanned instead of the table, range-searched by timestamp",
    ),
    (
        "memory_attack_conv_dash_idx",
        "memory_attackresult",
        ["conversation_id", "outcome", "human_outcome", "id"],
        False,
        "converter breakdown: converter links reach attacks through their conversation",
    ),
    (
        "memory_attack_id_dash_idx",
        "memory_attackresult",
        ["id", "outcome", "human_outcome"],
        True,
        "label and harm-category breakdowns: link tables reach attacks by id",
    ),
    (
        "memory_attack_objective_idx",
        "memory_attackresult",
        ["objective_sha256", "outcome", "human_outcome"],
        False,
        "seed-dataset breakdown and the dataset filter: attacks by objective hash",
    ),
    (
        "memory_conv_target_dash_idx",
        "memory_conversation",
        ["id", "target_identifier_id"],
        True,
        "target breakdowns: an attack's conversation to its target, without the JSON",
    ),
    (
        "memory_score_scorer_id_idx",
        "memory_score",
        ["id", "scorer_class_identifier_id"],
        True,
        "scorer breakdown: an attack's last score to its scorer",
    ),
    (
        "memory_score_piece_dash_idx",
        "memory_score",
        [
            "message_piece_id",
            "scorer_class_identifier_id",
            "score_type",
            "numeric_value",
            "reviewer_id",
        ],
        False,
        "score distributions and counts, of the scope's pieces (searched by piece) or of the "
        "whole memory (scanned instead of the table)",
    ),
    (
        "memory_piece_message_dash_idx",
        "memory_messagepiece",
        ["id", "message_id"],
        True,
        "converter breakdown: a converter link's piece to its message",
    ),
    (
        "memory_piece_prompt_dash_idx",
        "memory_messagepiece",
        ["message_id", "original_prompt_id"],
        False,
        "pieces and scores behind filtered attacks: a message's pieces and the ids their "
        "scores are joined on",
    ),
]


def _create(name: str, table: str, columns: list[str], unique: bool) -> str:
    quoted = ", ".join(f'"{c}"' for c in columns)
    return f'CREATE {"UNIQUE " if unique else ""}INDEX "{name}" ON "{table}" ({quoted})'


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0003_human_review_and_imports"),
    ]

    operations = [
        migrations.RunSQL(
            sql=_create(name, table, columns, unique),
            reverse_sql=f'DROP INDEX "{name}"',
            elidable=False,
        )
        for name, table, columns, unique, _ in INDEXES
    ]
