"""The keys of PyRIT's JSON shapes, once: what the read API writes (in PyRIT's order) and what
the normaliser reads (those keys plus the legacy aliases it accepts; every other key is kept
in ``extra``)."""

from __future__ import annotations

#: PyRIT 0.12 ``MessagePiece.to_dict()``, in order, with the embedded ``scores`` (contract
#: §9.4); ``media`` is Redline's link to stored bytes.
PIECE_KEYS = (
    "id",
    "role",
    "conversation_id",
    "sequence",
    "timestamp",
    "labels",
    "targeted_harm_categories",
    "prompt_metadata",
    "converter_identifiers",
    "prompt_target_identifier",
    "attack_identifier",
    "scorer_identifier",
    "original_value_data_type",
    "original_value",
    "original_value_sha256",
    "converted_value_data_type",
    "converted_value",
    "converted_value_sha256",
    "response_error",
    "originator",
    "original_prompt_id",
    "pyrit_version",
    "scores",
    "media",
)
#: Older names of piece keys (contract §9.2).
PIECE_ALIASES = ("orchestrator_identifier",)

#: PyRIT 0.12 ``Score.to_dict()`` in order, with 1.1.0's ``status`` and ``scorable`` (contract
#: §6, §9.8) and 1.2's ``scored_expectation``.
SCORE_KEYS = (
    "id",
    "score_value",
    "score_value_description",
    "score_type",
    "score_category",
    "score_rationale",
    "score_metadata",
    "scorer_class_identifier",
    "message_piece_id",
    "timestamp",
    "objective",
    "status",
    "scorable",
    "pyrit_version",
    "scored_expectation",
)
#: Older names of score keys: 0.9's piece id and 0.12's ``task`` (contract §9.2).
SCORE_ALIASES = ("prompt_request_response_id", "task")
