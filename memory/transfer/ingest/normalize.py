"""Normalise PyRIT memory JSON of any version into the typed specs of ``memory.storage.specs``.

Pure functions: no database access and no queries. Accepted shapes are those of contract §9: 0.9
``PromptRequestPiece.to_dict``, 0.12 ``MessagePiece.to_dict`` (scores embedded), PyRIT 1.1.0
``model_dump(mode="json")`` and the two fixture export layouts. The §9.2 key aliases are
applied here, so the write services only ever see the current names.

Nothing raises on bad input: every function returns what it could build plus a list of
:class:`~redteam.core.errors.Problem` whose ``path`` names the location in the input (e.g.
``conversations[2].messages[0].message_pieces[1].role``). Keys we do not know are kept in the
spec's ``extra`` dict, so nothing is lost.

Imports only model-free modules (``redteam.core.errors``, ``redteam.core.scoring``,
``memory.storage.specs``, ``redteam.core.identifiers``), so it runs without a database.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from memory.storage.batch import (
    NormalizedBatch,
    NormalizedConversation,
    NormalizedMessage,
    NormalizedPiece,
    PyritRecordSpec,
    ScorableContentSpec,
)
from memory.storage.specs import (
    AttackResultSpec,
    ConversationReferenceSpec,
    PieceSpec,
    PushSourceSpec,
    ScoreSpec,
)
from memory.transfer.ingest.normalize_seeds import (
    normalize_scenario_result,
    normalize_seed,
    normalize_seed_dataset,
    normalize_seed_group,
)
from memory.transfer.ingest.readers import Reader, not_object
from memory.transfer.shapes import PIECE_ALIASES, PIECE_KEYS, SCORE_ALIASES, SCORE_KEYS
from redteam.core.choices import (
    AttackOutcome,
    ChatMessageRole,
    ConversationRetryReason,
    ConversationType,
    Originator,
    PromptDataType,
    PromptResponseError,
    ScorableType,
    ScoreStatus,
    ScoreType,
    TimestampSource,
)
from redteam.core.constraints import BIGINT_MAX
from redteam.core.errors import Problem
from redteam.core.lengths import HARM_CATEGORIES_MAX_ITEMS
from redteam.core.scoring import score_numeric_value
from seeds.specs import SeedSpec

__all__ = [
    "normalize_attack_result",
    "normalize_batch",
    "normalize_conversation",
    "normalize_piece",
    "normalize_pyrit_record",
    "normalize_scorable_content",
    "normalize_score",
]


#: The keys the piece and score readers read; every other key is kept in ``extra``.
_PIECE_KEYS = frozenset({*PIECE_KEYS, *PIECE_ALIASES})
_SCORE_KEYS = frozenset({*SCORE_KEYS, *SCORE_ALIASES})
# Ids of loose content that arrives without one (``ContentScorable`` dumps).
_CONTENT_NAMESPACE = uuid.UUID("2d9c1f64-7a3e-4b8e-9c1d-5e0f3a6b7c82")


def normalize_piece(
    data: Any, path: str, *, default_conversation_id: str | None = None
) -> tuple[NormalizedPiece | None, list[Problem]]:
    """Normalise one piece dict of any PyRIT version (contract §2, §9.4 – §9.6).

    Applies the §9.2 aliases (``orchestrator_identifier`` → ``attack_identifier``, originator
    ``orchestrator`` → ``attack``), parses ids and timestamps, validates the enumerations and
    reads embedded 0.x ``scores``. ``default_conversation_id`` fills a missing conversation id
    (pieces listed under a 1.1.0 conversation). Returns ``(None, problems)`` when a required
    field (``role``, ``conversation_id``, ``sequence``, ``original_value``) is unusable.
    """
    if type(data) is not dict and not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems, known=_PIECE_KEYS)

    role = r.choice("role", ChatMessageRole, r.raw("role"), default=None)
    if data.get("role") is None:
        r.problem("role", "is required")
    conversation_id = r.text("conversation_id", default=default_conversation_id)
    if conversation_id is None or not conversation_id.strip():
        r.problem("conversation_id", "must not be blank")
    elif default_conversation_id is not None and conversation_id != default_conversation_id:
        r.problem(
            "conversation_id",
            f"{conversation_id!r} differs from its conversation {default_conversation_id!r}",
        )
    sequence = r.integer("sequence", default=None)
    if data.get("sequence") is None:
        r.problem("sequence", "is required")
    original_value = r.text("original_value", required=True)
    r.raw("media")  # Redline's read output (download links); not client data

    attack_key, attack_raw = r.first("attack_identifier", "orchestrator_identifier")
    originator = r.raw("originator")
    if originator == "orchestrator":
        originator = Originator.ATTACK

    spec_kwargs: dict[str, Any] = {}
    piece_id = r.uuid("id")
    if piece_id is not None:
        spec_kwargs["id"] = piece_id
    spec = PieceSpec(
        original_value=original_value or "",
        original_value_data_type=r.choice(
            "original_value_data_type",
            PromptDataType,
            r.raw("original_value_data_type"),
            default=PromptDataType.TEXT,
        ),
        converted_value=r.text("converted_value"),
        converted_value_data_type=r.choice(
            "converted_value_data_type",
            PromptDataType,
            r.raw("converted_value_data_type"),
            default=None,
        ),
        original_value_sha256=r.text("original_value_sha256"),
        converted_value_sha256=r.text("converted_value_sha256"),
        timestamp=r.timestamp("timestamp"),
        labels=r.labels("labels"),
        prompt_metadata=r.mapping("prompt_metadata"),
        targeted_harm_categories=r.strings(
            "targeted_harm_categories", max_items=HARM_CATEGORIES_MAX_ITEMS
        ),
        converter_identifiers=r.identifiers("converter_identifiers"),
        prompt_target_identifier=r.identifier("prompt_target_identifier"),
        attack_identifier=r.identifier(attack_key, attack_raw),
        scorer_identifier=r.identifier("scorer_identifier"),
        response_error=r.choice(
            "response_error",
            PromptResponseError,
            r.raw("response_error"),
            default=PromptResponseError.NONE,
        ),
        originator=r.choice("originator", Originator, originator, default=Originator.UNDEFINED),
        original_prompt_id=r.uuid("original_prompt_id"),
        pyrit_version=r.text("pyrit_version", default="") or "",
        **spec_kwargs,
    )
    # Both legacy and current attack key present with different values: keep the other one.
    other = "orchestrator_identifier" if attack_key == "attack_identifier" else None
    if other and data.get(other) not in (None, {}) and data.get(other) != attack_raw:
        r.keep(other)

    scores: list[ScoreSpec] = []
    raw_scores = r.raw("scores")
    if raw_scores is not None and not isinstance(raw_scores, list):
        r.problem("scores", "must be a list")
    for index, raw_score in enumerate(raw_scores or []):
        score, score_problems = normalize_score(raw_score, f"{r.at('scores')}[{index}]")
        problems.extend(score_problems)
        if score is not None:
            scores.append(score)

    spec.extra = r.extra()
    if role is None or conversation_id is None or sequence is None or original_value is None:
        return None, problems
    return (
        NormalizedPiece(
            conversation_id=conversation_id,
            sequence=sequence,
            role=role,
            spec=spec,
            scores=scores,
            path=path,
        ),
        problems,
    )


# --- scores -----------------------------------------------------------------------------------


def normalize_score(data: Any, path: str) -> tuple[ScoreSpec | None, list[Problem]]:
    """Normalise one score dict (contract §6, §9.8) of 0.9, 0.12 or 1.1.0.

    Aliases ``prompt_request_response_id`` → ``message_piece_id`` and ``task`` → ``objective``
    (the current name wins when both are set); the string ``"None"`` as piece id means no
    piece; a plain-string 0.9 ``score_category`` becomes a one-element list; ``score_metadata``
    null becomes ``{}``; ``status`` defaults to ``complete``. Values are checked by §6.2.
    Returns ``(None, problems)`` without a usable ``score_type`` or ``scorer_class_identifier``.
    """
    if type(data) is not dict and not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems, known=_SCORE_KEYS)

    score_type = r.choice("score_type", ScoreType, r.raw("score_type"), default=None)
    if data.get("score_type") is None:
        r.problem("score_type", "is required")
    status = r.choice("status", ScoreStatus, r.raw("status"), default=ScoreStatus.COMPLETE)
    value = r.raw("score_value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if value is not None and not isinstance(value, str):
        r.problem("score_value", f"must be a string, not {type(value).__name__}")
        value = None
    elif (status == ScoreStatus.UNDETERMINED) != (value is None):
        r.problem("score_value", "must be null exactly when the status is 'undetermined'")
    elif score_type is not None:
        try:
            score_numeric_value(score_type, value)
        except ValueError as exc:
            r.problem("score_value", str(exc))

    scorer = r.identifier("scorer_class_identifier")
    if scorer is None and not any(p.path == r.at("scorer_class_identifier") for p in problems):
        r.problem("scorer_class_identifier", "is required")

    piece_key, piece_raw = r.first("message_piece_id", "prompt_request_response_id")
    piece_id = None if piece_raw == "None" else r.uuid(piece_key, piece_raw)
    _, objective = r.first("objective", "task")
    if objective is not None and not isinstance(objective, str):
        r.problem("objective", "must be a string")
        objective = None
    # PyRIT 1.2 keeps the whole expectation; its objective is what ``objective`` meant before
    expectation = r.raw("scored_expectation")
    if expectation is not None and not isinstance(expectation, Mapping):
        r.problem("scored_expectation", "must be an object")
        expectation = None
    if expectation is not None:
        expectation = dict(expectation)
        expected_objective = expectation.get("objective")
        if objective is None and isinstance(expected_objective, str):
            objective = expected_objective

    category = r.raw("score_category")
    if isinstance(category, str):
        category = [category]
    elif category is not None:
        if not isinstance(category, list) or not all(isinstance(x, str) for x in category):
            r.problem("score_category", "must be a string or a list of strings")
            category = None
        else:
            category = list(category)

    scorable = r.raw("scorable")
    if scorable is not None:
        if not isinstance(scorable, Mapping):
            r.problem("scorable", "must be an object")
            scorable = None
        else:
            scorable = dict(scorable)
            sub = Reader(scorable, r.at("scorable"), problems)
            sub.choice("scorable_type", ScorableType, scorable.get("scorable_type"), default=None)

    kwargs: dict[str, Any] = {}
    score_id = r.uuid("id")
    if score_id is not None:
        kwargs["id"] = score_id
    spec_ok = score_type is not None and scorer is not None
    spec = ScoreSpec(
        score_type=score_type or "",
        score_value=value,
        scorer_class_identifier=scorer,  # type: ignore[arg-type]  # None only if not returned
        message_piece_id=piece_id,
        score_value_description=r.text("score_value_description"),
        score_category=category,
        score_rationale=r.text("score_rationale"),
        score_metadata=r.mapping("score_metadata"),
        timestamp=r.timestamp("timestamp"),
        objective=objective,
        scored_expectation=expectation,
        status=status,
        scorable=scorable,
        pyrit_version=r.text("pyrit_version", default="") or "",
        **kwargs,
    )
    # the current-name key wins; a differing legacy value is kept, not dropped
    for current, legacy in (
        ("message_piece_id", "prompt_request_response_id"),
        ("objective", "task"),
    ):
        if data.get(current) is not None and data.get(legacy) not in (None, data.get(current)):
            r.keep(legacy)
    spec.extra = r.extra()
    return (spec if spec_ok else None), problems


# --- attack results ---------------------------------------------------------------------------


def _ref_id(value: Any, key: str, r: Reader) -> uuid.UUID | None:
    """The id of an embedded object (1.1.0 dumps the whole piece/score) or an id string."""
    if isinstance(value, Mapping):
        return r.uuid(f"{key}.id", value.get("id"), required=True)
    return r.uuid(key, value)


ATTACK_RESULT_NAMESPACE = uuid.UUID("2b7f0c55-8a43-4f0e-a1a4-3c9f5d6e7b21")


def normalize_attack_result(data: Any, path: str) -> tuple[AttackResultSpec | None, list[Problem]]:
    """Normalise one attack result (contract §7, §9.9) of 0.12, 1.1.0 or 1.2.

    PyRIT 1.2: ``automated_score`` (the old ``last_score``) and ``human_score`` (each the full
    object or its id, ``*_id``), ``operator`` and ``operation``.

    ``attack_result_id`` (or ``id``) becomes the id (without either, a UUID5 of conversation
    id and objective, so re-sending updates); ``last_response`` / ``last_score`` may be
    the full object or its id; 0.12's ``atomic_attack_strategy_identifier`` is read as
    ``attack_identifier``. Related conversations are deduplicated by conversation id (PyRIT
    keeps them in a set). Returns ``(None, problems)`` without conversation id or objective.
    """
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)

    conversation_id = r.nonblank("conversation_id")
    objective = r.text("objective", required=True)
    id_key, id_raw = r.first("attack_result_id", "id")
    attack_key, attack_raw = r.first("attack_identifier", "atomic_attack_strategy_identifier")

    outcome = r.raw("outcome")
    if isinstance(outcome, str):
        outcome = outcome.lower()
    _, last_response = r.first("last_response", "last_response_id")
    # PyRIT 1.2 split the score into the automated one (the old last score) and a human one
    _, last_score = r.first("last_score", "last_score_id", "automated_score", "automated_score_id")
    _, human_score = r.first("human_score", "human_score_id")

    related: list[ConversationReferenceSpec] = []
    raw_related = r.raw("related_conversations")
    if raw_related is not None and not isinstance(raw_related, list):
        r.problem("related_conversations", "must be a list")
        raw_related = []
    seen: set[str] = set()
    for index, item in enumerate(raw_related or []):
        item_path = f"{r.at('related_conversations')}[{index}]"
        if not isinstance(item, Mapping):
            problems.extend(not_object(item, item_path))
            continue
        sub = Reader(item, item_path, problems)
        ref_id = sub.text("conversation_id", required=True)
        ref_type = sub.choice(
            "conversation_type",
            ConversationType,
            sub.raw("conversation_type"),
            default=ConversationType.ADVERSARIAL,
        )
        description = sub.text("description")
        for key in sub.extra():
            sub.problem(key, "unknown key in a conversation reference")
        if ref_id and ref_id not in seen:
            seen.add(ref_id)
            related.append(
                ConversationReferenceSpec(
                    conversation_id=ref_id, conversation_type=ref_type, description=description
                )
            )

    retry_events = r.raw("retry_events")
    if retry_events is None:
        retry_events = []
    elif not isinstance(retry_events, list) or not all(
        isinstance(x, Mapping) for x in retry_events
    ):
        r.problem("retry_events", "must be a list of objects")
        retry_events = []

    attribution_data = r.raw("attribution_data")
    if attribution_data is not None and not isinstance(attribution_data, Mapping):
        r.problem("attribution_data", "must be an object")
        attribution_data = None

    kwargs: dict[str, Any] = {}
    result_id = r.uuid(id_key, id_raw)
    if result_id is None and id_raw is None and conversation_id and objective is not None:
        # 0.12 attack results have no id: derive one from what identifies the attack, so a
        # re-sent result (perhaps with a later outcome) updates the stored one.
        result_id = uuid.uuid5(ATTACK_RESULT_NAMESPACE, f"{conversation_id}\n{objective}")
    if result_id is not None:
        kwargs["id"] = result_id
    spec = AttackResultSpec(
        conversation_id=conversation_id or "",
        objective=objective or "",
        attack_identifier=r.identifier(attack_key, attack_raw),
        atomic_attack_identifier=r.identifier("atomic_attack_identifier"),
        objective_sha256=r.text("objective_sha256"),
        last_response_id=_ref_id(last_response, "last_response", r),
        last_score_id=_ref_id(last_score, "last_score", r),
        human_score_id=_ref_id(human_score, "human_score", r),
        executed_turns=r.integer("executed_turns") or 0,
        execution_time_ms=r.integer("execution_time_ms", maximum=BIGINT_MAX) or 0,
        outcome=r.choice("outcome", AttackOutcome, outcome, default=AttackOutcome.UNDETERMINED),
        outcome_reason=r.text("outcome_reason"),
        related_conversations=related,
        metadata=r.mapping("metadata"),
        timestamp=r.timestamp("timestamp"),
        # Redline's own key: an export marks the timestamps Redline derived.
        timestamp_source=r.choice(
            "timestamp_source", TimestampSource, r.raw("timestamp_source"), default=None
        ),
        labels=r.labels("labels"),
        targeted_harm_categories=r.strings(
            "targeted_harm_categories", max_items=HARM_CATEGORIES_MAX_ITEMS
        ),
        error_message=r.text("error_message"),
        error_type=r.text("error_type"),
        error_traceback=r.text("error_traceback"),
        retry_events=[dict(x) for x in retry_events],
        total_retries=r.integer("total_retries") or 0,
        attribution_parent_id=r.uuid("attribution_parent_id"),
        attribution_data=dict(attribution_data) if attribution_data is not None else None,
        operator=r.text("operator"),
        operation=r.text("operation"),
        pyrit_version=r.text("pyrit_version", default="") or "",
        **kwargs,
    )
    spec.extra = r.extra()
    if conversation_id is None or objective is None:
        return None, problems
    return spec, problems


# --- conversations ----------------------------------------------------------------------------


def normalize_conversation(
    data: Any, path: str
) -> tuple[NormalizedConversation | None, list[Problem]]:
    """Normalise a 1.1.0 ``Conversation`` dict (contract §4.3, §9.7)."""
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)
    conversation_id = r.nonblank("conversation_id")
    target = r.identifier("target_identifier")
    retries: list[dict[str, Any]] = []
    raw_retries = r.raw("retries")
    if raw_retries is not None and not isinstance(raw_retries, list):
        r.problem("retries", "must be a list")
        raw_retries = []
    for index, item in enumerate(raw_retries or []):
        item_path = f"{r.at('retries')}[{index}]"
        if not isinstance(item, Mapping):
            problems.extend(not_object(item, item_path))
            continue
        sub = Reader(item, item_path, problems)
        sub.integer("sequence", default=None)
        if item.get("sequence") is None:
            sub.problem("sequence", "is required")
        sub.choice("reason", ConversationRetryReason, item.get("reason"), default=None)
        retries.append(dict(item))
    pyrit_version = r.text("pyrit_version", default="") or ""
    if conversation_id is None:
        return None, problems
    return (
        NormalizedConversation(
            conversation_id=conversation_id,
            target_identifier=target,
            retries=retries,
            pyrit_version=pyrit_version,
            extra=r.extra(),
        ),
        problems,
    )


def normalize_scorable_content(
    data: Any, path: str
) -> tuple[ScorableContentSpec | None, list[Problem]]:
    """Normalise loose scored content: a 1.1.0 ``ScorableContentEntries`` row ``{id, value,
    value_sha256, data_type, timestamp}`` or PyRIT's ``ContentScorable.model_dump()``
    ``{scorable_type: "content", value, data_type}``; scores name it through
    ``scorable.content_id`` (contract §6.3).

    A ``ContentScorable`` has no id: it gets one derived from its data type and value, so
    sending the same content again changes nothing. Unknown keys are kept in ``extra``.
    """
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)
    kind = r.raw("scorable_type")
    if kind not in (None, ScorableType.CONTENT, ScorableType.CONTENT_ENTRY):
        r.problem(
            "scorable_type",
            f"loose content is a {ScorableType.CONTENT.value!r} or "
            f"{ScorableType.CONTENT_ENTRY.value!r} scorable, not {kind!r}",
        )
    value = r.text("value", required=True)
    data_type = r.choice(
        "data_type", PromptDataType, r.raw("data_type"), default=PromptDataType.TEXT
    )
    content_id = r.uuid("id", required=kind != ScorableType.CONTENT)
    if content_id is None and kind == ScorableType.CONTENT and value is not None:
        content_id = uuid.uuid5(_CONTENT_NAMESPACE, f"{data_type}\n{value}")
    spec_ok = content_id is not None and value is not None
    spec = ScorableContentSpec(
        id=content_id or uuid.UUID(int=0),
        value=value or "",
        data_type=data_type,
        value_sha256=r.text("value_sha256"),
        timestamp=r.timestamp("timestamp"),
    )
    spec.extra = r.extra()
    if kind is not None:
        # A ContentScorable's tag is part of what the client sent; kept, not dropped.
        spec.extra["scorable_type"] = kind
    return (spec if spec_ok else None), problems


def normalize_pyrit_record(data: Any, path: str) -> tuple[PyritRecordSpec | None, list[Problem]]:
    """Normalise one verbatim row of a PyRIT table Redline does not model:
    ``{table, pk, row, pyrit_version?, alembic_revision?}`` (Redline's export shape)."""
    if not isinstance(data, Mapping):
        return None, not_object(data, path)
    problems: list[Problem] = []
    r = Reader(data, path, problems)
    table = r.nonblank("table")
    pk = r.nonblank("pk")
    row = r.raw("row")
    if not isinstance(row, Mapping):
        r.problem("row", "must be an object (the row's columns by name)")
        row = None
    spec = PyritRecordSpec(
        table=table or "",
        pk=pk or "",
        row=dict(row or {}),
        pyrit_version=r.text("pyrit_version", default="") or "",
        alembic_revision=r.text("alembic_revision", default="") or "",
    )
    for key in r.extra():
        r.problem(key, "unknown key of a PyRIT record")
    if table is None or pk is None or row is None:
        return None, problems
    return spec, problems


# --- batches ----------------------------------------------------------------------------------


_GROUP_NAMESPACE = uuid.UUID("6f1d4c1e-3f0a-4a53-9d55-2b1c0e7a9a11")


def _attribute(attack: AttackResultSpec, scenario_id: uuid.UUID, collection: str) -> None:
    """An attack result embedded in a scenario's collection belongs to it (PyRIT 1.x's
    ``attribution_parent_id`` and ``attribution_data.parent_collection``), as PyRIT rebuilds
    the scenario's ``attack_results`` map from its rows."""
    if attack.attribution_parent_id is None:
        attack.attribution_parent_id = scenario_id
    data = dict(attack.attribution_data or {})
    data.setdefault("parent_collection", collection)
    attack.attribution_data = data


class _BatchBuilder:
    def __init__(self) -> None:
        self.batch = NormalizedBatch()
        self.problems: list[Problem] = []
        # (path, spec) in the order scores must be considered: top-level, embedded, last_score
        self.top_scores: list[tuple[str, Any, ScoreSpec]] = []
        self.extra_scores: list[tuple[str, Any, ScoreSpec]] = []
        self.attack_results: list[tuple[str, Any, AttackResultSpec]] = []
        self.embedded_attack_results: list[tuple[str, Any]] = []
        self.seeds: list[tuple[str, Any, SeedSpec]] = []

    def items(self, value: Any, path: str) -> list[tuple[str, Any]]:
        if not isinstance(value, list):
            self.problems.append(Problem(path, f"must be a list, not {type(value).__name__}"))
            return []
        return [(f"{path}[{index}]", item) for index, item in enumerate(value)]

    def normalized(
        self,
        value: Any,
        path: str,
        normalize: Callable[[Any, str], tuple[Any, list[Problem]]],
        kind: str,
    ) -> Iterator[tuple[str, Any, Any]]:
        """``(path, raw item, spec)`` of each item ``normalize`` accepts; the others are
        registered as failed items of ``kind`` (their problems recorded)."""
        for item_path, item in self.items(value, path):
            spec, problems = normalize(item, item_path)
            self.problems.extend(problems)
            if spec is None:
                self.batch.register(kind, item_path, item)
            else:
                yield item_path, item, spec

    def add_pieces(
        self, value: Any, path: str, *, default_conversation_id: str | None = None
    ) -> list[NormalizedPiece]:
        added = []
        for item_path, item in self.items(value, path):
            piece, problems = normalize_piece(
                item, item_path, default_conversation_id=default_conversation_id
            )
            self.problems.extend(problems)
            self.batch.register("message_piece", item_path, item, piece.spec if piece else None)
            if piece is not None:
                self.batch.pieces.append(piece)
                added.append(piece)
                for index, score in enumerate(piece.scores):
                    score_path = f"{item_path}.scores[{index}]"
                    raw_scores = item.get("scores")
                    self.extra_scores.append((score_path, raw_scores[index], score))
        return added

    def add_messages(
        self, value: Any, path: str, *, default_conversation_id: str | None = None
    ) -> None:
        for item_path, item in self.items(value, path):
            if not isinstance(item, Mapping):
                self.problems.extend(not_object(item, item_path))
                continue
            key = "message_pieces" if "message_pieces" in item else "request_pieces"
            if key not in item:
                self.problems.append(Problem(f"{item_path}.message_pieces", "is required"))
                continue
            for unknown in set(item) - {"message_pieces", "request_pieces"}:
                self.problems.append(Problem(f"{item_path}.{unknown}", "unknown message key"))
            if isinstance(item[key], list) and not item[key]:
                self.problems.append(
                    Problem(f"{item_path}.{key}", "a message needs at least one piece")
                )
            pieces = self.add_pieces(
                item[key], f"{item_path}.{key}", default_conversation_id=default_conversation_id
            )
            # contract §3 rules 2 and 3: one message object = one (conversation, sequence)
            if pieces:
                first = pieces[0]
                for piece in pieces[1:]:
                    if (piece.conversation_id, piece.sequence) != (
                        first.conversation_id,
                        first.sequence,
                    ):
                        self.problems.append(
                            Problem(
                                piece.path,
                                "pieces of one message must share conversation_id and sequence",
                            )
                        )

    def add_conversations(self, value: Any, path: str) -> None:
        for item_path, item in self.items(value, path):
            if not isinstance(item, Mapping):
                self.problems.extend(not_object(item, item_path))
                continue
            conversation, problems = normalize_conversation(
                item.get("conversation"), f"{item_path}.conversation"
            )
            self.problems.extend(problems)
            self.batch.register(
                "conversation", f"{item_path}.conversation", item.get("conversation"), conversation
            )
            for unknown in set(item) - {"conversation", "messages"}:
                self.problems.append(Problem(f"{item_path}.{unknown}", "unknown key"))
            if conversation is not None:
                self.batch.conversations.append(conversation)
            self.add_messages(
                item.get("messages", []),
                f"{item_path}.messages",
                default_conversation_id=conversation.conversation_id if conversation else None,
            )

    def add_scores(self, value: Any, path: str) -> None:
        self.top_scores.extend(self.normalized(value, path, normalize_score, "score"))

    def add_attack_results(self, value: Any, path: str) -> None:
        for item_path, item, result in self.normalized(
            value, path, normalize_attack_result, "attack_result"
        ):
            self.attack_results.append((item_path, item, result))
            for key in ("last_score", "automated_score", "human_score"):
                embedded = item.get(key)
                if isinstance(embedded, Mapping):
                    score_path = f"{item_path}.{key}"
                    score, score_problems = normalize_score(embedded, score_path)
                    self.problems.extend(score_problems)
                    if score is not None:
                        self.extra_scores.append((score_path, embedded, score))

    def add_seeds(self, value: Any, path: str) -> None:
        self.seeds.extend(self.normalized(value, path, normalize_seed, "seed"))

    def add_seed_groups(self, value: Any, path: str) -> None:
        for item_path, item in self.items(value, path):
            group, problems = normalize_seed_group(item, item_path)
            self.problems.extend(problems)
            self.batch.register("seed_group", item_path, item, group)
            if group is None:
                continue
            self.batch.seed_groups.append(group)
            if not any(seed.prompt_group_id for seed in group.seeds):
                # PyRIT gives such a group a fresh id; derive it from the seeds instead, so
                # sending the same group twice stores it once.
                group_id = uuid.uuid5(
                    _GROUP_NAMESPACE, ",".join(sorted(str(s.id) for s in group.seeds))
                )
                for seed in group.seeds:
                    seed.prompt_group_id = group_id
            raw_seeds = item["seeds"] if isinstance(item, Mapping) else item
            by_path = {f"{item_path}.seeds[{i}]": raw for i, raw in enumerate(raw_seeds)}
            for seed_path, seed in zip(group.seed_paths, group.seeds, strict=True):
                self.seeds.append((seed_path, by_path[seed_path], seed))

    def add_scenario_results(self, value: Any, path: str) -> None:
        for item_path, item in self.items(value, path):
            scenario, problems = normalize_scenario_result(item, item_path)
            self.problems.extend(problems)
            self.batch.register("scenario_result", item_path, item, scenario)
            if scenario is not None:
                self.batch.scenario_results.append(scenario)
            if isinstance(item, Mapping) and isinstance(item.get("attack_results"), Mapping):
                for collection, results in item["attack_results"].items():
                    if isinstance(results, list):
                        before = len(self.attack_results)
                        self.add_attack_results(results, f"{item_path}.attack_results.{collection}")
                        if scenario is not None:
                            for _, _, attack in self.attack_results[before:]:
                                _attribute(attack, scenario.id, collection)

    def add_seed_datasets(self, value: Any, path: str) -> None:
        for item_path, item in self.items(value, path):
            dataset, problems = normalize_seed_dataset(item, item_path)
            self.problems.extend(problems)
            self.batch.register("seed_dataset", item_path, item, dataset)
            if dataset is not None:
                self.batch.seed_datasets.append(dataset)

    def add_scorable_contents(self, value: Any, path: str) -> None:
        for item_path, item in self.items(value, path):
            content, problems = normalize_scorable_content(item, item_path)
            self.problems.extend(problems)
            self.batch.register("scorable_content", item_path, item, content)
            if content is not None:
                self.batch.scorable_contents.append(content)

    def add_pyrit_records(self, value: Any, path: str) -> None:
        for item_path, item, record in self.normalized(
            value, path, normalize_pyrit_record, "pyrit_record"
        ):
            self.batch.register("pyrit_record", item_path, item, record)
            self.batch.pyrit_records.append(record)

    def dedupe(self, kind: str, entries: list[tuple[str, Any, Any]], label: str) -> list[Any]:
        """First occurrence of each id wins; an identical repeat is dropped, a different one
        is a problem (two versions of one immutable object in one payload)."""
        kept: dict[Any, tuple[str, Any]] = {}
        result = []
        for path, raw, spec in entries:
            seen = kept.get(spec.id)
            if seen is None:
                kept[spec.id] = (path, spec)
                self.batch.register(kind, path, raw, spec)
                result.append(spec)
            elif seen[1] != spec:
                self.batch.register(kind, path, raw)
                self.problems.append(
                    Problem(
                        path,
                        f"{label} {spec.id} appears twice with different content "
                        f"(also at {seen[0]})",
                    )
                )
        return result

    def finish(self) -> None:
        batch = self.batch
        self._check_piece_ids()
        self._group_messages()
        batch.scores = self.dedupe("score", [*self.top_scores, *self.extra_scores], "score")
        batch.attack_results = self.dedupe("attack_result", self.attack_results, "attack result")
        batch.seeds = self.dedupe("seed", self.seeds, "seed")
        # §9.2: the 1.1.0 conversation target becomes the piece's prompt target
        targets = {
            c.conversation_id: c.target_identifier
            for c in batch.conversations
            if c.target_identifier is not None
        }
        # §9.2: 1.x attack result labels / harm categories onto its conversations' pieces
        labels: dict[str, dict[str, Any]] = {}
        harms: dict[str, list[str]] = {}
        for result in batch.attack_results:
            ids = [result.conversation_id] + [
                ref.conversation_id for ref in result.related_conversations
            ]
            for conversation_id in ids:
                if result.labels:
                    labels.setdefault(conversation_id, result.labels)
                if result.targeted_harm_categories:
                    harms.setdefault(conversation_id, result.targeted_harm_categories)
        for piece in batch.pieces:
            spec = piece.spec
            if spec.prompt_target_identifier is None:
                spec.prompt_target_identifier = targets.get(piece.conversation_id)
            if not spec.labels and piece.conversation_id in labels:
                spec.labels = dict(labels[piece.conversation_id])
            if not spec.targeted_harm_categories and piece.conversation_id in harms:
                spec.targeted_harm_categories = list(harms[piece.conversation_id])
        version = batch.meta.get("pyrit_version")
        if isinstance(version, str) and version:
            specs: list[Any] = [p.spec for p in batch.pieces]
            for spec in [
                *specs,
                *batch.scores,
                *batch.attack_results,
                *batch.seeds,
                *batch.scenario_results,
            ]:
                if not spec.pyrit_version:
                    spec.pyrit_version = version

    def _check_piece_ids(self) -> None:
        seen: dict[uuid.UUID, str] = {}
        for piece in self.batch.pieces:
            if piece.spec.id in seen:
                self.problems.append(
                    Problem(
                        f"{piece.path}.id", f"duplicate piece id (also at {seen[piece.spec.id]})"
                    )
                )
            else:
                seen[piece.spec.id] = piece.path

    def _group_messages(self) -> None:
        groups: dict[tuple[str, int], NormalizedMessage] = {}
        for piece in self.batch.pieces:
            key = (piece.conversation_id, piece.sequence)
            message = groups.get(key)
            if message is None:
                message = NormalizedMessage(
                    conversation_id=piece.conversation_id,
                    sequence=piece.sequence,
                    role=piece.role,
                    pieces=[],
                )
                groups[key] = message
                self.batch.messages.append(message)
            elif piece.role != message.role:
                self.problems.append(
                    Problem(
                        f"{piece.path}.role",
                        f"role {piece.role!r} differs from {message.role!r} of the other pieces "
                        f"of message (conversation {piece.conversation_id!r}, sequence "
                        f"{piece.sequence}); a message has one role",
                    )
                )
            message.pieces.append(piece)


_ADDERS = {
    "conversations": _BatchBuilder.add_conversations,
    "messages": _BatchBuilder.add_messages,
    "message_pieces": _BatchBuilder.add_pieces,
    "request_pieces": _BatchBuilder.add_pieces,
    "scores": _BatchBuilder.add_scores,
    "attack_results": _BatchBuilder.add_attack_results,
    "seeds": _BatchBuilder.add_seeds,
    "seed_groups": _BatchBuilder.add_seed_groups,
    "scenario_results": _BatchBuilder.add_scenario_results,
    "scorable_contents": _BatchBuilder.add_scorable_contents,
    "seed_datasets": _BatchBuilder.add_seed_datasets,
    "pyrit_records": _BatchBuilder.add_pyrit_records,
}
PAYLOAD_KEYS = tuple(_ADDERS)
#: Top-level keys that describe a batch rather than hold items (PyRIT exports and Redline's;
#: ``push_source`` is redline-push's ``{"host", "database"}``).
META_KEYS = ("export_format", "pyrit_version", "note", "push_source")
#: Longest host name and database path a push source may name (``PushSource`` columns).
PUSH_SOURCE_LIMITS = {"host": 255, "database": 1024}


def _push_source(value: Any) -> PushSourceSpec | Problem:
    """``{"host": str, "database": str}``, both non-empty and within the column lengths."""
    if not isinstance(value, Mapping):
        return Problem("push_source", f"must be an object, not {type(value).__name__}")
    found = {}
    for key, limit in PUSH_SOURCE_LIMITS.items():
        text = value.get(key)
        if not isinstance(text, str) or not text.strip():
            return Problem(f"push_source.{key}", "must be a non-empty string")
        if len(text) > limit:
            return Problem(f"push_source.{key}", f"longer than {limit} characters")
        found[key] = text
    return PushSourceSpec(**found)


def normalize_batch(payload: Any) -> tuple[NormalizedBatch, list[Problem]]:
    """Normalise a whole payload (contract §9) into a :class:`NormalizedBatch` plus problems.

    ``payload`` is either a JSON array of piece dicts (0.x ``export_conversations``) or an
    object with any of ``conversations`` (1.1.0 ``{"conversation", "messages"}``), ``messages``
    (``{"message_pieces"|"request_pieces": [...]}``), ``message_pieces``, ``request_pieces``,
    ``scores``, ``attack_results``, ``seeds``, ``seed_groups``, ``scenario_results``,
    ``scorable_contents``, ``seed_datasets``, ``pyrit_records``; the keys of :data:`META_KEYS`
    go to ``meta``, and any other key is a problem (it names a list nothing would read).

    Pieces are grouped into messages by (conversation_id, sequence) in source order, and a
    message whose pieces disagree on the role is a problem (contract §3). The conversation target
    and the attack results' labels / harm categories are copied onto pieces lacking them
    (§9.2), and the export's ``pyrit_version`` onto specs without one.
    """
    builder = _BatchBuilder()
    if isinstance(payload, list):
        # a bare array: paths are "[17].role"
        builder.add_pieces(payload, "")
    elif isinstance(payload, Mapping):
        for key, value in payload.items():
            adder = _ADDERS.get(key)
            if adder is not None:
                adder(builder, value, key)
            elif key == "push_source":
                source = _push_source(value)
                if isinstance(source, Problem):
                    builder.problems.append(source)
                else:
                    builder.batch.meta[key] = source
            elif key in META_KEYS:
                builder.batch.meta[key] = value
            else:
                # A misspelt list (``message_piecez``) would otherwise be dropped unseen.
                builder.problems.append(
                    Problem(
                        str(key),
                        "unknown key; a batch holds "
                        + ", ".join(sorted({*PAYLOAD_KEYS, *META_KEYS})),
                    )
                )
    else:
        builder.problems.append(
            Problem("", f"must be a JSON object or array, not {type(payload).__name__}")
        )
    builder.finish()
    return builder.batch, builder.problems
