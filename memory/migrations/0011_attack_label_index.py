"""AttackResult.label_index gets an explicit through model, AttackLabel, on the same table.

The table and its rows are left as they are; the migration state takes it over (Django's
recipe for adding a through model), then the single-column label index is replaced by a
(label, attack) index that answers a label filter from the index alone.
"""

import django.db.models.deletion
from django.db import migrations, models

TABLE = "memory_attackresult_label_index"


def _drop_label_only_index(apps, schema_editor):
    """Drop the index Django made on ``label_id`` alone (its name is a hash, so find it)."""
    model = apps.get_model("memory", "AttackLabel")
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, TABLE)
    for name, info in constraints.items():
        if info["index"] and not info["unique"] and info["columns"] == ["label_id"]:
            schema_editor.execute(schema_editor._delete_index_sql(model, name))


def _restore_label_only_index(apps, schema_editor):
    model = apps.get_model("memory", "AttackLabel")
    schema_editor.execute(
        schema_editor._create_index_sql(model, fields=[model._meta.get_field("label")])
    )


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0010_import_heartbeat"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AttackLabel",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "attackresult",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                to="memory.attackresult",
                            ),
                        ),
                        (
                            "label",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                to="memory.label",
                            ),
                        ),
                    ],
                    options={
                        "db_table": TABLE,
                        "unique_together": {("attackresult", "label")},
                    },
                ),
                migrations.AlterField(
                    model_name="attackresult",
                    name="label_index",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="attack_results",
                        through="memory.AttackLabel",
                        to="memory.label",
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="attacklabel",
                    name="label",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        to="memory.label",
                    ),
                ),
            ],
            # Django's AlterField would copy the whole table on SQLite to drop one index.
            database_operations=[
                migrations.RunPython(_drop_label_only_index, _restore_label_only_index),
            ],
        ),
        migrations.AddIndex(
            model_name="attacklabel",
            index=models.Index(fields=["label", "attackresult"], name="memory_attack_label_idx"),
        ),
    ]
