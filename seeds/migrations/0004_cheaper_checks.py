"""Choice and SHA-256 checks SQLite evaluates cheaply (see memory migration 0009)."""

import django.db.models.functions.text
import django.db.models.lookups
import redteam.core.constraints
from django.db import migrations, models

from redteam.core.migration_ops import rebuilt_checks


CHECKS = [
    migrations.RemoveConstraint(
        model_name="seed",
        name="seeds_seed_seed_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="seed",
        name="seeds_seed_data_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="seed",
        name="seeds_seed_role_valid",
    ),
    migrations.RemoveConstraint(
        model_name="seed",
        name="seeds_seed_sha256_hex",
    ),
    migrations.RemoveConstraint(
        model_name="seeddataset",
        name="seeds_seeddataset_data_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="seeddataset",
        name="seeds_seeddataset_seed_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="seedgroup",
        name="seeds_seedgroup_kind_valid",
    ),
    migrations.AddConstraint(
        model_name="seed",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("seed_type", "prompt"),
                ("seed_type", "objective"),
                ("seed_type", "simulated_conversation"),
                _connector="OR",
            ),
            name="seeds_seed_seed_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="seed",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("data_type", "text"),
                ("data_type", "image_path"),
                ("data_type", "audio_path"),
                ("data_type", "video_path"),
                ("data_type", "binary_path"),
                ("data_type", "url"),
                ("data_type", "reasoning"),
                ("data_type", "error"),
                ("data_type", "function_call"),
                ("data_type", "tool_call"),
                ("data_type", "function_call_output"),
                _connector="OR",
            ),
            name="seeds_seed_data_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="seed",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("role__isnull", True),
                ("role", "system"),
                ("role", "user"),
                ("role", "assistant"),
                ("role", "simulated_assistant"),
                ("role", "tool"),
                ("role", "developer"),
                _connector="OR",
            ),
            name="seeds_seed_role_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="seed",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("value_sha256__isnull", True),
                models.Q(
                    django.db.models.lookups.Exact(
                        django.db.models.functions.text.Length(models.F("value_sha256")), 64
                    ),
                    django.db.models.lookups.Exact(
                        redteam.core.constraints.TrimCharacters(
                            models.F("value_sha256"), models.Value("0123456789abcdef")
                        ),
                        "",
                    ),
                ),
                _connector="OR",
            ),
            name="seeds_seed_sha256_hex",
        ),
    ),
    migrations.AddConstraint(
        model_name="seeddataset",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("data_type", "text"),
                ("data_type", "image_path"),
                ("data_type", "audio_path"),
                ("data_type", "video_path"),
                ("data_type", "binary_path"),
                ("data_type", "url"),
                ("data_type", "reasoning"),
                ("data_type", "error"),
                ("data_type", "function_call"),
                ("data_type", "tool_call"),
                ("data_type", "function_call_output"),
                _connector="OR",
            ),
            name="seeds_seeddataset_data_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="seeddataset",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("seed_type", "prompt"),
                ("seed_type", "objective"),
                ("seed_type", "simulated_conversation"),
                _connector="OR",
            ),
            name="seeds_seeddataset_seed_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="seedgroup",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("kind", "seed_group"),
                ("kind", "attack_seed_group"),
                ("kind", "attack_technique_seed_group"),
                _connector="OR",
            ),
            name="seeds_seedgroup_kind_valid",
        ),
    ),
]


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0009_cheaper_checks"),
        ("seeds", "0003_history"),
    ]

    operations = [*rebuilt_checks("seeds", CHECKS)]
