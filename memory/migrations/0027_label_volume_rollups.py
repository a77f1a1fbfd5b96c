"""The label volume (docs/dashboards.md → Rollups): per label, how often each conversation is
in its scope, and the conversations, pieces and scores of its scope, so a dashboard filtered by
one label reads its volume and score distributions from counts kept ahead of it. Their
triggers are created and the tables counted from what is stored."""


from django.db import migrations, models

from memory.models import rollup_sql


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0026_label_scoped_rollups'),
    ]

    operations = [
        migrations.CreateModel(
            name='LabelConversationRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('conversation', models.BigIntegerField()),
                ('scope', models.BigIntegerField()),
                ('n', models.BigIntegerField(default=0)),
            ],
            options={
                'db_table': 'memory_rollup_label_conversation',
                'constraints': [models.UniqueConstraint(fields=('conversation', 'scope'), name='memory_rollup_label_conversation_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelCountRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('scope', models.BigIntegerField()),
                ('name', models.CharField(max_length=32)),
                ('n', models.BigIntegerField(default=0)),
            ],
            options={
                'db_table': 'memory_rollup_label_count',
                'constraints': [models.UniqueConstraint(fields=('scope', 'name'), name='memory_rollup_label_count_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelScoreRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('scope', models.BigIntegerField()),
                ('scorer', models.BigIntegerField()),
                ('kind', models.CharField(max_length=16)),
                ('valued', models.SmallIntegerField()),
                ('bucket', models.IntegerField()),
                ('human', models.SmallIntegerField()),
                ('n', models.BigIntegerField(default=0)),
            ],
            options={
                'db_table': 'memory_rollup_label_score',
                'constraints': [models.UniqueConstraint(fields=('scope', 'scorer', 'kind', 'valued', 'bucket', 'human'), name='memory_rollup_label_score_key')],
            },
        ),
        migrations.RunPython(*rollup_sql.triggers_add(*rollup_sql.VOLUME), elidable=False),
    ]
