"""Output serializers of the memory read endpoints, in PyRIT's own shapes.

What comes out can be posted to the ingestion API again unchanged: field names are PyRIT's
(0.12 ``MessagePiece.to_dict()`` / ``Score.to_dict()``, 1.1.0 ``AttackResult`` and
``Conversation`` dumps, contract §9), identifiers are ``ComponentIdentifier.to_dict()`` trees, and
the keys a client sent that PyRIT does not define (kept in ``extra``) are merged back at the
top level. The one addition is ``media`` on pieces (links to stored bytes), which ingestion
ignores.

Related rows are never loaded per row: the view puts what a page needs into the serializer
context (``identifiers``: identifier pk → dict, ``scores``: original_prompt_id → scores,
``pieces``: a conversation's pieces), loaded in a fixed number of queries. Without it (a
serializer used on its own) each serializer loads what it needs itself.

Nor is anything built per row: pieces, scores and conversations serialise through a field plan
made once per serializer (:class:`~redteam.core.api.FieldPlanMixin`), and a piece serializer
makes one score serializer for all its pieces' scores. Building a nested ``ScoreSerializer``
per piece cost half the time of a conversation's JSON (docs/performance.md, "Read API");
``tests/api/test_read_snapshot.py`` holds the output to what the generic path gave.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from django.utils.functional import cached_property
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    MessagePiece,
    ScorableContent,
    Score,
)
from memory.storage.selectors import conversation_pieces, identifier_dicts_for, scores_for_pieces
from memory.transfer.shapes import PIECE_KEYS, SCORE_KEYS
from redteam.core.api import FieldPlanMixin, media_url, merge_extra
from redteam.core.choices import ScoreStatus, TimestampSource


def piece_context(pieces: list[MessagePiece], *extra_pks: int | None) -> dict[str, Any]:
    """The serializer context of ``pieces``: their scores and every identifier they and their
    scores name (``extra_pks``: more identifiers to load with them); 2 + depth queries."""
    scores = scores_for_pieces(pieces=pieces)
    pks = [*extra_pks]
    for piece in pieces:
        pks += [piece.prompt_target_identifier_id, piece.attack_identifier_id]
        pks.append(piece.scorer_identifier_id)
        pks += [link.identifier_id for link in piece.converters.all()]
    pks += [score.scorer_class_identifier_id for found in scores.values() for score in found]
    return {"scores": scores, "identifiers": identifier_dicts_for(pks=pks)}


def identifier_dict(context: dict[str, Any], pk: int | None) -> dict[str, Any] | None:
    """The identifier row ``pk`` as PyRIT's dict, from the page's preload when there is one."""
    if pk is None:
        return None
    loaded = context.get("identifiers")
    if loaded is None or pk not in loaded:
        loaded = identifier_dicts_for(pks=[pk])
    return loaded.get(pk)


@extend_schema_field(OpenApiTypes.OBJECT)
class IdentifierField(serializers.Field):
    """A foreign key to ``ComponentIdentifier``, shown as its ``to_dict()`` tree (or null).

    ``source`` names the ``*_id`` attribute, so reading it never queries.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: int) -> dict[str, Any] | None:
        return identifier_dict(self.context, value)


class ScorableContentSerializer(serializers.ModelSerializer):
    """Loose content a score judged: PyRIT 1.1.0's ``ScorableContentEntries`` row (contract
    §6.3); a score names it in ``scorable.content_id``."""

    class Meta:
        model = ScorableContent
        fields = ["id", "value", "value_sha256", "data_type", "timestamp"]
        read_only_fields = fields

    def to_representation(self, instance: ScorableContent) -> dict[str, Any]:
        return merge_extra(super().to_representation(instance), instance.extra)


class ScoreSerializer(FieldPlanMixin, serializers.ModelSerializer):
    """PyRIT 0.12 ``Score.to_dict()``; 1.1.0 ``status`` / ``scorable`` when not the default."""

    scorer_class_identifier = IdentifierField(source="scorer_class_identifier_id")

    class Meta:
        model = Score
        fields = list(SCORE_KEYS)
        read_only_fields = fields

    def to_representation(self, instance: Score) -> dict[str, Any]:
        data = super().to_representation(instance)
        if data["status"] == ScoreStatus.COMPLETE:
            del data["status"]
        if data["scorable"] is None:
            del data["scorable"]
        if data["scored_expectation"] is None:
            # PyRIT before 1.2 has no such key
            del data["scored_expectation"]
        return merge_extra(data, instance.extra)


