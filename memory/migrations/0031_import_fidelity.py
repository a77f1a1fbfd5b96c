"""Label values of any length (PyRIT writes labels of 4,004 characters): the value becomes a
text column, and a pair is unique and found by ``(key, value_sha256)``, the SHA-256 of its
text, since PostgreSQL's B-tree cannot index long texts. Existing pairs get their hash from
their stored text (NUL unescaped first: the hash is of the text itself, ``redteam.core.nul``).

No rollup trigger names the label table (they read the link tables and take a label's id), so
rebuilding it on SQLite needs no ``rollup_sql.without_triggers``.
"""

import hashlib

from django.db import migrations, models

from redteam.core.nul import unescape_nul

BATCH = 2_000


def fill_hashes(apps, schema_editor):
    label = apps.get_model("memory", "Label")
    rows = label.objects.using(schema_editor.connection.alias).order_by("pk")
    pending = []
    for row in rows.only("pk", "value").iterator(chunk_size=BATCH):
        row.value_sha256 = hashlib.sha256(
            unescape_nul(row.value).encode("utf-8", "surrogatepass")
        ).hexdigest()
        pending.append(row)
        if len(pending) >= BATCH:
            label.objects.bulk_update(pending, ["value_sha256"])
            pending = []
    label.objects.bulk_update(pending, ["value_sha256"])


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0030_rollup_lock"),
    ]

    operations = [
        migrations.AddField(
            model_name="label",
            name="value_sha256",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(fill_hashes, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name="label",
            name="memory_label_unique_pair",
        ),
        migrations.AlterField(
            model_name="label",
            name="value",
            field=models.TextField(),
        ),
        migrations.AddConstraint(
            model_name="label",
            constraint=models.UniqueConstraint(
                fields=("key", "value_sha256"), name="memory_label_unique_pair"
            ),
        ),
    ]
