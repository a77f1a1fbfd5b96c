"""Check constraints SQLite evaluates cheaply, and the dashboard indexes in the model state.

1. Every choice check becomes a chain of ``=`` comparisons and every SHA-256 check a
   ``LENGTH``/``LTRIM`` test (``redteam/core/constraints.py``). On SQLite, ``IN (…)`` in a check
   built a temporary table per inserted row and ``REGEXP`` called back into Python: a message
   piece insert cost 75–95 µs, now about 30 µs. Same rows accepted, same names. Each table is
   rebuilt once on SQLite; the checks are replaced in place on PostgreSQL.
2. The covering indexes of migrations 0004 and 0008 were plain SQL, unknown to the state, and
   SQLite's rebuild of ``memory_conversation`` in migration 0007 (a new column with a default)
   silently dropped ``memory_conv_target_dash_idx``. They are now in the models' ``Meta``:
   added to the state here, and created where missing.
"""

import django.db.models.functions.text
import django.db.models.lookups
import redteam.core.constraints
from django.conf import settings
from django.db import migrations, models

from redteam.core.migration_ops import indexes_into_state, rebuilt_checks


INDEXES = [
    migrations.AddIndex(
        model_name="attackresult",
        index=models.Index(
            fields=[
                "timestamp",
                "outcome",
                "human_outcome",
                "attack_identifier",
                "atomic_attack_identifier",
                "conversation",
                "last_score",
            ],
            name="memory_attack_dash_idx",
        ),
    ),
    migrations.AddIndex(
        model_name="attackresult",
        index=models.Index(
            fields=["conversation", "outcome", "human_outcome", "id"],
            name="memory_attack_conv_dash_idx",
        ),
    ),
    migrations.AddIndex(
        model_name="attackresult",
        index=redteam.core.constraints.UniqueIndex(
            fields=["id", "outcome", "human_outcome"], name="memory_attack_id_dash_idx"
        ),
    ),
    migrations.AddIndex(
        model_name="attackresult",
        index=models.Index(
            fields=["objective_sha256", "outcome", "human_outcome"],
            name="memory_attack_objective_idx",
        ),
    ),
    migrations.AddIndex(
        model_name="attackresult",
        index=redteam.core.constraints.UniqueIndex(
            fields=["id", "conversation"], name="memory_attack_conv_by_id_idx"
        ),
    ),
    migrations.AddIndex(
        model_name="conversation",
        index=redteam.core.constraints.UniqueIndex(
            fields=["id", "target_identifier"], name="memory_conv_target_dash_idx"
        ),
    ),
    migrations.AddIndex(
        model_name="messagepiece",
        index=redteam.core.constraints.UniqueIndex(
            fields=["id", "message"], name="memory_piece_message_dash_idx"
        ),
    ),
    migrations.AddIndex(
        model_name="messagepiece",
        index=models.Index(
            fields=["message", "original_prompt_id"], name="memory_piece_prompt_dash_idx"
        ),
    ),
    migrations.AddIndex(
        model_name="score",
        index=models.Index(
            fields=[
                "message_piece_id",
                "scorer_class_identifier",
                "score_type",
                "numeric_value",
                "reviewer",
            ],
            name="memory_score_piece_dash_idx",
        ),
    ),
    migrations.AddIndex(
        model_name="score",
        index=redteam.core.constraints.UniqueIndex(
            fields=["id", "scorer_class_identifier"], name="memory_score_scorer_id_idx"
        ),
    ),
]