class MessagePieceSerializer(FieldPlanMixin, serializers.ModelSerializer):
    """PyRIT 0.12 ``MessagePiece.to_dict()``, scores embedded (contract §9.4).

    Expects ``message__conversation`` joined and ``converters`` prefetched. ``media`` (not
    PyRIT) links the stored bytes of media values and is present only when there are some.
    """

    role = serializers.CharField(source="message.role", read_only=True)
    conversation_id = serializers.CharField(
        source="message.conversation.conversation_id", read_only=True
    )
    sequence = serializers.IntegerField(source="message.sequence", read_only=True)
    converter_identifiers = serializers.SerializerMethodField()
    prompt_target_identifier = IdentifierField(source="prompt_target_identifier_id")
    attack_identifier = IdentifierField(source="attack_identifier_id")
    scorer_identifier = IdentifierField(source="scorer_identifier_id")
    scores = serializers.SerializerMethodField()
    media = serializers.SerializerMethodField()

    class Meta:
        model = MessagePiece
        fields = list(PIECE_KEYS)
        read_only_fields = fields

    @extend_schema_field({"type": "array", "items": {"type": "object"}})
    def get_converter_identifiers(self, piece: MessagePiece) -> list[dict[str, Any]]:
        return [
            identifier_dict(self.context, link.identifier_id) for link in piece.converters.all()
        ]

    @extend_schema_field(ScoreSerializer(many=True))
    def get_scores(self, piece: MessagePiece) -> list[dict[str, Any]]:
        loaded = self.context.get("scores")
        if loaded is None:
            loaded = scores_for_pieces(pieces=[piece])
        scores = loaded.get(piece.original_prompt_id, [])
        return [self._score_serializer.to_representation(score) for score in scores]

    @cached_property
    def _score_serializer(self) -> ScoreSerializer:
        """One score serializer for the scores of every piece this one serialises."""
        return ScoreSerializer(context=self.context)

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {
                "original": {"type": "string", "nullable": True},
                "converted": {"type": "string", "nullable": True},
            },
        }
    )
    def get_media(self, piece: MessagePiece) -> dict[str, str | None] | None:
        blobs = {"original": piece.original_media, "converted": piece.converted_media}
        if all(blob is None for blob in blobs.values()):
            return None
        request = self.context.get("request")
        links = {
            side: media_url(request, blob.sha256) if blob is not None else None
            for side, blob in blobs.items()
        }
        return links if any(links.values()) else None

    def to_representation(self, instance: MessagePiece) -> dict[str, Any]:
        data = super().to_representation(instance)
        if data["media"] is None:
            del data["media"]
        return merge_extra(data, instance.extra)


class ConversationSerializer(serializers.ModelSerializer):
    """A conversation in a list: its PyRIT 1.1.0 fields plus Redline's summary columns."""

    target_identifier = IdentifierField(source="target_identifier_id")
    message_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Conversation
        fields = [
            "conversation_id",
            "target_identifier",
            "retries",
            "labels",
            "targeted_harm_categories",
            "started_at",
            "message_count",
        ]
        read_only_fields = fields

    def to_representation(self, instance: Conversation) -> dict[str, Any]:
        return merge_extra(super().to_representation(instance), instance.extra)


class _ConversationEntitySerializer(FieldPlanMixin, serializers.ModelSerializer):
    """PyRIT 1.1.0 ``Conversation`` (contract §9.7), and the PyRIT version that wrote it when
    Redline knows it (not a key of PyRIT's own: kept so a round trip loses nothing)."""

    target_identifier = IdentifierField(source="target_identifier_id")

    class Meta:
        model = Conversation
        fields = ["conversation_id", "target_identifier", "retries"]
        read_only_fields = fields

    def to_representation(self, instance: Conversation) -> dict[str, Any]:
        data = super().to_representation(instance)
        if instance.pyrit_version:
            data["pyrit_version"] = instance.pyrit_version
        return merge_extra(data, instance.extra)


class _MessageSerializer(serializers.Serializer):
    """Schema only: one message of a conversation detail."""

    message_pieces = MessagePieceSerializer(many=True, read_only=True)


