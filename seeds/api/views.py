"""Read endpoints of seeds: small read-only viewsets over the shared filtersets.

Authentication and permissions are the project defaults; pagination is limit/offset.
"""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Prefetch, Subquery
from django.db.models.functions import Coalesce
from rest_framework import viewsets

from memory.api.views import UUID_PATTERN
from seeds import filters
from seeds.api import serializers
from seeds.models import Seed, SeedDataset, SeedGroup


class SeedDatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """Seed datasets by name, with their seed counts."""

    queryset = SeedDataset.objects.annotate(
        seed_count=Coalesce(
            Subquery(
                Seed.objects.filter(dataset=OuterRef("pk"))
                .order_by()
                .values("dataset")
                .annotate(n=Count("pk"))
                .values("n"),
                output_field=IntegerField(),
            ),
            0,
        )
    ).order_by("name")
    serializer_class = serializers.SeedDatasetSerializer
    filterset_class = filters.SeedDatasetFilter
    lookup_field = "name"
    lookup_value_regex = "[^/]+"


class SeedViewSet(viewsets.ReadOnlyModelViewSet):
    """Seeds by id, in the order they were stored."""

    queryset = Seed.objects.select_related("group", "media").order_by("created_at", "id")
    serializer_class = serializers.SeedSerializer
    filterset_class = filters.SeedFilter
    lookup_value_regex = UUID_PATTERN


class SeedGroupViewSet(viewsets.ReadOnlyModelViewSet):
    """Seed groups by id (``prompt_group_id``), each with its seeds in canonical order."""

    queryset = SeedGroup.objects.prefetch_related(
        # The page's seeds in one query, in PyRIT's group order, with their media.
        Prefetch("seeds", queryset=Seed.objects.in_group_order().select_related("media"))
    ).order_by("created_at", "id")
    serializer_class = serializers.SeedGroupSerializer
    filterset_class = filters.SeedGroupFilter
    lookup_value_regex = UUID_PATTERN
