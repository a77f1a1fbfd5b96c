"""Reusable database constraint builders shared by the memory and seeds models."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

# \A and \Z, not ^ and $: Python's re (which Django uses for SQLite) lets $ match before a
# trailing newline. Both anchors mean "whole string" on SQLite and PostgreSQL alike.
SHA256_REGEX = r"\A[0-9a-f]{64}\Z"


def choice_check(
    field: str, choices: type[models.TextChoices], name: str
) -> models.CheckConstraint:
    """A check constraint keeping ``field`` inside the values of ``choices``."""
    return models.CheckConstraint(condition=Q(**{f"{field}__in": choices.values}), name=name)


def sha256_or_null_check(field: str, name: str) -> models.CheckConstraint:
    """A check constraint: ``field`` is NULL or 64 lower-case hex characters."""
    return models.CheckConstraint(
        condition=Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__regex": SHA256_REGEX}),
        name=name,
    )


def partial_index(field: str, name: str, *, unless: object = None) -> models.Index:
    """An index on ``field`` of only the rows where it is set: not NULL, or not ``unless``.

    For columns most rows leave empty (media of text pieces, reviewers of automated scores):
    those rows then feed no index on every insert. Lookups by a value still use it, since
    ``field = x`` implies the condition on both databases.
    """
    condition = Q(**{f"{field}__isnull": False}) if unless is None else ~Q(**{field: unless})
    return models.Index(fields=[field], condition=condition, name=name)
