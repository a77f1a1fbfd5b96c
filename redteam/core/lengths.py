"""Text that does not fit its column is a problem of its item, the same on every database.

A ``CharField`` is ``varchar(n)`` on PostgreSQL, which refuses a longer value (a ``DataError``
that failed the whole batch), and plain ``TEXT`` on SQLite, which stores it. So every write
path measures the text bound for a ``CharField`` against the field's ``max_length`` before it
writes: a spec's attributes against the model fields of the same name
(:func:`spec_problems`), and single values (:func:`value_problems`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from django.db import models

from redteam.core.errors import Problem


@functools.cache
def char_limits(model: type[models.Model]) -> dict[str, int]:
    """``{field name: max_length}`` of the model's free-text ``CharField`` columns.

    Fields with choices are left out: their values are checked against the choices.
    """
    return {
        f.name: f.max_length
        for f in model._meta.concrete_fields
        if isinstance(f, models.CharField) and f.max_length and not f.choices
    }


def _message(length: int, limit: int) -> str:
    return f"is {length:,} characters long; at most {limit:,} fit in its column"


def _over(value: Any, limit: int) -> bool:
    return isinstance(value, str) and len(value) > limit


def spec_problems(spec: Any, model: type[models.Model], path: str) -> Iterator[Problem]:
    """Attributes of ``spec`` too long for the ``model`` field of the same name."""
    for name, limit in char_limits(model).items():
        value = getattr(spec, name, None)
        if _over(value, limit):
            yield Problem(f"{path}.{name}", _message(len(value), limit))


def value_problems(
    value: Any, model: type[models.Model], name: str, path: str
) -> Iterator[Problem]:
    """``value`` too long for ``model.name``."""
    limit = char_limits(model)[name]
    if _over(value, limit):
        yield Problem(path, _message(len(value), limit))


#: At most this many harm categories in one list (a finding's ``harm_categories``, a seed's,
#: a conversation's or attack result's ``targeted_harm_categories``): each is a row of the harm
#: category index, and PyRIT's own lists hold a handful. Documented in docs/api.md.
HARM_CATEGORIES_MAX_ITEMS = 100


def too_many_items(count: int, limit: int) -> str:
    """The problem of a list of ``count`` items where at most ``limit`` are accepted."""
    return f"has {count:,} items; at most {limit:,} are accepted"
