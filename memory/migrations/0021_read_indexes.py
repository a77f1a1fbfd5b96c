"""The piece list API's order as an index (timestamp, id) in place of timestamp alone, and
attack results' latest write as an index (docs/performance.md, "Read API", "Attack list")."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0020_webhooks'),
    ]

    operations = [
        migrations.AddIndex(
            model_name="attackresult",
            index=models.Index(fields=["updated_at"], name="memory_attack_updated_idx"),
        ),
        migrations.RemoveIndex(
            model_name='messagepiece',
            name='memory_piece_timestamp_idx',
        ),
        migrations.AddIndex(
            model_name='messagepiece',
            index=models.Index(fields=['timestamp', 'id'], name='memory_piece_time_id_idx'),
        ),
    ]
