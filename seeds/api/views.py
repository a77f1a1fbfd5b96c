"""Read endpoints of seeds: small read-only viewsets over the shared filtersets.

Authentication and permissions are the project defaults; pagination is limit/offset.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from django.db.models import Count, IntegerField, OuterRef, Prefetch, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from redteam.core.api import UUID_PATTERN
from seeds import filters
from seeds.api import serializers
from seeds.exporting import export_dataset, export_filename
from seeds.models import Seed, SeedDataset, SeedGroup


class YAMLRenderer(BaseRenderer):
    """Text that already is YAML goes out as is; error bodies (dicts) are dumped as YAML."""

    media_type = "application/yaml"
    format = "yaml"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None):
        if isinstance(data, str):
            return data.encode("utf-8")
        # Error bodies hold DRF's ErrorDetail (a str subclass YAML cannot represent).
        plain = json.loads(json.dumps(data, default=str))
        return yaml.safe_dump(plain, allow_unicode=True, sort_keys=False).encode("utf-8")


class SeedDatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """Seed datasets by name, with their seed counts; ``<name>/yaml/`` exports one."""

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

    @extend_schema(
        summary="Export a seed dataset as PyRIT YAML",
        description=(
            "The dataset as one PyRIT dataset file (`SeedDataset.from_yaml_file` reads it): "
            "every seed with its own fields, groups as `prompt_group_alias`, media values as "
            "stored (placeholders such as `{{ datasets_path }}` verbatim)."
        ),
        filters=False,
        responses={
            (200, "application/yaml"): OpenApiResponse(OpenApiTypes.STR, "the YAML file"),
            (404, "application/yaml"): OpenApiResponse(OpenApiTypes.STR, "no such dataset"),
        },
    )
    @action(detail=True, methods=["get"], url_path="yaml", renderer_classes=[YAMLRenderer])
    def yaml(self, request: Request, name: str | None = None) -> Response:
        # Only the name: the list filters do not apply to an export.
        dataset = self.get_object_by_name()
        response = Response(export_dataset(dataset), content_type="application/yaml; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{export_filename(dataset.name)}"'
        return response

    def get_object_by_name(self) -> SeedDataset:
        dataset = get_object_or_404(SeedDataset, name=self.kwargs["name"])
        self.check_object_permissions(self.request, dataset)
        return dataset


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
