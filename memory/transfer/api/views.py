"""Read endpoints of PyRIT memory: small read-only viewsets over the shared filtersets.

Authentication and permissions are the project defaults (view permission of the model), so
every viewset names its ``queryset``. The big tables (conversations, pieces, scores, attack
results) use cursor pagination; the others the default limit/offset.

A list costs the same number of queries whatever its page size: rows come with their
foreign keys joined and their child rows prefetched, and identifiers and scores for the
whole page are loaded by :meth:`PagePreloadMixin.preload` (one query per identifier tree
level) and handed to the serializers in their context.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Prefetch, Subquery
from django.db.models.functions import Coalesce
from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import pagination, renderers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    Message,
    MessagePiece,
    RelatedConversation,
    ScorableContent,
    Score,
)
from memory.storage import filters
from memory.storage.attack_table import attack_table
from memory.storage.selectors import (
    identifier_dicts_for,
    identifier_dicts_of,
    piece_converters_prefetch,
)
from memory.transfer.api import serializers
from memory.transfer.api.conversation_json import conversation_json
from memory.transfer.api.serializers import piece_context
from redteam.core.api import UUID_PATTERN
from redteam.core.downloads import file_stamp, streaming_download
from redteam.core.pagination import MAX_PAGE_SIZE

#: A piece, score or attack result id in a URL.


class CursorPagination(pagination.CursorPagination):
    """Cursor pages for tables with millions of rows: no count, stable under inserts.

    ``limit`` sets the page size (default ``PAGE_SIZE``, at most 1000), as on the
    limit/offset endpoints.
    """

    page_size_query_param = "limit"
    max_page_size = MAX_PAGE_SIZE


class NewestFirstPagination(CursorPagination):
    """Newest ``timestamp`` first; the id orders rows with the same timestamp."""

    ordering = ("-timestamp", "-id")


class ConversationPagination(CursorPagination):
    """Most recently stored first (``started_at`` can be null, so it cannot carry a cursor)."""

    ordering = ("-id",)


class KeysFirstMixin:
    """Cursor pages read in two steps: the page's keys, then its rows by primary key.

    The keys query touches only what the filters need, so the ordering's index hands over the
    page directly. In one query with the rows' joins, SQLite's planner may instead drive the
    join from the small table (conversations), join every row and sort them all before
    cutting the page: 0.9–3 s for a page of pieces at 1,000,000 pieces, whatever its size
    (docs/performance.md, "Read API"). Rows come back in the keys' order; one more query.
    """

    def paginate_queryset(self, queryset: Any) -> list[Any] | None:
        ordering = [key.lstrip("-") for key in self.paginator.ordering]
        keys = super().paginate_queryset(queryset.prefetch_related(None).values("pk", *ordering))
        if keys is None:
            return None
        # The rows without the filters again: the keys already passed them.
        found = self.get_queryset().in_bulk([key["pk"] for key in keys])
        return [found[key["pk"]] for key in keys if key["pk"] in found]


class PagePreloadMixin:
    """Load what the serializers of a page need once, before serializing its rows."""

    def preload(self, rows: list[Any]) -> dict[str, Any]:
        """Context entries for ``rows`` (override); must not query per row."""
        return {}

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        if args and args[0] is not None:
            many = kwargs.get("many", False)
            rows = list(args[0]) if many else [args[0]]
            kwargs["context"] = {**self.get_serializer_context(), **self.preload(rows)}
            args = (rows, *args[1:]) if many else args
        return super().get_serializer(*args, **kwargs)


class ConversationViewSet(PagePreloadMixin, viewsets.ReadOnlyModelViewSet):
    """Conversations by PyRIT ``conversation_id``; the detail is the whole conversation."""

    queryset = Conversation.objects.annotate(
        # A subquery, not Count(): label and harm filters join other many-valued tables.
        message_count=Coalesce(
            Subquery(
                Message.objects.filter(conversation=OuterRef("pk"))
                .order_by()
                .values("conversation")
                .annotate(n=Count("pk"))
                .values("n"),
                output_field=IntegerField(),
            ),
            0,
        )
    )
    serializer_class = serializers.ConversationSerializer
    filterset_class = filters.ConversationFilter
    pagination_class = ConversationPagination
    lookup_field = "conversation_id"
    lookup_value_regex = "[^/]+"

    def get_serializer_class(self) -> type:
        if self.action == "retrieve":
            return serializers.ConversationDetailSerializer
        return serializers.ConversationSerializer

    def preload(self, rows: list[Conversation]) -> dict[str, Any]:
        return {"identifiers": identifier_dicts_for(pks=[row.target_identifier_id for row in rows])}

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The whole conversation, built from its rows (``conversation_json``: the detail
        serializer's body at half its cost; the serializer stays its schema)."""
        return Response(conversation_json(conversation=self.get_object(), request=request))


