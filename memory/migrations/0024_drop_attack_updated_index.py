"""The attack results' ``updated_at`` index keyed the attack list's cached scorer choices; they
are now read from ``last_scorer`` (0023) on every request, uncached, and nothing else reads the
index. A plain ``DROP INDEX`` on both databases (no table rebuild)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0023_last_scorer"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="attackresult",
            name="memory_attack_updated_idx",
        ),
    ]
