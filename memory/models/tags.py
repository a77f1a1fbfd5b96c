"""Normalised label and harm-category values, the index behind label and harm filters.

PyRIT keeps labels (``{"operator": "alice"}``) and harm categories as JSON, which both of our
databases can only scan. Conversations and attack results keep that JSON verbatim and are also
linked to these small lookup tables, so "every attack labelled operation=op_x" or "harm category
= violence" is an indexed join on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from django.db import models

from redteam.core import nul


class Label(models.Model):
    """One distinct ``key=value`` label pair."""

    key = nul.CharField(max_length=255)
    value = nul.CharField(max_length=1024)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["key", "value"], name="%(app_label)s_%(class)s_unique_pair"
            ),
        ]
        ordering = ["key", "value"]

    def __str__(self) -> str:
        return f"{self.key}={self.value}"


class HarmCategory(models.Model):
    """One distinct harm category name (``violence``, ``illegal``…)."""

    name = nul.CharField(max_length=255, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "harm categories"

    def __str__(self) -> str:
        return self.name
