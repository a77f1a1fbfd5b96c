"""Write services for seeds: datasets, seeds and groups. The admin and importers call these."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import transaction

from memory.choices import PromptDataType, SeedType, is_media_value
from memory.errors import InvalidMemory, Problem
from memory.models import MediaBlob
from memory.models.media import media_key
from memory.services import media_store, sha256_text
from seeds.choices import SeedGroupKind
from seeds.models import Seed, SeedDataset, SeedGroup
from seeds.rules import group_problems, normalise_group
from seeds.specs import SeedSpec


def seed_dataset_upsert(*, name: str, **defaults: Any) -> SeedDataset:
    """The dataset called ``name``, created or updated with ``defaults`` (model fields)."""
    if not name or not name.strip():
        raise InvalidMemory([Problem("name", "a dataset needs a name")])
    dataset, _ = SeedDataset.objects.update_or_create(name=name, defaults=defaults)
    return dataset


def seed_problems(spec: SeedSpec, where: str) -> list[Problem]:
    """Every way one seed breaks PyRIT's seed rules, with paths under ``where``."""
    problems = []
    if spec.seed_type not in SeedType.values:
        problems.append(Problem(f"{where}.seed_type", f"unknown seed type {spec.seed_type!r}"))
    if spec.data_type not in PromptDataType.values:
        problems.append(Problem(f"{where}.data_type", f"unknown data type {spec.data_type!r}"))
    if spec.seed_type == SeedType.OBJECTIVE and spec.data_type != PromptDataType.TEXT:
        problems.append(Problem(f"{where}.data_type", "an objective is always text"))
    if spec.seed_type == SeedType.OBJECTIVE and spec.is_general_technique:
        problems.append(
            Problem(f"{where}.is_general_technique", "an objective cannot be a general technique")
        )
    if not spec.added_by:
        # PyRIT's memory refuses seeds without ``added_by``.
        problems.append(Problem(f"{where}.added_by", "is required"))
    if spec.sequence < 0:
        problems.append(Problem(f"{where}.sequence", "must be >= 0"))
    return problems


def seed_instance(
    spec: SeedSpec,
    dataset: SeedDataset | None,
    group: SeedGroup | None,
    *,
    blob: MediaBlob | None = None,
) -> Seed:
    """An unsaved ``Seed`` for ``spec``: text SHA-256 computed, media bytes stored."""
    sha = spec.value_sha256
    if spec.media is not None:
        blob = media_store(data=spec.media, original_name=spec.value)
        sha = sha or blob.sha256
    elif sha is None and not is_media_value(spec.data_type, spec.value):
        sha = sha256_text(spec.value)
    return Seed(
        id=spec.id,
        seed_type=spec.seed_type,
        value=spec.value,
        value_sha256=sha,
        data_type=spec.data_type,
        media=blob,
        media_key=media_key(spec.value) if is_media_value(spec.data_type, spec.value) else "",
        name=spec.name,
        dataset=dataset,
        dataset_name=spec.dataset_name or (dataset.name if dataset else None),
        harm_categories=spec.harm_categories,
        description=spec.description,
        authors=spec.authors,
        groups=spec.groups,
        source=spec.source,
        date_added=spec.date_added or datetime.now(UTC),
        added_by=spec.added_by,
        metadata=spec.metadata,
        group=group,
        sequence=spec.sequence,
        role=spec.role,
        parameters=spec.parameters,
        is_general_technique=spec.is_general_technique,
        response_json_schema=spec.response_json_schema,
        num_turns=spec.num_turns,
        adversarial_chat_system_prompt_path=spec.adversarial_chat_system_prompt_path,
        simulated_target_system_prompt_path=spec.simulated_target_system_prompt_path,
        next_message_system_prompt_path=spec.next_message_system_prompt_path,
        pyrit_version=spec.pyrit_version,
        extra=spec.extra,
    )


def seed_create(*, spec: SeedSpec, dataset: SeedDataset | None = None) -> Seed:
    """Store one ungrouped seed; its SHA-256 is computed for text (or from media bytes)."""
    problems = seed_problems(spec, "seeds[0]")
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        seed = seed_instance(spec, dataset, None)
        seed.save(force_insert=True)
    return seed


def seed_group_create(
    *,
    seeds: Sequence[SeedSpec],
    dataset: SeedDataset | None = None,
    alias: str | None = None,
) -> SeedGroup:
    """Store seeds as one group after PyRIT's group validation (spec §8.5).

    The group id is the seeds' shared ``prompt_group_id`` (or a new one); the group is an
    "attack seed group" when it holds exactly one objective, as PyRIT groups datasets.
    """
    problems = group_problems(seeds)
    for index, spec in enumerate(seeds):
        problems.extend(seed_problems(spec, f"seeds[{index}]"))
    if problems:
        raise InvalidMemory(problems)
    ordered = normalise_group(seeds)
    group_id = next((s.prompt_group_id for s in seeds if s.prompt_group_id), None)
    has_objective = any(s.seed_type == SeedType.OBJECTIVE for s in seeds)
    with transaction.atomic():
        group = SeedGroup(
            kind=SeedGroupKind.ATTACK if has_objective else SeedGroupKind.PLAIN, alias=alias
        )
        if group_id is not None:
            group.id = group_id
        group.save(force_insert=True)
        for position, spec in enumerate(ordered):
            seed = seed_instance(spec, dataset, group)
            seed.position = position
            seed.save(force_insert=True)
    return group
