"""Leaner piece and score indexes, and the conversation ↔ converter index.

Every index a piece row feeds is paid for on each ingestion and import (docs/performance.md),
so indexes that only repeat the first column of a unique index are dropped (the foreign keys of
messages, pieces and converter links), and those that text pieces or automated scores would
only pad with NULLs become partial (media, scorer, reviewer, scorable content, media hashes).

The foreign-key indexes are dropped by name rather than through ``AlterField``: on SQLite an
``AlterField`` rebuilds the whole table, which on a memory of millions of pieces is minutes of
downtime for what is one ``DROP INDEX``.

``Conversation.converter_index`` is filled from the existing converter links; ingestion keeps it
up to date from then on.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

#: (model, field) whose single-column foreign-key index a unique or partial index replaces
FOREIGN_KEYS = [
    ("message", "conversation"),
    ("messagepiece", "message"),
    ("messagepiece", "original_media"),
    ("messagepiece", "converted_media"),
    ("messagepiece", "scorer_identifier"),
    ("piececonverter", "piece"),
    ("score", "reviewer"),
    ("score", "scorable_content"),
]


def _drop_foreign_key_indexes(apps, schema_editor):
    for model_name, field_name in FOREIGN_KEYS:
        model = apps.get_model("memory", model_name)
        column = model._meta.get_field(field_name).column
        for name in schema_editor._constraint_names(
            model, [column], index=True, unique=False, primary_key=False
        ):
            schema_editor.execute(schema_editor._delete_index_sql(model, name))


def _create_foreign_key_indexes(apps, schema_editor):
    for model_name, field_name in FOREIGN_KEYS:
        model = apps.get_model("memory", model_name)
        field = model._meta.get_field(field_name)
        schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))


BACKFILL_CONVERTER_INDEX = """
INSERT INTO memory_conversation_converter_index (conversation_id, componentidentifier_id)
SELECT DISTINCT m.conversation_id, pc.identifier_id
FROM memory_piececonverter pc
JOIN memory_messagepiece p ON p.id = pc.piece_id
JOIN memory_message m ON m.id = p.message_id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0004_dashboard_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="messagepiece",
            name="memory_piece_orig_sha_idx",
        ),
        migrations.RemoveIndex(
            model_name="messagepiece",
            name="memory_piece_conv_sha_idx",
        ),
        migrations.RemoveIndex(
            model_name="score",
            name="memory_score_piece_idx",
        ),
        migrations.AddField(
            model_name="conversation",
            name="converter_index",
            field=models.ManyToManyField(
                blank=True, related_name="converted_conversations", to="memory.componentidentifier"
            ),
        ),
        migrations.RunSQL(BACKFILL_CONVERTER_INDEX, reverse_sql=migrations.RunSQL.noop),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="conversation",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="messages",
                        to="memory.conversation",
                    ),
                ),
                migrations.AlterField(
                    model_name="messagepiece",
                    name="converted_media",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="memory.mediablob",
                    ),
                ),
                migrations.AlterField(
                    model_name="messagepiece",
                    name="message",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="pieces",
                        to="memory.message",
                    ),
                ),
                migrations.AlterField(
                    model_name="messagepiece",
                    name="original_media",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="memory.mediablob",
                    ),
                ),
                migrations.AlterField(
                    model_name="messagepiece",
                    name="scorer_identifier",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="scorer_pieces",
                        to="memory.componentidentifier",
                    ),
                ),
                migrations.AlterField(
                    model_name="piececonverter",
                    name="piece",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="converters",
                        to="memory.messagepiece",
                    ),
                ),
                migrations.AlterField(
                    model_name="score",
                    name="reviewer",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="human_scores",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="score",
                    name="scorable_content",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="scores",
                        to="memory.scorablecontent",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunPython(_drop_foreign_key_indexes, _create_foreign_key_indexes),
            ],
        ),
        migrations.AddIndex(
            model_name="messagepiece",
            index=models.Index(
                condition=models.Q(("original_media_key", ""), _negated=True),
                fields=["original_value_sha256"],
                name="memory_piece_orig_sha_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="messagepiece",
            index=models.Index(
                condition=models.Q(("converted_media_key", ""), _negated=True),
                fields=["converted_value_sha256"],
                name="memory_piece_conv_sha_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="messagepiece",
            index=models.Index(
                condition=models.Q(("original_media__isnull", False)),
                fields=["original_media"],
                name="memory_piece_orig_media_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="messagepiece",
            index=models.Index(
                condition=models.Q(("converted_media__isnull", False)),
                fields=["converted_media"],
                name="memory_piece_conv_media_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="messagepiece",
            index=models.Index(
                condition=models.Q(("scorer_identifier__isnull", False)),
                fields=["scorer_identifier"],
                name="memory_piece_scorer_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="score",
            index=models.Index(
                condition=models.Q(("reviewer__isnull", False)),
                fields=["reviewer"],
                name="memory_score_reviewer_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="score",
            index=models.Index(
                condition=models.Q(("scorable_content__isnull", False)),
                fields=["scorable_content"],
                name="memory_score_scorable_idx",
            ),
        ),
    ]
