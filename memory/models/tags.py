"""Normalised label and harm-category values, the index behind label and harm filters.

PyRIT keeps labels (``{"operator": "alice"}``) and harm categories as JSON, which both of our
databases can only scan. Conversations and attack results keep that JSON verbatim and are also
linked to these small lookup tables, so "every attack labelled operation=op_x" or "harm category
= violence" is an indexed join on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import models
from django.db.models import Q

from redteam.core import nul


def label_value_sha256(value: str) -> str:
    """The hash a label value is unique and found by: SHA-256 of its text (NUL as NUL; a lone
    surrogate JSON may carry passes as its own code point instead of failing)."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


class Label(models.Model):
    """One distinct ``key=value`` label pair.

    A value is any text PyRIT writes (its own labels run to 4,004 characters), so it is a text
    column, and the pair is unique and looked up by ``(key, value_sha256)``: an index on the
    text itself would cap its length (PostgreSQL's B-tree refuses entries past ~2.7 kB).
    """

    key = nul.CharField(max_length=255)
    value = nul.TextField()
    #: :func:`label_value_sha256` of ``value``, set by :meth:`of` (and ``save``)
    value_sha256 = models.CharField(max_length=64, editable=False)

    class Meta:
        constraints = [
            # the pair's uniqueness, and the index every lookup of a pair (``matching``) reads
            models.UniqueConstraint(
                fields=["key", "value_sha256"], name="%(app_label)s_%(class)s_unique_pair"
            ),
        ]
        ordering = ["key", "value"]

    def __str__(self) -> str:
        return f"{self.key}={self.value}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Saves the pair with its value's hash."""
        self.value_sha256 = label_value_sha256(self.value)
        super().save(*args, **kwargs)

    @classmethod
    def of(cls, key: str, value: str) -> Label:
        """An unsaved pair with its hash, as bulk inserts (which skip ``save``) need it."""
        return cls(key=key, value=value, value_sha256=label_value_sha256(value))

    @staticmethod
    def matching(key: str, value: str, prefix: str = "") -> Q:
        """The condition finding the pair ``key=value`` through the pair index (``prefix``:
        the path to a ``Label`` from the queried model, e.g. ``"label__"``)."""
        return Q(
            **{
                f"{prefix}key": key,
                f"{prefix}value_sha256": label_value_sha256(value),
                f"{prefix}value": value,
            }
        )


class HarmCategory(models.Model):
    """One distinct harm category name (``violence``, ``illegal``…)."""

    name = nul.CharField(max_length=255, unique=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "harm categories"

    def __str__(self) -> str:
        return self.name
