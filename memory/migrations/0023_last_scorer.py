"""The last score's scorer on each attack result, filled from the stored scores, and the index
the scorer filters read in the attack list's default order (docs/performance.md, "Attack
list"). The filters found the attacks through the scorer's scores, so a scorer with many scores
that are rarely last ones cost a visit of each; ingestion keeps the column from here on.

Going back, SQLite rebuilds the attack table to drop the column, which the rollups' triggers
forbid: the operations run without them (recounted after, both ways).
"""

import django.db.models.deletion
from django.db import migrations, models

import memory.models.attacks
from memory.models import rollup_sql

# One pass over the attacks, each probing the scores' primary key (seconds at 100,000).
BACKFILL_LAST_SCORER = """
UPDATE memory_attackresult SET last_scorer_id = (
    SELECT s.scorer_class_identifier_id FROM memory_score s
    WHERE s.id = memory_attackresult.last_score_id
)
WHERE last_score_id IS NOT NULL
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0022_dashboard_rollups"),
    ]

    operations = rollup_sql.without_triggers(
        migrations.AddField(
            model_name="attackresult",
            name="last_scorer",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="memory.componentidentifier",
            ),
        ),
        migrations.AlterField(
            model_name="attackresult",
            name="last_score",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=memory.models.attacks.clear_last_score,
                related_name="+",
                to="memory.score",
            ),
        ),
        migrations.RunSQL(BACKFILL_LAST_SCORER, reverse_sql=migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="attackresult",
            index=models.Index(
                fields=["last_scorer", "-timestamp", "-id"], name="memory_attack_scorer_idx"
            ),
        ),
    )
