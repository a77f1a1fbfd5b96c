"""The rollup trigger functions on PostgreSQL take the writers' lock before they read the other
tables of their join (docs/dashboards.md → Rollups), so concurrent writers can no longer each
count only their half of a pair. The functions are re-created; the triggers and the counts
stay. Nothing changes on SQLite, and going back keeps the lock (it only orders writers)."""

from django.db import migrations

from memory.models import rollup_sql


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0029_keyed_seals'),
    ]

    operations = [
        migrations.RunPython(rollup_sql.functions_replace, migrations.RunPython.noop),
    ]
