"""``memory_attack_id_dash_idx`` also carries the attack's conversation.

Filtered dashboards reach the conversations behind the attacks in scope (volume, score
distributions) and the converter index through this index, found by attack id (the scope
arrives as ids from the label, harm-category and other link tables). Without the
conversation in it, each attack cost a row read by random UUID key: 11,000 of them for one
label at 100,000 attacks. Plain SQL on both databases, like migration 0004.
"""

from django.db import migrations

NAME = "memory_attack_id_dash_idx"
BEFORE = ["id", "outcome", "human_outcome"]
AFTER = ["id", "outcome", "human_outcome", "conversation_id"]


def _create(columns: list[str]) -> str:
    quoted = ", ".join(f'"{c}"' for c in columns)
    return f'CREATE UNIQUE INDEX "{NAME}" ON "memory_attackresult" ({quoted})'


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0007_piece_counts_and_score_homes"),
    ]

    operations = [
        migrations.RunSQL(f'DROP INDEX "{NAME}"', reverse_sql=_create(BEFORE), elidable=False),
        migrations.RunSQL(_create(AFTER), reverse_sql=f'DROP INDEX "{NAME}"', elidable=False),
    ]
