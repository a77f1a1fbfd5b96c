"""A running import's heartbeat: when its worker last reported (stalled jobs are failed)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0009_cheaper_checks'),
    ]

    operations = [
        migrations.AddField(
            model_name='importjob',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