class ConversationDetailSerializer(serializers.Serializer):
    """A whole conversation: ``{"conversation": …, "messages": [{"message_pieces": […]}]}``.

    Exactly the shape ingestion accepts as an item of ``conversations`` (contract §9.6, §9.7):
    messages in ``sequence`` order, pieces in their stored order, scores embedded. Labels, harm
    categories and timestamps are on every piece; the list endpoint has the summary columns.
    The endpoint sends the same body built from plain rows
    (:func:`~memory.transfer.api.conversation_json.conversation_json`); this serializer is
    its schema, its reference in the tests, and the exporter's base.
    """

    conversation = serializers.SerializerMethodField()
    messages = serializers.SerializerMethodField()

    @extend_schema_field(_ConversationEntitySerializer)
    def get_conversation(self, conversation: Conversation) -> dict[str, Any]:
        return _ConversationEntitySerializer(conversation, context=self.context).data

    @extend_schema_field(_MessageSerializer(many=True))
    def get_messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        pieces = self.context.get("pieces")
        if pieces is None:
            pieces = conversation_pieces(conversation=conversation)
        serializer = MessagePieceSerializer(context=self.context)
        return [
            {"message_pieces": [serializer.to_representation(piece) for piece in group]}
            for _, group in groupby(pieces, key=lambda piece: piece.message_id)
        ]


class AttackResultSerializer(serializers.ModelSerializer):
    """PyRIT 1.1.0 ``AttackResult.model_dump(mode="json")`` (contract §9.9).

    ``last_response``, ``last_score`` (PyRIT 1.2's automated score) and PyRIT 1.2's
    ``human_score`` are given by id (``last_response_id``, ``last_score_id``,
    ``human_score_id``), which ingestion accepts as well as the embedded objects; the full
    piece and score are one request away. ``attack_identifier`` is the attack strategy for
    every PyRIT version. Expects ``conversation`` joined and ``related_conversations``
    prefetched with their conversation.
    """

    attack_result_id = serializers.UUIDField(source="id", read_only=True)
    conversation_id = serializers.CharField(source="conversation.conversation_id", read_only=True)
    attack_identifier = IdentifierField(source="attack_identifier_id")
    atomic_attack_identifier = IdentifierField(source="atomic_attack_identifier_id")
    last_response_id = serializers.UUIDField(read_only=True)
    last_score_id = serializers.UUIDField(read_only=True)
    human_score_id = serializers.UUIDField(read_only=True)
    related_conversations = serializers.SerializerMethodField()
    attribution_parent_id = serializers.UUIDField(read_only=True)

    class Meta:
        model = AttackResult
        fields = [
            "attack_result_id",
            "conversation_id",
            "objective",
            "objective_sha256",
            "attack_identifier",
            "atomic_attack_identifier",
            "last_response_id",
            "last_score_id",
            "human_score_id",
            "executed_turns",
            "execution_time_ms",
            "outcome",
            "outcome_reason",
            "timestamp",
            "related_conversations",
            "metadata",
            "labels",
            "targeted_harm_categories",
            "error_message",
            "error_type",
            "error_traceback",
            "retry_events",
            "total_retries",
            "attribution_parent_id",
            "attribution_data",
            "operator",
            "operation",
            "pyrit_version",
        ]
        read_only_fields = fields

    @extend_schema_field(
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "conversation_id": {"type": "string"},
                    "conversation_type": {"type": "string"},
                    "description": {"type": "string", "nullable": True},
                },
            },
        }
    )
    def get_related_conversations(self, attack: AttackResult) -> list[dict[str, Any]]:
        """Sorted by (conversation_id, type, description), as PyRIT dumps its set."""
        references = [
            {
                "conversation_id": ref.conversation.conversation_id,
                "conversation_type": ref.conversation_type,
                "description": ref.description,
            }
            for ref in attack.related_conversations.all()
        ]
        return sorted(
            references,
            key=lambda r: (r["conversation_id"], r["conversation_type"], r["description"] or ""),
        )

    def to_representation(self, instance: AttackResult) -> dict[str, Any]:
        data = super().to_representation(instance)
        if instance.timestamp_source != TimestampSource.PYRIT:
            # Not PyRIT's key: says the time was derived (a 0.12 result carries none).
            data["timestamp_source"] = instance.timestamp_source
        return merge_extra(data, instance.extra)


class ComponentIdentifierSerializer(serializers.ModelSerializer):
    """PyRIT's ``ComponentIdentifier.to_dict()`` (children as whole trees) plus ``content_hash``.

    ``content_hash`` is our hash of the stored content; it differs from ``hash`` when PyRIT's
    own hash covered content that was truncated or not stored (see docs/identifiers.md).
    Params appear at the top level, as in PyRIT's flat shape.
    """

    children = serializers.JSONField(read_only=True)

    class Meta:
        model = ComponentIdentifier
        fields = [
            "class_name",
            "class_module",
            "hash",
            "pyrit_version",
            "eval_hash",
            "children",
            "content_hash",
        ]
        read_only_fields = fields

    def to_representation(self, instance: ComponentIdentifier) -> dict[str, Any]:
        data = dict(identifier_dict(self.context, instance.pk) or {})
        data["content_hash"] = instance.content_hash
        return data
