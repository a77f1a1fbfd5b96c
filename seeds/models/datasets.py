"""Seed datasets: named collections with PyRIT's dataset-level defaults (contract §8.6)."""

from __future__ import annotations

from django.db import models
from django.urls import reverse
from simple_history.models import HistoricalRecords

from redteam.core import nul
from redteam.core.constraints import choice_check
from seeds.choices import PromptDataType, SeedType


class SeedDataset(models.Model):
    """A named set of seeds, with the defaults PyRIT's YAML format merges into each seed.

    ``name`` is the value seeds carry as ``dataset_name``; ``default_seed_name`` is the YAML
    file's dataset-level ``name`` key, which PyRIT uses as a default *seed* name.
    """

    name = nul.CharField(max_length=255, unique=True)
    default_seed_name = nul.CharField(max_length=255, null=True, blank=True)
    description = nul.TextField(null=True, blank=True)
    harm_categories = nul.JSONField(default=list, blank=True)
    authors = nul.JSONField(default=list, blank=True)
    groups = nul.JSONField(default=list, blank=True)
    source = nul.TextField(null=True, blank=True)
    data_type = nul.CharField(
        max_length=32, choices=PromptDataType.choices, default=PromptDataType.TEXT
    )
    seed_type = nul.CharField(max_length=32, choices=SeedType.choices, default=SeedType.PROMPT)
    date_added = models.DateTimeField(null=True, blank=True)
    added_by = nul.CharField(max_length=255, null=True, blank=True)
    extra = nul.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Who changed what and when; admin "History" (curated data, issue 6).
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["name"]
        constraints = [
            choice_check("data_type", PromptDataType, "%(app_label)s_%(class)s_data_type_valid"),
            choice_check("seed_type", SeedType, "%(app_label)s_%(class)s_seed_type_valid"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("admin:seeds_seeddataset_change", args=[self.pk])
