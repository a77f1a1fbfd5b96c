"""``POST /api/v1/ingest/``: PyRIT memory JSON of any version, written atomically.

DRF does the routing, authentication and permissions; the body is read and parsed here, with
the size limit checked before a byte is parsed, and handed to ``memory.storage.write.ingest``.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.parsers import BaseParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.transfer.ingest.limits import Limits, check_payload, count_items
from memory.transfer.ingest.service import ingest
from redteam.core.errors import Problem
from redteam.models import ApiToken
from redteam.permissions import RequiredPermissions, TokenScope

INGEST_PERMISSIONS = [
    f"{app}.{action}_{model}"
    for app, models in (
        (
            "memory",
            (
                "conversation",
                "messagepiece",
                "score",
                "attackresult",
                "scenarioresult",
                "pyritrecord",
            ),
        ),
        ("seeds", ("seed", "seedgroup", "seeddataset")),
    )
    for model in models
    for action in ("add", "change")
]


class RawJSONParser(BaseParser):
    """Declares JSON for content negotiation; the view reads the body itself."""

    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None):
        return None


def _error(status_code: int, message: str, **extra: Any) -> Response:
    return Response({"detail": message, **extra}, status=status_code)


def _problems_body(problems: list[Problem]) -> dict[str, Any]:
    return {
        "written": False,
        "errors": [{"path": p.path, "id": None, "message": p.message} for p in problems],
    }


@extend_schema(
    summary="Ingest PyRIT memory",
    description=(
        "A JSON object with any of `conversations`, `messages`, `message_pieces`, `scores`, "
        "`attack_results`, `seeds`, `seed_groups`, `scenario_results` (PyRIT 0.9 – 1.1.0 "
        "shapes), or a bare JSON array of message pieces (0.x `export_conversations`). "
        "Atomic: one bad item and nothing is written (400, every error listed). "
        "With `partial=true` the good items are written (207, per-item results). "
        "Re-sending the same data changes nothing."
    ),
    request={"application/json": OpenApiTypes.OBJECT},
    parameters=[
        OpenApiParameter(
            "partial",
            OpenApiTypes.BOOL,
            description="Write the valid items and report the others (HTTP 207).",
        )
    ],
    responses={
        200: OpenApiTypes.OBJECT,
        207: OpenApiTypes.OBJECT,
        400: OpenApiTypes.OBJECT,
        413: OpenApiTypes.OBJECT,
    },
    examples=[
        OpenApiExample(
            "Two pieces of a 0.x export",
            value=[
                {
                    "id": "6a1a5b8e-2f0c-4f3e-9d0c-1a2b3c4d5e6f",
                    "conversation_id": "conv-1",
                    "sequence": 0,
                    "role": "user",
                    "original_value": "Hello",
                },
                {
                    "id": "7b2b6c9f-3a1d-4a4f-8e1d-2b3c4d5e6f70",
                    "conversation_id": "conv-1",
                    "sequence": 1,
                    "role": "assistant",
                    "original_value": "Hi!",
                },
            ],
            request_only=True,
        )
    ],
)
class IngestView(APIView):
    """Accepts every PyRIT memory JSON shape and writes it through the one ingestion service."""

    permission_classes = [IsAuthenticated, TokenScope, RequiredPermissions]
    required_permissions = {"POST": INGEST_PERMISSIONS}
    parser_classes = [RawJSONParser]

    def post(self, request: Request) -> Response:
        limits = Limits.from_settings()
        declared = request.META.get("CONTENT_LENGTH") or ""
        too_big = _error(
            status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            f"The body exceeds the ingestion limit of {limits.max_body_bytes} bytes "
            f"({limits.max_body_bytes // (1024 * 1024)} MiB); send smaller batches.",
            limit_bytes=limits.max_body_bytes,
        )
        if declared.isdigit() and int(declared) > limits.max_body_bytes:
            return too_big
        # Read straight from the WSGI stream: Django's own body cap (2.5 MB) is for forms.
        body = request._request.read(limits.max_body_bytes + 1)
        if len(body) > limits.max_body_bytes:
            return too_big
        try:
            payload = json.loads(body)
        except RecursionError:
            return _error(400, "The JSON is nested too deeply.")
        except (UnicodeDecodeError, ValueError) as exc:
            return _error(400, f"The body is not valid JSON: {exc}")
        items = count_items(payload)
        if items > limits.max_items:
            return _error(
                status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
                f"The batch holds {items:,} items; the limit is {limits.max_items:,} per request "
                "(INGEST_MAX_ITEMS); send smaller batches.",
                limit_items=limits.max_items,
            )
        check = check_payload(payload, limits)
        if check.refused:
            return Response(_problems_body(check.refused), status=400)
        partial = request.query_params.get("partial", "").lower() in ("1", "true", "yes")
        report = ingest(
            payload=payload, partial=partial, actor=request.user, problems=check.unstorable
        )
        if partial:
            return Response(report.as_dict(with_items=True), status=207)
        if report.errors:
            return Response(report.as_dict(), status=400)
        return Response(report.as_dict(), status=200)


#: What this server's ingestion understands beyond PyRIT's shapes: a client checks these
#: before sending (``redline-push`` refuses to push to a server without them).
INGEST_FEATURES = ("push_source", "media_link")


@extend_schema(
    summary="Ingestion limits",
    description=(
        "The caps `POST /api/v1/ingest/` and `PUT /api/v1/media/` enforce on this server, and "
        "the ingestion features it knows, so a client sizes its batches to fit."
    ),
    responses={200: OpenApiTypes.OBJECT},
)
class IngestLimitsView(APIView):
    """``GET /api/v1/ingest/limits/``: the deployment's ingestion limits, read-only."""

    permission_classes = [IsAuthenticated, TokenScope, RequiredPermissions]
    required_permissions = {"GET": INGEST_PERMISSIONS}

    def get(self, request: Request) -> Response:
        limits = Limits.from_settings()
        token = request.auth
        writes = not isinstance(token, ApiToken) or token.can_write
        return Response(
            {
                "max_body_bytes": limits.max_body_bytes,
                "max_items": limits.max_items,
                "max_text_chars": limits.max_text_chars,
                "max_depth": limits.max_depth,
                "max_key_chars": limits.max_key_chars,
                "max_media_bytes": settings.REDLINE_MEDIA_MAX_BYTES,
                "features": list(INGEST_FEATURES),
                # this token may push (scope ingest; the user's permissions were checked)
                "can_ingest": writes,
            }
        )
