"""The dashboard rollups per label (docs/dashboards.md → Rollups): the same groupings as
0022's and 0025's attack rollups for the attacks that carry one label, so a dashboard filtered
by one label reads counts kept ahead of it. Their triggers are created and the tables counted
from what is stored; going back drops their triggers before the tables."""


from django.db import migrations, models

from memory.models import rollup_sql


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0025_count_and_converter_rollups'),
    ]

    operations = [
        migrations.CreateModel(
            name='LabelConverterRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('scope', models.BigIntegerField()),
                ('converters', models.TextField()),
                ('converters_key', models.TextField()),
            ],
            options={
                'db_table': 'memory_rollup_label_converter',
                'constraints': [models.UniqueConstraint(fields=('scope', 'converters_key', 'outcome', 'human'), name='memory_rollup_label_converter_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelFactRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('scope', models.BigIntegerField()),
                ('strategy', models.BigIntegerField()),
                ('atomic', models.BigIntegerField()),
                ('target', models.BigIntegerField()),
                ('scorer', models.BigIntegerField()),
            ],
            options={
                'db_table': 'memory_rollup_label_fact',
                'constraints': [models.UniqueConstraint(fields=('scope', 'strategy', 'atomic', 'target', 'scorer', 'outcome', 'human'), name='memory_rollup_label_fact_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelHarmListRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('scope', models.BigIntegerField()),
                ('classed', models.SmallIntegerField()),
                ('attack_class', models.TextField()),
                ('harms', models.TextField()),
                ('harms_key', models.TextField()),
            ],
            options={
                'db_table': 'memory_rollup_label_harmlist',
                'constraints': [models.UniqueConstraint(fields=('scope', 'classed', 'attack_class', 'harms_key', 'outcome', 'human'), name='memory_rollup_label_harmlist_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelHarmRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('scope', models.BigIntegerField()),
                ('harm', models.BigIntegerField()),
            ],
            options={
                'db_table': 'memory_rollup_label_harm',
                'constraints': [models.UniqueConstraint(fields=('scope', 'harm', 'outcome', 'human'), name='memory_rollup_label_harm_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelHourRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('scope', models.BigIntegerField()),
                ('hour', models.CharField(max_length=13)),
            ],
            options={
                'db_table': 'memory_rollup_label_hour',
                'constraints': [models.UniqueConstraint(fields=('scope', 'hour', 'outcome', 'human'), name='memory_rollup_label_hour_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelObjectiveRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('scope', models.BigIntegerField()),
                ('objective', models.CharField(max_length=64)),
            ],
            options={
                'db_table': 'memory_rollup_label_objective',
                'constraints': [models.UniqueConstraint(fields=('scope', 'objective', 'outcome', 'human'), name='memory_rollup_label_objective_key')],
            },
        ),
        migrations.CreateModel(
            name='LabelPairRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('scope', models.BigIntegerField()),
                ('label', models.BigIntegerField()),
            ],
            options={
                'db_table': 'memory_rollup_label_label',
                'constraints': [models.UniqueConstraint(fields=('scope', 'label', 'outcome', 'human'), name='memory_rollup_label_label_key')],
            },
        ),
        migrations.RunPython(*rollup_sql.triggers_add(*rollup_sql.SCOPED), elidable=False),
    ]
