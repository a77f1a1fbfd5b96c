"""Output serializers of the seed read endpoints, in PyRIT 1.1.0's ``model_dump`` shapes.

A seed comes out as ``SeedPrompt`` / ``SeedObjective`` / ``SeedSimulatedConversation`` dump it
(contract §9.10), with only the keys its type has; a group as PyRIT's ``SeedGroup`` (its seeds in
canonical order) plus Redline's ``id``, ``kind`` and ``alias``; a dataset with PyRIT's
dataset-level keys. Keys a client sent that PyRIT does not define come back at the top level.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from redteam.core.api import media_url, merge_extra
from seeds.choices import SeedType
from seeds.fields import DATASET_DEFAULTS, PROMPT_ONLY, SEED_FIELD_NAMES, SIMULATED_ONLY
from seeds.models import Seed, SeedDataset, SeedGroup

_TYPED_KEYS = {*PROMPT_ONLY, *SIMULATED_ONLY}


class SeedSerializer(serializers.ModelSerializer):
    """One seed, as PyRIT 1.1.0 dumps it; ``media`` (not PyRIT) links stored bytes.

    ``prompt_group_alias`` is the alias of the seed's group; ``is_jinja_template`` is not
    stored (PyRIT does not store it either) and reads back false. Expects ``group`` and
    ``media`` joined.
    """

    prompt_group_id = serializers.UUIDField(source="group_id", read_only=True)
    prompt_group_alias = serializers.SerializerMethodField()
    is_jinja_template = serializers.SerializerMethodField()
    media = serializers.SerializerMethodField()

    class Meta:
        model = Seed
        fields = [*SEED_FIELD_NAMES, "media"]
        read_only_fields = fields

    def get_prompt_group_alias(self, seed: Seed) -> str | None:
        return seed.group.alias if seed.group_id is not None else None

    def get_is_jinja_template(self, seed: Seed) -> bool:
        return False

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {"value": {"type": "string", "nullable": True}},
        }
    )
    def get_media(self, seed: Seed) -> dict[str, str | None] | None:
        if seed.media is None:
            return None
        url = media_url(self.context.get("request"), seed.media.sha256)
        return {"value": url} if url else None

    def to_representation(self, instance: Seed) -> dict[str, Any]:
        data = super().to_representation(instance)
        keep = {
            SeedType.PROMPT: set(PROMPT_ONLY),
            SeedType.SIMULATED_CONVERSATION: set(SIMULATED_ONLY),
        }.get(instance.seed_type, set())
        for key in _TYPED_KEYS - keep:
            del data[key]
        if not data["pyrit_version"]:
            del data["pyrit_version"]
        if data["media"] is None:
            del data["media"]
        return merge_extra(data, instance.extra)


class SeedGroupSerializer(serializers.ModelSerializer):
    """A seed group: ``id`` (the seeds' ``prompt_group_id``), ``kind``, ``alias`` and ``seeds``
    in PyRIT's canonical order (objective, simulated conversation, prompts by sequence).

    Expects ``seeds`` prefetched in that order.
    """

    seeds = SeedSerializer(many=True, read_only=True)

    class Meta:
        model = SeedGroup
        fields = ["id", "kind", "alias", "seeds"]
        read_only_fields = fields


class SeedDatasetSerializer(serializers.ModelSerializer):
    """A dataset with PyRIT's dataset-level keys and the number of its seeds.

    PyRIT's ``dataset_name`` is the dataset's name (the value its seeds carry, and the key of
    the detail URL); PyRIT's dataset-level ``name`` is the default *seed* name of the YAML
    file.
    """

    dataset_name = serializers.CharField(source="name", read_only=True)
    name = serializers.CharField(source="default_seed_name", read_only=True, allow_null=True)
    seed_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = SeedDataset
        fields = ["dataset_name", *DATASET_DEFAULTS, "seed_count"]
        read_only_fields = fields

    def to_representation(self, instance: SeedDataset) -> dict[str, Any]:
        return merge_extra(super().to_representation(instance), instance.extra)
