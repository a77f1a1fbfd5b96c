"""The one export shape the read API has no serializer for (PyRIT 1.1.0 ``ScenarioResult``),
and the read serializers of pieces and conversations tuned for long runs.

Everything else in an export comes from ``memory.transfer.api.serializers`` and
``seeds.api.serializers`` unchanged. The scenario's ``attack_results``
(``{collection: [AttackResult]}``) are streamed by the document writer, so they are not a
field here; the ``{collection: [ids]}`` map ingestion keeps in ``extra`` is therefore never
merged back.
"""

from __future__ import annotations

from functools import cached_property
from itertools import groupby
from typing import Any

from rest_framework import serializers

from memory.models import Conversation, MessagePiece, ScenarioResult
from memory.transfer.api.serializers import (
    ConversationDetailSerializer,
    IdentifierField,
    MessagePieceSerializer,
    ScoreSerializer,
    merge_extra,
)


class ScenarioResultSerializer(serializers.ModelSerializer):
    """``ScenarioResult.model_dump(mode="json")`` of PyRIT 1.1.0, without ``attack_results``."""

    scenario_identifier = IdentifierField(source="scenario_identifier_id")
    objective_target_identifier = IdentifierField(source="objective_target_identifier_id")
    objective_scorer_identifier = IdentifierField(source="objective_scorer_identifier_id")

    class Meta:
        model = ScenarioResult
        fields = [
            "id",
            "scenario_identifier",
            "scenario_description",
            "scenario_run_state",
            "labels",
            "creation_time",
            "completion_time",
            "number_tries",
            "display_group_map",
            "error_message",
            "error_type",
            "error_attack_result_ids",
            "metadata",
            "scenario_name",
            "scenario_version",
            "pyrit_version",
            "objective_target_identifier",
            "objective_scorer_identifier",
        ]
        read_only_fields = fields

    def to_representation(self, instance: ScenarioResult) -> dict[str, Any]:
        data = super().to_representation(instance)
        extra = {k: v for k, v in (instance.extra or {}).items() if k != "attack_results"}
        return merge_extra(data, extra)


class ExportPieceSerializer(MessagePieceSerializer):
    """The read API's piece serializer, with one score serializer for every piece, and each
    score under its own (original) piece only.

    DRF builds a serializer's fields each time one is created; the read serializer creates a
    ``ScoreSerializer`` per piece, which took 60 % of an export's time (cProfile, 13,000
    pieces). Exports always preload ``scores`` in the context.
    """

    @cached_property
    def score_serializer(self) -> ScoreSerializer:
        return ScoreSerializer(context=self.context)

    def get_scores(self, piece: MessagePiece) -> list[dict[str, Any]]:
        # Each score once: under the piece it names, the original (its copies show it in
        # PyRIT too, contract §6.4, but a document that repeats it cannot be loaded as is).
        # Profiles that write scores apart (PyRIT 1.x) embed none.
        if piece.id != piece.original_prompt_id or not self.context.get("embed_scores", True):
            return []
        scores = self.context["scores"].get(piece.id, [])
        return [self.score_serializer.to_representation(score) for score in scores]


class ExportConversationSerializer(ConversationDetailSerializer):
    """The read API's whole-conversation serializer, building its child serializers once."""

    @cached_property
    def piece_serializer(self) -> ExportPieceSerializer:
        return ExportPieceSerializer(context=self.context)

    def get_messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        """The context's ``pieces`` (one conversation's, in order) grouped by message."""
        return [
            {"message_pieces": [self.piece_serializer.to_representation(p) for p in group]}
            for _, group in groupby(self.context["pieces"], key=lambda piece: piece.message_id)
        ]