CHECKS = [
    migrations.RemoveConstraint(
        model_name="attackresult",
        name="memory_attackresult_outcome_valid",
    ),
    migrations.RemoveConstraint(
        model_name="attackresult",
        name="memory_attackresult_objective_sha256",
    ),
    migrations.RemoveConstraint(
        model_name="humanverdict",
        name="memory_humanverdict_outcome_valid",
    ),
    migrations.RemoveConstraint(
        model_name="importjob",
        name="memory_importjob_status_valid",
    ),
    migrations.RemoveConstraint(
        model_name="mediablob",
        name="memory_mediablob_sha256_hex",
    ),
    migrations.RemoveConstraint(
        model_name="message",
        name="memory_message_role_valid",
    ),
    migrations.RemoveConstraint(
        model_name="messagepiece",
        name="memory_messagepiece_original_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="messagepiece",
        name="memory_messagepiece_converted_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="messagepiece",
        name="memory_messagepiece_error_valid",
    ),
    migrations.RemoveConstraint(
        model_name="messagepiece",
        name="memory_messagepiece_originator_valid",
    ),
    migrations.RemoveConstraint(
        model_name="messagepiece",
        name="memory_messagepiece_original_sha256_hex",
    ),
    migrations.RemoveConstraint(
        model_name="messagepiece",
        name="memory_messagepiece_converted_sha256_hex",
    ),
    migrations.RemoveConstraint(
        model_name="relatedconversation",
        name="memory_relatedconversation_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="scenarioresult",
        name="memory_scenarioresult_state_valid",
    ),
    migrations.RemoveConstraint(
        model_name="scorablecontent",
        name="memory_scorablecontent_data_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="scorablecontent",
        name="memory_scorablecontent_sha256_hex",
    ),
    migrations.RemoveConstraint(
        model_name="score",
        name="memory_score_type_valid",
    ),
    migrations.RemoveConstraint(
        model_name="score",
        name="memory_score_status_valid",
    ),
    migrations.AddConstraint(
        model_name="attackresult",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("outcome", "success"),
                ("outcome", "failure"),
                ("outcome", "undetermined"),
                ("outcome", "error"),
                _connector="OR",
            ),
            name="memory_attackresult_outcome_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="attackresult",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("objective_sha256__isnull", True),
                models.Q(
                    django.db.models.lookups.Exact(
                        django.db.models.functions.text.Length(models.F("objective_sha256")), 64
                    ),
                    django.db.models.lookups.Exact(
                        redteam.core.constraints.TrimCharacters(
                            models.F("objective_sha256"), models.Value("0123456789abcdef")
                        ),
                        "",
                    ),
                ),
                _connector="OR",
            ),
            name="memory_attackresult_objective_sha256",
        ),
    ),
    migrations.AddConstraint(
        model_name="humanverdict",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("outcome", "success"),
                ("outcome", "failure"),
                ("outcome", "undetermined"),
                _connector="OR",
            ),
            name="memory_humanverdict_outcome_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="importjob",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("status", "queued"),
                ("status", "running"),
                ("status", "succeeded"),
                ("status", "failed"),
                _connector="OR",
            ),
            name="memory_importjob_status_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="mediablob",
        constraint=models.CheckConstraint(
            condition=models.Q(
                django.db.models.lookups.Exact(
                    django.db.models.functions.text.Length(models.F("sha256")), 64
                ),
                django.db.models.lookups.Exact(
                    redteam.core.constraints.TrimCharacters(
                        models.F("sha256"), models.Value("0123456789abcdef")
                    ),
                    "",
                ),
            ),
            name="memory_mediablob_sha256_hex",
        ),
    ),
    migrations.AddConstraint(
        model_name="message",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("role", "system"),
                ("role", "user"),
                ("role", "assistant"),
                ("role", "simulated_assistant"),
                ("role", "tool"),
                ("role", "developer"),
                _connector="OR",
            ),
            name="memory_message_role_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="messagepiece",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("original_value_data_type", "text"),
                ("original_value_data_type", "image_path"),
                ("original_value_data_type", "audio_path"),
                ("original_value_data_type", "video_path"),
                ("original_value_data_type", "binary_path"),
                ("original_value_data_type", "url"),
                ("original_value_data_type", "reasoning"),
                ("original_value_data_type", "error"),
                ("original_value_data_type", "function_call"),
                ("original_value_data_type", "tool_call"),
                ("original_value_data_type", "function_call_output"),
                _connector="OR",
            ),
            name="memory_messagepiece_original_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="messagepiece",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("converted_value_data_type", "text"),
                ("converted_value_data_type", "image_path"),
                ("converted_value_data_type", "audio_path"),
                ("converted_value_data_type", "video_path"),
                ("converted_value_data_type", "binary_path"),
                ("converted_value_data_type", "url"),
                ("converted_value_data_type", "reasoning"),
                ("converted_value_data_type", "error"),
                ("converted_value_data_type", "function_call"),
                ("converted_value_data_type", "tool_call"),
                ("converted_value_data_type", "function_call_output"),
                _connector="OR",
            ),
            name="memory_messagepiece_converted_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="messagepiece",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("response_error", "none"),
                ("response_error", "blocked"),
                ("response_error", "processing"),
                ("response_error", "empty"),
                ("response_error", "unknown"),
                _connector="OR",
            ),
            name="memory_messagepiece_error_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="messagepiece",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("originator", "attack"),
                ("originator", "converter"),
                ("originator", "scorer"),
                ("originator", "undefined"),
                _connector="OR",
            ),
            name="memory_messagepiece_originator_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="messagepiece",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("original_value_sha256__isnull", True),
                models.Q(
                    django.db.models.lookups.Exact(
                        django.db.models.functions.text.Length(models.F("original_value_sha256")),
                        64,
                    ),
                    django.db.models.lookups.Exact(
                        redteam.core.constraints.TrimCharacters(
                            models.F("original_value_sha256"), models.Value("0123456789abcdef")
                        ),
                        "",
                    ),
                ),
                _connector="OR",
            ),
            name="memory_messagepiece_original_sha256_hex",
        ),
    ),
    migrations.AddConstraint(
        model_name="messagepiece",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("converted_value_sha256__isnull", True),
                models.Q(
                    django.db.models.lookups.Exact(
                        django.db.models.functions.text.Length(models.F("converted_value_sha256")),
                        64,
                    ),
                    django.db.models.lookups.Exact(
                        redteam.core.constraints.TrimCharacters(
                            models.F("converted_value_sha256"), models.Value("0123456789abcdef")
                        ),
                        "",
                    ),
                ),
                _connector="OR",
            ),
            name="memory_messagepiece_converted_sha256_hex",
        ),
    ),
    migrations.AddConstraint(
        model_name="relatedconversation",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("conversation_type", "adversarial"),
                ("conversation_type", "pruned"),
                ("conversation_type", "score"),
                ("conversation_type", "converter"),
                _connector="OR",
            ),
            name="memory_relatedconversation_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="scenarioresult",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("scenario_run_state", "CREATED"),
                ("scenario_run_state", "IN_PROGRESS"),
                ("scenario_run_state", "COMPLETED"),
                ("scenario_run_state", "FAILED"),
                ("scenario_run_state", "CANCELLED"),
                _connector="OR",
            ),
            name="memory_scenarioresult_state_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="scorablecontent",
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
            name="memory_scorablecontent_data_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="scorablecontent",
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
            name="memory_scorablecontent_sha256_hex",
        ),
    ),
    migrations.AddConstraint(
        model_name="score",
        constraint=models.CheckConstraint(
            condition=models.Q(
                ("score_type", "true_false"),
                ("score_type", "float_scale"),
                ("score_type", "unknown"),
                _connector="OR",
            ),
            name="memory_score_type_valid",
        ),
    ),
    migrations.AddConstraint(
        model_name="score",
        constraint=models.CheckConstraint(
            condition=models.Q(("status", "complete"), ("status", "undetermined"), _connector="OR"),
            name="memory_score_status_valid",
        ),
    ),
]


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0008_attack_conversation_by_id_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [*indexes_into_state("memory", INDEXES), *rebuilt_checks("memory", CHECKS)]
