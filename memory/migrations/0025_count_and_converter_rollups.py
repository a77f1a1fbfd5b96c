"""Two more dashboard rollups (docs/dashboards.md → Rollups), kept by triggers like 0022's:
``memory_rollup_count`` (conversations; pieces on PostgreSQL) for the volume part, and
``memory_rollup_converter`` (attacks per converter set and outcomes) for the converter
breakdown. The triggers are created and the two tables counted from what is stored; going back
drops their triggers (the first rollups' stay) before the tables."""

from django.db import migrations, models

from memory.models import rollup_sql


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0024_drop_attack_updated_index'),
    ]

    operations = [
        migrations.CreateModel(
            name='CountRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=32, unique=True)),
                ('n', models.BigIntegerField(default=0)),
            ],
            options={
                'db_table': 'memory_rollup_count',
            },
        ),
        migrations.CreateModel(
            name='ConverterRollup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('outcome', models.CharField(max_length=16)),
                ('human', models.CharField(default='', max_length=16)),
                ('n', models.BigIntegerField(default=0)),
                ('converters', models.TextField()),
                ('converters_key', models.TextField()),
            ],
            options={
                'db_table': 'memory_rollup_converter',
                'constraints': [models.UniqueConstraint(fields=('converters_key', 'outcome', 'human'), name='memory_rollup_converter_key')],
            },
        ),
        migrations.RunPython(
            *rollup_sql.triggers_add(rollup_sql.COUNT, rollup_sql.CONVERTER), elidable=False
        ),
    ]
