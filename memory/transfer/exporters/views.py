"""``GET /api/v1/export/``: the memory (or a slice of it) as one streamed ingestion envelope.

Session or token auth (read scope is enough) and the view permissions of every exported
model. The body is produced while it is sent (``StreamingHttpResponse``), chunk by chunk, so a
large memory never sits in the server's memory.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import renderers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.transfer.exporters.profiles import (
    DEFAULT_PROFILE,
    PROFILES,
    UnknownProfileError,
    export_profile,
)
from memory.transfer.exporters.selection import ExportFilterError, export_filters
from memory.transfer.exporters.stream import memory_export_stream
from redteam.core.downloads import file_stamp, streaming_download
from redteam.permissions import RequiredPermissions, TokenScope

EXPORT_PERMISSIONS = [
    f"{app}.view_{model}"
    for app, models in (
        (
            "memory",
            (
                "conversation",
                "messagepiece",
                "score",
                "scorablecontent",
                "attackresult",
                "scenarioresult",
                "pyritrecord",
            ),
        ),
        ("seeds", ("seeddataset", "seed", "seedgroup")),
    )
    for model in models
]
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


class JSONLinesRenderer(renderers.JSONRenderer):
    """``?format=jsonl`` / ``Accept: application/x-ndjson``; errors are one JSON line."""

    media_type = "application/x-ndjson"
    format = "jsonl"


def _flag(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValidationError({name: [f"{value!r} is not a boolean; use true or false"]})


@extend_schema(
    summary="Export memory in PyRIT's shapes",
    description=(
        "The stored memory (or the part the filters select) as one ingestion envelope: "
        "`conversations` (PyRIT 1.1.0 `{conversation, messages}` with 0.12 piece dicts: "
        "labels, targets, attack identifier and scores on every piece), `scores` (those no "
        "exported piece shows), `scenario_results` (attack results embedded), "
        "`attack_results` (1.1.0 dumps, `last_response` / `last_score` embedded), `seeds`, "
        "`seed_groups`. Posting it to `/api/v1/ingest/` of an empty Redline recreates the "
        "same memory. `profile=pyrit-1.1` / `pyrit-0.12` writes only what that PyRIT version "
        "loads as it is. Streamed; `format=jsonl` gives one single-item envelope per line; "
        "`with_media=true` a zip of the document and the media files (see docs/export.md)."
    ),
    parameters=[
        OpenApiParameter(
            "format",
            OpenApiTypes.STR,
            enum=["json", "jsonl"],
            description="Document format (default json).",
        ),
        OpenApiParameter(
            "conversation_id",
            OpenApiTypes.STR,
            description="One conversation, its attack results and what they refer to.",
        ),
        OpenApiParameter(
            "labels",
            OpenApiTypes.STR,
            many=True,
            description="`key:value`, repeatable, all required (attacks and conversations).",
        ),
        OpenApiParameter(
            "attack_class",
            OpenApiTypes.STR,
            description="Attack results of this attack strategy class and their conversations.",
        ),
        OpenApiParameter(
            "since",
            OpenApiTypes.STR,
            description=(
                "A date (`2026-01-31`, midnight UTC) or ISO date-time: conversations started, "
                "attacks and scores recorded, seeds added on or after it."
            ),
        ),
        OpenApiParameter(
            "profile",
            OpenApiTypes.STR,
            enum=list(PROFILES),
            default=DEFAULT_PROFILE,
            description=(
                "`redline` (default): everything Redline stores. `pyrit-1.1` / `pyrit-0.12`: "
                "only the keys and sections that PyRIT version loads as they are (1.1: scores "
                "apart from pieces; 0.12: conversations as flat `message_pieces`); "
                "docs/export.md lists what each drops."
            ),
        ),
        OpenApiParameter(
            "with_media",
            OpenApiTypes.BOOL,
            description="A zip of the document and the stored media files it shows.",
        ),
    ],
    responses={
        (200, "application/json"): OpenApiTypes.OBJECT,
        (200, "application/x-ndjson"): OpenApiTypes.STR,
        (200, "application/zip"): OpenApiTypes.BINARY,
        400: OpenApiTypes.OBJECT,
    },
)
class ExportView(APIView):
    """Streams the export document (or the zip with media)."""

    permission_classes = [IsAuthenticated, TokenScope, RequiredPermissions]
    required_permissions = {"GET": EXPORT_PERMISSIONS}
    renderer_classes = [renderers.JSONRenderer, JSONLinesRenderer]

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # DRF answers an unknown ``?format=`` with 404; here it is a bad parameter.
        try:
            return super().perform_content_negotiation(request, force=force)
        except Http404:
            raise ValidationError({"format": ["use json or jsonl"]}) from None

    def get(self, request: Request) -> StreamingHttpResponse | Response:
        params = request.query_params
        with_media = _flag("with_media", params.get("with_media", ""))
        try:
            profile = export_profile(name=params.get("profile"))
        except UnknownProfileError as exc:
            raise ValidationError({"profile": [str(exc)]}) from None
        try:
            filters = export_filters(
                conversation_id=params.get("conversation_id"),
                labels=params.getlist("labels"),
                attack_class=params.get("attack_class"),
                since=params.get("since"),
            )
            stream = memory_export_stream(
                filters=filters,
                fmt=request.accepted_renderer.format,
                with_media=with_media,
                request=request,
                profile=profile,
            )
        except ExportFilterError as exc:
            return Response({"detail": str(exc)}, status=400)
        return streaming_download(
            stream.chunks,
            content_type=stream.content_type,
            filename=f"redline-export-{file_stamp()}.{stream.suffix}",
        )
