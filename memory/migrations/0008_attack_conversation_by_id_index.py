"""An index from an attack's id to its conversation, for filtered dashboards.

Filtered dashboards reach the conversations behind the attacks in scope (volume, score
distributions) by attack id: the scope arrives as ids from the label, harm-category and other
link tables. Without an index holding both, each attack cost a row read by random UUID key:
11,000 of them for one label at 100,000 attacks (with a label on SQLite, volume 238 -> 110 ms).

A separate narrow index rather than one more column on ``memory_attack_id_dash_idx``: widened,
that index became SQLite's choice for the unfiltered target, heat-map and eval-hash scans, and
those doubled. Plain SQL on both databases, like migration 0004.
"""

from django.db import migrations

NAME = "memory_attack_conv_by_id_idx"


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0007_piece_counts_and_score_homes"),
    ]

    operations = [
        migrations.RunSQL(
            f'CREATE UNIQUE INDEX "{NAME}" ON "memory_attackresult" ("id", "conversation_id")',
            reverse_sql=f'DROP INDEX "{NAME}"',
            elidable=False,
        ),
    ]
