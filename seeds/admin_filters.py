"""List filters of the seed admin: values held in JSON lists, groups, templates, parameters.

Each filter costs at most one query to list its choices (the JSON-list ones read the distinct
lists once and flatten them in Python; seed tables are thousands of rows, not millions).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from redteam.core.filters import json_list_has
from redteam.core.uuids import parse_uuid

#: Choices a JSON-list filter offers at most (the most frequent first would need a scan).
MAX_CHOICES = 200


class _JSONListValueFilter(admin.SimpleListFilter):
    """Seeds whose JSON list ``field`` holds the chosen string."""

    field = ""

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        values: set[str] = set()
        for items in (
            model_admin.model._default_manager.order_by()
            .values_list(self.field, flat=True)
            .distinct()
        ):
            values.update(str(item) for item in items or [])
        return [(v, v) for v in sorted(values, key=str.casefold)[:MAX_CHOICES]]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if not value:
            return queryset
        return queryset.filter(json_list_has(queryset, self.field, value))


class HarmCategoryFilter(_JSONListValueFilter):
    title = "harm category"
    parameter_name = "harm_category"
    field = "harm_categories"


class AuthorFilter(_JSONListValueFilter):
    title = "author"
    parameter_name = "author"
    field = "authors"


class TeamFilter(_JSONListValueFilter):
    """PyRIT's seed ``groups`` (teams such as "AI Red Team"), not seed groups."""

    title = "team (groups)"
    parameter_name = "team"
    field = "groups"


class SeedGroupFilter(admin.SimpleListFilter):
    """In a seed group or not; a group's id (``?group=<uuid>``) lists that group's seeds."""

    title = "seed group"
    parameter_name = "group"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("grouped", "In a group"), ("ungrouped", "Not in a group")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "grouped":
            return queryset.filter(group__isnull=False)
        if value == "ungrouped":
            return queryset.filter(group__isnull=True)
        group_id = parse_uuid(value or "")
        if group_id is not None:
            return queryset.filter(group_id=group_id)
        return queryset


class IsTemplateFilter(admin.SimpleListFilter):
    """Values with Jinja2 markup (``{{``, ``{%``)."""

    title = "is template"
    parameter_name = "template"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        markup = Q(value__contains="{{") | Q(value__contains="{%")
        if self.value() == "yes":
            return queryset.filter(markup)
        if self.value() == "no":
            return queryset.exclude(markup)
        return queryset


class HasParametersFilter(admin.SimpleListFilter):
    """Seeds that declare template ``parameters``."""

    title = "has parameters"
    parameter_name = "has_parameters"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return queryset.exclude(parameters=[])
        if self.value() == "no":
            return queryset.filter(parameters=[])
        return queryset
