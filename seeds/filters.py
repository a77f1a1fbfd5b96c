"""Filtersets of the seed models, shared by the API and (later) the pages.

Same parameter conventions as ``memory.storage.filters`` (``redteam.core.filters``): repeatable
``harm_category`` (ANDed; a case-insensitive match of one element of the seed's JSON list,
which scans), ISO-8601 ``date_added_after`` / ``date_added_before``, and ``q``, a case-
insensitive substring match over the fields listed on each filterset. Values that do not parse
are a 400.
"""

from __future__ import annotations

import django_filters
from django.db.models import Exists, OuterRef, QuerySet

from redteam.core.filters import (
    IsoDateTimeFilter,
    JSONListFilter,
    RepeatedFilter,
    json_list_has,
    text_search,
)
from seeds.choices import ChatMessageRole, PromptDataType, SeedGroupKind, SeedType
from seeds.models import Seed, SeedDataset, SeedGroup


class SeedFilter(django_filters.FilterSet):
    """Seeds. ``dataset`` is a curated dataset's name, ``dataset_name`` the value the seed
    carries (they differ only for seeds without a curated dataset); ``group`` is a
    ``prompt_group_id``. ``q``: value, name or description.
    """

    seed_type = django_filters.MultipleChoiceFilter(choices=SeedType.choices)
    data_type = django_filters.MultipleChoiceFilter(choices=PromptDataType.choices)
    role = django_filters.MultipleChoiceFilter(choices=ChatMessageRole.choices)
    dataset = django_filters.CharFilter(field_name="dataset__name")
    dataset_name = django_filters.CharFilter()
    group = django_filters.UUIDFilter(field_name="group_id")
    harm_category = JSONListFilter(field_name="harm_categories")
    added_by = django_filters.CharFilter()
    is_general_technique = django_filters.BooleanFilter()
    date_added_after = IsoDateTimeFilter(field_name="date_added", lookup_expr="gte")
    date_added_before = IsoDateTimeFilter(field_name="date_added", lookup_expr="lte")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = Seed
        fields: list[str] = []

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return text_search(qs, ("value", "name", "description"), value)


class SeedGroupFilter(django_filters.FilterSet):
    """Seed groups. ``dataset``, ``harm_category`` and ``q`` (seed value) keep groups with at
    least one matching seed.
    """

    kind = django_filters.MultipleChoiceFilter(choices=SeedGroupKind.choices)
    alias = django_filters.CharFilter()
    dataset = django_filters.CharFilter(method="filter_dataset")
    harm_category = RepeatedFilter(method="filter_harm")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = SeedGroup
        fields: list[str] = []

    def filter_dataset(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return qs.filter(Exists(Seed.objects.filter(group=OuterRef("pk"), dataset__name=value)))

    def filter_harm(self, qs: QuerySet, name: str, value: list[str]) -> QuerySet:
        for item in value:
            seeds = Seed.objects.filter(group=OuterRef("pk"))
            qs = qs.filter(Exists(seeds.filter(json_list_has(seeds, "harm_categories", item))))
        return qs

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        if not value.strip():
            return qs
        seeds = text_search(Seed.objects.filter(group=OuterRef("pk")), ("value",), value)
        return qs.filter(Exists(seeds))


class SeedDatasetFilter(django_filters.FilterSet):
    """Seed datasets. ``dataset_name`` is exact; ``q``: name or description."""

    dataset_name = django_filters.CharFilter(field_name="name")
    seed_type = django_filters.MultipleChoiceFilter(choices=SeedType.choices)
    data_type = django_filters.MultipleChoiceFilter(choices=PromptDataType.choices)
    harm_category = JSONListFilter(field_name="harm_categories")
    added_by = django_filters.CharFilter()
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = SeedDataset
        fields: list[str] = []

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return text_search(qs, ("name", "description"), value)