class MessagePieceViewSet(KeysFirstMixin, PagePreloadMixin, viewsets.ReadOnlyModelViewSet):
    """Message pieces by id, newest first, with their scores."""

    queryset = MessagePiece.objects.select_related(
        "message__conversation", "original_media", "converted_media"
    ).prefetch_related(piece_converters_prefetch())
    serializer_class = serializers.MessagePieceSerializer
    filterset_class = filters.MessagePieceFilter
    pagination_class = NewestFirstPagination
    lookup_value_regex = UUID_PATTERN

    def preload(self, rows: list[MessagePiece]) -> dict[str, Any]:
        return piece_context(rows)


class ScoreViewSet(PagePreloadMixin, viewsets.ReadOnlyModelViewSet):
    """Scores by id, newest first."""

    queryset = Score.objects.all()
    serializer_class = serializers.ScoreSerializer
    filterset_class = filters.ScoreFilter
    pagination_class = NewestFirstPagination
    lookup_value_regex = UUID_PATTERN

    def preload(self, rows: list[Score]) -> dict[str, Any]:
        pks = [row.scorer_class_identifier_id for row in rows]
        return {"identifiers": identifier_dicts_for(pks=pks)}


class ScorableContentViewSet(viewsets.ReadOnlyModelViewSet):
    """Loose content scored outside any conversation, by id, newest first."""

    queryset = ScorableContent.objects.all()
    serializer_class = serializers.ScorableContentSerializer
    pagination_class = NewestFirstPagination
    lookup_value_regex = UUID_PATTERN


class CSVRenderer(renderers.JSONRenderer):
    """``?format=csv``: the list streams its own CSV body; errors still come as JSON."""

    media_type = "text/csv"
    format = "csv"


class AttackResultViewSet(PagePreloadMixin, viewsets.ReadOnlyModelViewSet):
    """Attack results by ``attack_result_id``, newest first; ``?format=csv`` streams every
    matching attack as one table instead of a page."""

    queryset = AttackResult.objects.select_related("conversation").prefetch_related(
        # Related conversations with their PyRIT ids: one query per page.
        Prefetch(
            "related_conversations",
            queryset=RelatedConversation.objects.select_related("conversation"),
        )
    )
    serializer_class = serializers.AttackResultSerializer
    filterset_class = filters.AttackResultFilter
    pagination_class = NewestFirstPagination
    lookup_value_regex = UUID_PATTERN

    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]

    def preload(self, rows: list[AttackResult]) -> dict[str, Any]:
        pks = [row.attack_identifier_id for row in rows]
        pks += [row.atomic_attack_identifier_id for row in rows]
        return {"identifiers": identifier_dicts_for(pks=pks)}

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                OpenApiTypes.STR,
                enum=["json", "csv"],
                description=(
                    "`csv`: every matching attack (not a page) as a streamed table, one row "
                    "per attack (docs/api.md)."
                ),
            )
        ],
        responses={
            200: serializers.AttackResultSerializer(many=True),
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The table."),
        },
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response | StreamingHttpResponse:
        if request.accepted_renderer.format == "csv":
            queryset = self.filter_queryset(self.get_queryset()).order_by("-timestamp", "-id")
            table = attack_table(
                queryset=queryset,
                fmt="csv",
                # the review pages' URL name: the table links each attack to its page
                link=lambda pk: request.build_absolute_uri(reverse("attack-detail", args=[pk])),
            )
            return streaming_download(
                table.chunks,
                content_type=table.content_type,
                filename=f"redline-attacks-{file_stamp()}.csv",
            )
        return super().list(request, *args, **kwargs)


class ComponentIdentifierViewSet(PagePreloadMixin, viewsets.ReadOnlyModelViewSet):
    """Component identifiers by ``hash``, with their whole child trees."""

    queryset = ComponentIdentifier.objects.order_by("class_name", "hash")
    serializer_class = serializers.ComponentIdentifierSerializer
    filterset_class = filters.ComponentIdentifierFilter
    lookup_field = "hash"
    lookup_value_regex = "[^/]+"

    def preload(self, rows: list[ComponentIdentifier]) -> dict[str, Any]:
        return {"identifiers": identifier_dicts_of(rows=rows)}
