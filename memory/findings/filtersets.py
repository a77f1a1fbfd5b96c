"""Filtersets of findings and operations, shared by the pages and the API."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from memory.models import Finding, FindingStatus, Operation, Severity


class FindingFilter(django_filters.FilterSet):
    """``status`` and ``severity`` (repeatable), ``operation`` (id), ``owner`` (user name),
    ``harm_category`` / ``framework_tag`` (one value each, exact), ``q`` (title and
    description, substring)."""

    status = django_filters.MultipleChoiceFilter(choices=FindingStatus.choices)
    severity = django_filters.MultipleChoiceFilter(choices=Severity.choices)
    operation = django_filters.UUIDFilter(field_name="operation_id")
    owner = django_filters.CharFilter(field_name="owner__username")
    harm_category = django_filters.CharFilter(method="filter_json_member")
    framework_tag = django_filters.CharFilter(method="filter_json_member")
    attack_result_id = django_filters.UUIDFilter(field_name="evidence__attack_result_id")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = Finding
        fields = ["status", "severity", "operation", "owner"]

    def filter_json_member(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        if not value:
            return qs
        field = "harm_categories" if name == "harm_category" else "framework_tags"
        # JSON containment is not portable to SQLite; a few hundred findings are filtered in
        # Python-free SQL by matching the JSON text of the quoted value instead.
        return qs.filter(**{f"{field}__icontains": f'"{value}"'})

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        if not value:
            return qs
        return qs.filter(Q(title__icontains=value) | Q(description__icontains=value))


class OperationFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = Operation
        fields = ["q"]

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return qs.filter(name__icontains=value) if value else qs
