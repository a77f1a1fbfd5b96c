"""Typed, validated-shape inputs of the memory services (no Django model imports).

Every write path (API, importers, demo data, admin) turns what it received into these specs
and hands them to ``memory.storage.services``. Field names and defaults are PyRIT's
(contract §2, §6, §7).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from redteam.core.choices import (
    AttackOutcome,
    ConversationType,
    Originator,
    PromptDataType,
    PromptResponseError,
    ScenarioRunState,
    ScoreStatus,
)
from redteam.core.identifiers import ComponentIdentifier


@dataclass(kw_only=True)
class PieceSpec:
    """One message piece (contract §2.1); its role and sequence belong to the message."""

    original_value: str
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    original_value_data_type: str = PromptDataType.TEXT
    converted_value: str | None = None
    converted_value_data_type: str | None = None
    original_value_sha256: str | None = None
    converted_value_sha256: str | None = None
    timestamp: datetime | None = None
    labels: dict[str, Any] = field(default_factory=dict)
    prompt_metadata: dict[str, Any] = field(default_factory=dict)
    targeted_harm_categories: list[str] = field(default_factory=list)
    converter_identifiers: list[ComponentIdentifier] = field(default_factory=list)
    prompt_target_identifier: ComponentIdentifier | None = None
    attack_identifier: ComponentIdentifier | None = None
    scorer_identifier: ComponentIdentifier | None = None
    response_error: str = PromptResponseError.NONE
    originator: str = Originator.UNDEFINED
    original_prompt_id: uuid.UUID | None = None
    pyrit_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # Bytes of media values, when the caller has them (demo data, bundle imports).
    original_media: bytes | None = None
    converted_media: bytes | None = None


@dataclass(kw_only=True)
class ScoreSpec:
    """One score (contract §6.1); ``message_piece_id`` is the scored piece's id (may dangle)."""

    score_type: str
    score_value: str | None
    scorer_class_identifier: ComponentIdentifier
    message_piece_id: uuid.UUID | None
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    score_value_description: str | None = None
    score_category: list[str] | None = None
    score_rationale: str | None = None
    score_metadata: dict[str, Any] = field(default_factory=dict)
    timestamp: datetime | None = None
    objective: str | None = None
    #: PyRIT 1.2: the whole expectation the score was judged against, as PyRIT gave it.
    scored_expectation: dict[str, Any] | None = None
    status: str = ScoreStatus.COMPLETE
    scorable: dict[str, Any] | None = None
    pyrit_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ConversationReferenceSpec:
    """A related conversation of an attack (contract §7)."""

    conversation_id: str
    conversation_type: str = ConversationType.ADVERSARIAL
    description: str | None = None


@dataclass(kw_only=True)
class AttackResultSpec:
    """One attack result (contract §7); identifiers are PyRIT identifiers, not rows."""

    conversation_id: str
    objective: str
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    attack_identifier: ComponentIdentifier | None = None
    atomic_attack_identifier: ComponentIdentifier | None = None
    objective_sha256: str | None = None
    last_response_id: uuid.UUID | None = None
    #: The automated score (PyRIT 1.2 ``automated_score``).
    last_score_id: uuid.UUID | None = None
    #: PyRIT 1.2's human score of the result.
    human_score_id: uuid.UUID | None = None
    executed_turns: int = 0
    execution_time_ms: int = 0
    outcome: str = AttackOutcome.UNDETERMINED
    outcome_reason: str | None = None
    related_conversations: list[ConversationReferenceSpec] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    timestamp: datetime | None = None
    #: Where ``timestamp`` came from when a Redline export says (``TimestampSource``); None:
    #: PyRIT's own when given, derived on storing when not.
    timestamp_source: str | None = None
    labels: dict[str, Any] = field(default_factory=dict)
    targeted_harm_categories: list[str] = field(default_factory=list)
    error_message: str | None = None
    error_type: str | None = None
    error_traceback: str | None = None
    retry_events: list[dict[str, Any]] = field(default_factory=list)
    total_retries: int = 0
    attribution_parent_id: uuid.UUID | None = None
    attribution_data: dict[str, Any] | None = None
    #: PyRIT 1.2 attribution (``operator`` / ``operation`` labels before 1.2).
    operator: str | None = None
    operation: str | None = None
    pyrit_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class ScenarioResultSpec:
    """One scenario result (contract §7, 1.x ``ScenarioResult``); identifiers are PyRIT ones."""

    scenario_name: str
    scenario_identifier: ComponentIdentifier
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    scenario_description: str | None = None
    scenario_version: int = 1
    objective_target_identifier: ComponentIdentifier | None = None
    objective_scorer_identifier: ComponentIdentifier | None = None
    scenario_run_state: str = ScenarioRunState.CREATED
    labels: dict[str, Any] = field(default_factory=dict)
    number_tries: int = 0
    creation_time: datetime | None = None
    completion_time: datetime | None = None
    display_group_map: dict[str, Any] = field(default_factory=dict)
    error_message: str | None = None
    error_type: str | None = None
    error_attack_result_ids: list[Any] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    pyrit_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PushSourceSpec:
    """Where a pushed batch came from, as ``redline-push`` names it: its host name and the path
    of the PyRIT database there (a batch's top-level ``push_source``)."""

    host: str
    database: str
