"""Form fields and filters every filterset shares (memory and seeds alike).

A value that does not parse is a 400 naming the parameter, never an empty result; repeatable
parameters are capped (``MAX_REPEATED_VALUES``) and ANDed.
"""

from __future__ import annotations

import json
import re
from datetime import UTC
from typing import Any

import django_filters
from django import forms
from django.db import connections
from django.db.models import F, OrderBy, Q, QuerySet

_HASH_RE = re.compile(r"^[0-9a-fA-F]{64}$")


#: The most distinct values one repeatable filter takes (``?labels=…&labels=…``).
MAX_REPEATED_VALUES = 10


class RepeatedValueField(forms.Field):
    """A query parameter that may be given several times (``?labels=a:b&labels=c:d``)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[str]:
        if value in (None, "", []):
            return []
        values = value if isinstance(value, list | tuple) else [value]
        # Each value is a join (all must hold), so a repeated value counts once, and the
        # number is capped: 200 copies of one harm category made PostgreSQL's planner use
        # 24 GB and SQLite refuse the statement (more than 200 FROM terms).
        distinct = list(dict.fromkeys(str(v) for v in values if str(v) != ""))
        if len(distinct) > MAX_REPEATED_VALUES:
            raise forms.ValidationError(
                "at most %(limit)d values of one filter (all must hold); got %(count)d",
                params={"limit": MAX_REPEATED_VALUES, "count": len(distinct)},
            )
        return distinct


class LabelPairsField(RepeatedValueField):
    """``key:value`` pairs; the value may itself contain colons."""

    def to_python(self, value: Any) -> list[tuple[str, str]]:
        pairs = []
        for item in super().to_python(value):
            key, sep, label_value = item.partition(":")
            if not sep or not key:
                # The value goes in params: error messages are %-formatted with them.
                raise forms.ValidationError(
                    "%(item)r is not a label filter; expected key:value, e.g. operator:alice",
                    params={"item": item},
                )
            pairs.append((key, label_value))
        return pairs


class IsoDateTimeField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 date-time, handed on in UTC.

    ``0001-01-01T00:00+01:00`` parses but falls before year 1 once converted, so it is
    refused here rather than raising at query time. Python accepts offsets up to ±23:59
    while PostgreSQL refuses any beyond ±15:59; converting to UTC first gives both
    databases the same instant to compare."""

    def to_python(self, value: Any) -> Any:
        moment = super().to_python(value)
        if moment is not None and moment.tzinfo is not None:
            try:
                return moment.astimezone(UTC)
            except OverflowError:
                raise forms.ValidationError(
                    "%(value)r is outside the years 1 to 9999 in UTC", params={"value": value}
                ) from None
        return moment


class HashField(forms.CharField):
    """A 64-hex identifier hash (any case in, lower case out)."""

    def to_python(self, value: Any) -> str:
        value = super().to_python(value).strip()
        if value and not _HASH_RE.match(value):
            raise forms.ValidationError(
                "%(value)r is not a hash; expected 64 hex characters", params={"value": value}
            )
        return value.lower()


class StrictBooleanField(forms.Field):
    """``true`` / ``false`` (also ``1``/``0``, ``yes``/``no``, any case); empty means unset.

    Django's ``NullBooleanField`` reads anything else as "unset", which would list every row
    for a typo; here it is an error naming the value.
    """

    _VALUES = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}

    def to_python(self, value: Any) -> bool | None:
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return value
        try:
            return self._VALUES[str(value).strip().lower()]
        except KeyError:
            raise forms.ValidationError(
                "%(value)r is not a boolean; expected true or false", params={"value": value}
            ) from None


class StrictBooleanFilter(django_filters.BooleanFilter):
    """A boolean filter whose unknown values are errors (see :class:`StrictBooleanField`)."""

    field_class = StrictBooleanField


class RepeatedFilter(django_filters.Filter):
    """A filter whose parameter may repeat; the value is a list of strings (use ``method``)."""

    field_class = RepeatedValueField


class HarmCategoryFilter(django_filters.Filter):
    """``harm_category=name``, repeatable, all required (``field_name`` names a HarmCategory)."""

    field_class = RepeatedValueField

    def filter(self, qs: QuerySet, value: list[str]) -> QuerySet:
        for name in value or []:
            qs = qs.filter(**{f"{self.field_name}__name": name})
        return qs


class IsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    """An ISO 8601 date-time bound (see :class:`IsoDateTimeField`)."""

    field_class = IsoDateTimeField


class HashFilter(django_filters.CharFilter):
    """An exact 64-hex hash; anything else is a 400."""

    field_class = HashField


class JSONListFilter(django_filters.Filter):
    """A JSON list column holds this string, case-insensitively; repeatable, all required.

    Used where PyRIT keeps a list without an index table (seed harm categories, score
    categories). The match is a ``LIKE`` on the JSON text for the quoted element, so
    ``"hate"`` does not match ``"hate_speech"``; it scans the table.
    """

    field_class = RepeatedValueField

    def filter(self, qs: QuerySet, value: list[str]) -> QuerySet:
        for item in value or []:
            qs = qs.filter(json_list_has(qs, self.field_name, item))
        return qs


def json_list_has(qs: QuerySet, field: str, item: str) -> Q:
    """A ``Q`` matching rows whose JSON list ``field`` contains the string ``item``.

    SQLite keeps Django's ``json.dumps`` text (non-ASCII escaped); PostgreSQL's ``jsonb``
    prints characters as they are, hence the vendor switch for the quoted needle.
    """
    ascii_only = connections[qs.db].vendor != "postgresql"
    return Q(**{f"{field}__icontains": json.dumps(item, ensure_ascii=ascii_only)})


def text_search(qs: QuerySet, fields: tuple[str, ...], value: str) -> QuerySet:
    """``q``: rows where any of ``fields`` contains ``value`` (case-insensitive)."""
    value = value.strip()
    if not value:
        return qs
    match = Q()
    for field in fields:
        match |= Q(**{f"{field}__icontains": value})
    return qs.filter(match)


def ordering(
    sorts: dict[str, tuple[Any, bool]], requested: str, default: str
) -> tuple[str, list[OrderBy]]:
    """The valid sort key (``default`` for anything unknown) and its ORDER BY, primary key last.

    ``sorts`` maps a key to (column expression, may be NULL); ``-key`` descends. The primary
    key breaks ties so pages never overlap or skip rows.
    """
    key = requested if requested.lstrip("-") in sorts else default
    column, nullable = sorts[key.lstrip("-")]
    # NULLS LAST only where a column can hold NULL: on SQLite the clause keeps an index on a
    # NOT NULL column from serving the ORDER BY.
    nulls = {"nulls_last": True} if nullable else {}
    if key.startswith("-"):
        return key, [column.desc(**nulls), F("pk").desc()]
    return key, [column.asc(**nulls), F("pk").asc()]
