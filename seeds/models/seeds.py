"""Seeds: prompts, objectives and simulated conversations in one table (contract §8.1 – §8.4)."""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords

from memory.models import MediaBlob
from redteam.core import nul
from redteam.core.constraints import choice_check, one_of, sha256_or_null_check
from seeds.choices import ChatMessageRole, PromptDataType, SeedType
from seeds.models.datasets import SeedDataset
from seeds.models.groups import SeedGroup


class SeedQuerySet(models.QuerySet):
    """Reads on seeds."""

    def of_type(self, seed_type: str) -> SeedQuerySet:
        """Only seeds of one ``seed_type``."""
        return self.filter(seed_type=seed_type)

    def in_group_order(self) -> SeedQuerySet:
        """PyRIT's canonical group order: objective, simulated conversation, then by sequence."""
        rank = models.Case(
            models.When(seed_type=SeedType.OBJECTIVE, then=0),
            models.When(seed_type=SeedType.SIMULATED_CONVERSATION, then=1),
            default=2,
        )
        return self.annotate(_type_rank=rank).order_by("_type_rank", "sequence", "position")


class Seed(models.Model):
    """One PyRIT seed (``SeedPrompt``, ``SeedObjective`` or ``SeedSimulatedConversation``).

    One table, typed by ``seed_type``, with a proxy model per type. ``dataset_name`` is the
    value PyRIT stored; ``dataset`` links the curated dataset of that name.
    ``is_general_technique`` is kept even though PyRIT's own table drops it: it takes part in
    seed identifiers.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    seed_type = nul.CharField(max_length=32, choices=SeedType.choices, default=SeedType.PROMPT)
    value = nul.TextField()
    value_sha256 = nul.CharField(max_length=64, null=True, blank=True)
    data_type = nul.CharField(
        max_length=32, choices=PromptDataType.choices, default=PromptDataType.TEXT
    )
    media = models.ForeignKey(
        MediaBlob, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # File name of a media value, for linking media uploaded later (contract §13).
    media_key = nul.CharField(max_length=255, blank=True, default="")
    name = nul.CharField(max_length=255, null=True, blank=True)
    dataset = models.ForeignKey(
        SeedDataset, on_delete=models.CASCADE, null=True, blank=True, related_name="seeds"
    )
    dataset_name = nul.CharField(max_length=255, null=True, blank=True)
    harm_categories = nul.JSONField(default=list, blank=True)
    description = nul.TextField(null=True, blank=True)
    authors = nul.JSONField(default=list, blank=True)
    groups = nul.JSONField(default=list, blank=True)
    source = nul.TextField(null=True, blank=True)
    date_added = models.DateTimeField()
    added_by = nul.CharField(max_length=255, null=True, blank=True)
    metadata = nul.JSONField(default=dict, blank=True)
    group = models.ForeignKey(
        SeedGroup, on_delete=models.SET_NULL, null=True, blank=True, related_name="seeds"
    )
    sequence = models.IntegerField(default=0)
    # Order inside the group as the seeds were given (PyRIT keeps list order, never stores it).
    position = models.PositiveIntegerField(default=0)
    role = nul.CharField(max_length=32, choices=ChatMessageRole.choices, null=True, blank=True)
    parameters = nul.JSONField(default=list, blank=True)
    is_general_technique = models.BooleanField(default=False)
    response_json_schema = nul.JSONField(null=True, blank=True)
    # SeedSimulatedConversation settings (PyRIT 1.x); the value is derived from them.
    num_turns = models.PositiveIntegerField(null=True, blank=True)
    adversarial_chat_system_prompt_path = nul.TextField(null=True, blank=True)
    simulated_target_system_prompt_path = nul.TextField(null=True, blank=True)
    next_message_system_prompt_path = nul.TextField(null=True, blank=True)
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    extra = nul.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SeedQuerySet.as_manager()
    # Who changed what and when; admin "History". Only saves of ``Seed`` itself are recorded
    # (signals of proxy classes are not), so every write goes through ``seeds.services``.
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        constraints = [
            choice_check("seed_type", SeedType, "%(app_label)s_%(class)s_seed_type_valid"),
            choice_check("data_type", PromptDataType, "%(app_label)s_%(class)s_data_type_valid"),
            models.CheckConstraint(
                condition=Q(role__isnull=True) | one_of("role", ChatMessageRole.values),
                name="%(app_label)s_%(class)s_role_valid",
            ),
            sha256_or_null_check("value_sha256", "%(app_label)s_%(class)s_sha256_hex"),
            models.CheckConstraint(
                condition=Q(sequence__gte=0), name="%(app_label)s_%(class)s_sequence_gte_0"
            ),
            # An objective is always text and never a general technique (contract §8.3).
            models.CheckConstraint(
                condition=~Q(seed_type=SeedType.OBJECTIVE)
                | Q(data_type=PromptDataType.TEXT, is_general_technique=False),
                name="%(app_label)s_%(class)s_objective_is_text",
            ),
            models.CheckConstraint(
                condition=~Q(seed_type=SeedType.SIMULATED_CONVERSATION)
                | Q(num_turns__isnull=False, num_turns__gt=0),
                name="%(app_label)s_%(class)s_simulated_turns_positive",
            ),
            # A group has at most one objective and one simulated conversation (contract §8.5).
            models.UniqueConstraint(
                fields=["group"],
                condition=Q(seed_type=SeedType.OBJECTIVE),
                name="%(app_label)s_%(class)s_one_objective_per_group",
                violation_error_message="A seed group can hold at most one objective.",
            ),
            models.UniqueConstraint(
                fields=["group"],
                condition=Q(seed_type=SeedType.SIMULATED_CONVERSATION),
                name="%(app_label)s_%(class)s_one_simulation_per_group",
                violation_error_message="A seed group can hold at most one simulated conversation.",
            ),
        ]
        indexes = [
            # Duplicate detection within a dataset and media matching by content hash.
            models.Index(fields=["value_sha256"], name="seeds_seed_sha256_idx"),
            # Media uploaded after its seeds is matched by file name.
            models.Index(
                fields=["media_key"], condition=~Q(media_key=""), name="seeds_seed_media_key_idx"
            ),
            # Seed list filtered by dataset and type.
            models.Index(fields=["dataset", "seed_type"], name="seeds_seed_dataset_type_idx"),
            # Filtering by the dataset name PyRIT stored (seeds without a curated dataset).
            models.Index(fields=["dataset_name"], name="seeds_seed_dataset_name_idx"),
        ]

    def __str__(self) -> str:
        label = self.name or self.value
        return f"{self.seed_type}: {label[:60]}"


class _TypedSeedManager(models.Manager.from_queryset(SeedQuerySet)):
    """Manager restricted to one ``seed_type`` (set by the proxy class)."""

    def __init__(self, seed_type: str) -> None:
        super().__init__()
        self.seed_type = seed_type

    def get_queryset(self) -> SeedQuerySet:
        return super().get_queryset().filter(seed_type=self.seed_type)


class SeedPrompt(Seed):
    """A prompt seed (text, template or media) — PyRIT's ``SeedPrompt``."""

    objects = _TypedSeedManager(SeedType.PROMPT)

    class Meta:
        proxy = True

    def save(self, *args, **kwargs) -> None:
        self.seed_type = SeedType.PROMPT
        super().save(*args, **kwargs)


class SeedObjective(Seed):
    """An attack objective — PyRIT's ``SeedObjective``."""

    objects = _TypedSeedManager(SeedType.OBJECTIVE)

    class Meta:
        proxy = True

    def save(self, *args, **kwargs) -> None:
        self.seed_type = SeedType.OBJECTIVE
        super().save(*args, **kwargs)


class SeedSimulatedConversation(Seed):
    """Settings for a generated prior conversation — PyRIT's ``SeedSimulatedConversation``."""

    objects = _TypedSeedManager(SeedType.SIMULATED_CONVERSATION)

    class Meta:
        proxy = True

    def save(self, *args, **kwargs) -> None:
        self.seed_type = SeedType.SIMULATED_CONVERSATION
        super().save(*args, **kwargs)
