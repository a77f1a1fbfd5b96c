"""Piece counts per conversation and each score's home conversation, for the dashboards.

The dashboards' volume and score-distribution widgets count the pieces and scores behind the
filtered attacks. Counted through pieces, that cost grew with the pieces (0.5–1.3 s at
1,000,000; docs/dashboards.md); with a count on each conversation and each score's
conversation (that of the piece whose id it names) stored, they read one row per
conversation. Both are filled here from the stored data; ingestion keeps them from then on.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

BACKFILL_PIECE_COUNTS = """
UPDATE memory_conversation SET piece_count = (
    SELECT COUNT(*) FROM memory_messagepiece p
    JOIN memory_message m ON m.id = p.message_id
    WHERE m.conversation_id = memory_conversation.id
)
"""

BACKFILL_SCORE_HOMES = """
UPDATE memory_score SET conversation_id = (
    SELECT m.conversation_id FROM memory_messagepiece p
    JOIN memory_message m ON m.id = p.message_id
    WHERE p.id = memory_score.message_piece_id
)
WHERE message_piece_id IS NOT NULL
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0006_objective_trigram_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="conversation",
            name="piece_count",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.AddField(
            model_name="score",
            name="conversation",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="home_scores",
                to="memory.conversation",
            ),
        ),
        migrations.RunSQL(BACKFILL_PIECE_COUNTS, reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL(BACKFILL_SCORE_HOMES, reverse_sql=migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="score",
            index=models.Index(
                fields=[
                    "conversation",
                    "scorer_class_identifier",
                    "score_type",
                    "numeric_value",
                    "reviewer",
                ],
                name="memory_score_conv_dash_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="score",
            index=models.Index(
                condition=models.Q(("conversation__isnull", True)),
                fields=["message_piece_id"],
                name="memory_score_homeless_idx",
            ),
        ),
    ]
