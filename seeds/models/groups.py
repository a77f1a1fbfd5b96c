"""Seed groups: the seeds that form one test case (contract §8.5)."""

from __future__ import annotations

import uuid

from django.db import models
from simple_history.models import HistoricalRecords

from redteam.core import nul
from redteam.core.constraints import choice_check
from seeds.choices import SeedGroupKind


class SeedGroup(models.Model):
    """One test case: an optional objective plus ordered prompts; ``id`` is ``prompt_group_id``.

    PyRIT stores a group only as seeds sharing a ``prompt_group_id``; the row gives curators a
    handle on it. Its membership rules are checked by the seeds services (and, for "at most one
    objective / simulated conversation", by partial unique constraints on ``Seed``).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = nul.CharField(max_length=32, choices=SeedGroupKind.choices, default=SeedGroupKind.PLAIN)
    # The YAML ``prompt_group_alias`` the group was built from, for display only.
    alias = nul.CharField(max_length=255, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # Who changed what and when; admin "History" (curated data, issue 6).
    history = HistoricalRecords()

    class Meta:
        constraints = [
            choice_check("kind", SeedGroupKind, "%(app_label)s_%(class)s_kind_valid"),
        ]

    def __str__(self) -> str:
        return self.alias or str(self.id)
