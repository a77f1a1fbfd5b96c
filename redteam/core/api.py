"""Pieces every REST endpoint shares: PyRIT shapes with the client's extra keys, media links,
and serializers that build their field list once (:class:`FieldPlanMixin`)."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.urls import NoReverseMatch, reverse
from django.utils.functional import cached_property
from rest_framework.fields import DateTimeField, SkipField

#: A UUID in a URL path, with or without dashes (``lookup_value_regex`` of the viewsets).
UUID_PATTERN = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"


#: Keys Redline adds to PyRIT's shapes; a stale copy kept in ``extra`` never comes back.
OUTPUT_ONLY_KEYS = frozenset({"media"})


def merge_extra(data: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """Add the client's unknown keys back; a key the serializer already wrote wins."""
    for key, value in (extra or {}).items():
        if key not in OUTPUT_ONLY_KEYS:
            data.setdefault(key, value)
    return data


def media_url(request: Any, sha256: str) -> str | None:
    """The API URL of a stored blob, or None while the media endpoint is not routed."""
    try:
        path = reverse("api-media-detail", kwargs={"sha256": sha256})
    except NoReverseMatch:
        return None
    return request.build_absolute_uri(path) if request is not None else path


class FieldPlanMixin:
    """``to_representation`` through a plan of the serializer's fields built once.

    DRF's ``Serializer.to_representation`` walks each field's ``source`` through its generic
    ``get_attribute`` (mapping or attribute, callables called, exceptions translated) for
    every row. The plan binds each readable field once to an ``attrgetter`` of its source
    and its ``to_representation``; a row is then one call per field. The output is the same
    dict, keys in the same order, with the same null rule: a value of None is None without
    calling the field. A source that gives a callable (a model method) or fails to resolve
    falls back to the field's own ``get_attribute``. Date-times are shown in the time zone
    active when the plan is made (one serializer serialises within one request).
    """

    @cached_property
    def _field_plan(self) -> list[tuple[str, Callable[[Any], Any], Any]]:
        plan = []
        for field in self._readable_fields:
            if isinstance(field, DateTimeField) and not hasattr(field, "timezone"):
                # The time zone active now, looked up once: DRF asks for it on every value,
                # through a context-local read that cost more than the formatting itself.
                field.timezone = field.default_timezone()
            source = field.source
            get = _itself if source == "*" else attrgetter(".".join(field.source_attrs))
            plan.append((field.field_name, get, field))
        return plan

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name, get, field in self._field_plan:
            try:
                value = get(instance)
                if callable(value):
                    raise AttributeError(name)
            except (AttributeError, ObjectDoesNotExist):
                try:
                    value = field.get_attribute(instance)
                except SkipField:
                    continue
            data[name] = None if value is None else field.to_representation(value)
        return data


def _itself(value: Any) -> Any:
    return value
