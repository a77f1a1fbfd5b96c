"""Reusable database constraint and index builders shared by the memory and seeds models.

The checks are written for SQLite's cost model as much as for correctness: every one of them
runs on each row an ingestion or import inserts. On SQLite (3.40 here) ``x IN ('a', 'b', …)``
inside a CHECK builds a temporary lookup table for every row checked, and ``REGEXP`` calls
back into Python; four such checks made a message-piece insert about three times slower than
the insert itself (75–95 µs instead of about 30 µs per row, ``docs/performance.md``). A chain
of ``=`` comparisons and ``LTRIM``/``LENGTH`` mean the same on both databases and stay in C.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable
from typing import Any

from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Length
from django.db.models.lookups import Exact

#: The largest value an ``IntegerField`` (PostgreSQL ``integer``) holds; SQLite would store more,
#: so every write path refuses more, and both databases give the same answer.
INT_MAX = 2**31 - 1
#: The largest value a ``BigIntegerField`` (``bigint``) holds.
BIGINT_MAX = 2**63 - 1

_HEX_DIGITS = "0123456789abcdef"


class TrimCharacters(models.Func):
    """``LTRIM(text, characters)``: ``text`` without its leading ``characters``; the same
    two-argument function on SQLite and PostgreSQL (Django's ``LTrim`` trims spaces only)."""

    function = "LTRIM"
    output_field = models.CharField()


class UniqueIndex(models.Index):
    """An index created ``UNIQUE``: a covering index that extends a unique key (the primary
    key, say) with the columns a query reads. SQLite's planner weighs a unique index like the
    key it extends and then picks it for the covered query; a unique *constraint* would not do
    here, since SQLite folds it into the table definition under a generated name."""

    def create_sql(self, model: Any, schema_editor: Any, using: str = "", **kwargs: Any) -> Any:
        statement = super().create_sql(model, schema_editor, using=using, **kwargs)
        statement.template = statement.template.replace("CREATE INDEX", "CREATE UNIQUE INDEX", 1)
        return statement


def one_of(field: str, values: Iterable[str]) -> Q:
    """``field`` equals one of ``values``: ``(f = 'a' OR f = 'b' …)``, not ``IN`` (see above)."""
    return functools.reduce(operator.or_, (Q(**{field: value}) for value in values))


def is_sha256(field: str) -> Q:
    """``field`` is 64 lower-case hex digits (``LENGTH`` and ``LTRIM``, no regular expression)."""
    return Q(
        Exact(Length(F(field)), 64),
        Exact(TrimCharacters(F(field), Value(_HEX_DIGITS)), ""),
    )


def choice_check(
    field: str, choices: type[models.TextChoices], name: str
) -> models.CheckConstraint:
    """A check constraint keeping ``field`` inside the values of ``choices``."""
    return models.CheckConstraint(condition=one_of(field, choices.values), name=name)


def sha256_or_null_check(field: str, name: str) -> models.CheckConstraint:
    """A check constraint: ``field`` is NULL or 64 lower-case hex characters."""
    return models.CheckConstraint(
        condition=Q(**{f"{field}__isnull": True}) | is_sha256(field), name=name
    )


def partial_index(field: str, name: str, *, unless: object = None) -> models.Index:
    """An index on ``field`` of only the rows where it is set: not NULL, or not ``unless``.

    For columns most rows leave empty (media of text pieces, reviewers of automated scores):
    those rows then feed no index on every insert. PostgreSQL uses it for any ``field = x``
    look-up; SQLite only proves ``IS NOT NULL`` from ``field = x``, so with ``unless`` a query
    must repeat the index's condition (``.exclude(field=unless)``) for SQLite to use it.
    """
    condition = Q(**{f"{field}__isnull": False}) if unless is None else ~Q(**{field: unless})
    return models.Index(fields=[field], condition=condition, name=name)
