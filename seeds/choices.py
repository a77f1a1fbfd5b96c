"""Choices of the seeds app; seed and data types are PyRIT's (shared with ``memory``)."""

from __future__ import annotations

from django.db import models

from redteam.core.choices import ChatMessageRole, PromptDataType, SeedType

__all__ = ["ChatMessageRole", "PromptDataType", "SeedGroupKind", "SeedType"]


class SeedGroupKind(models.TextChoices):
    """PyRIT's group variants (contract §8.5); all are stored as ordinary groups."""

    PLAIN = "seed_group", "Seed group"
    ATTACK = "attack_seed_group", "Attack seed group"
    ATTACK_TECHNIQUE = "attack_technique_seed_group", "Attack technique seed group"
