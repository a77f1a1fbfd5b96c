"""Write services for PyRIT memory: every write path goes through these functions.

Each function is keyword-only, validates its whole input before writing, and writes inside
one transaction. Identifiers are stored content-addressed (one row per hash, children stored
once); media bytes content-addressed by SHA-256.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import Max, Q

from memory import identifiers as ids
from memory.choices import (
    ChatMessageRole,
    ConversationType,
    Originator,
    PromptDataType,
    PromptResponseError,
    ScoreStatus,
    ScoreType,
    is_media_value,
)
from memory.errors import InvalidMemory, Problem
from memory.media import sniff_content_type
from memory.models import (
    AttackResult,
    ComponentIdentifier,
    ComponentIdentifierChild,
    Conversation,
    HarmCategory,
    Label,
    MediaBlob,
    Message,
    MessagePiece,
    PieceConverter,
    RelatedConversation,
    ScenarioResult,
    Score,
)
from memory.scoring import score_numeric_value
from memory.specs import AttackResultSpec, PieceSpec, ScoreSpec


def sha256_text(value: str) -> str:
    """PyRIT's ``*_sha256`` of a text value: SHA-256 of its UTF-8 bytes (spec §2.3)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


# --- identifiers ----------------------------------------------------------------------------


def _collect(identifier: ids.ComponentIdentifier, out: dict[str, ids.ComponentIdentifier]) -> None:
    """Post-order walk: children before parents, first occurrence of a hash wins."""
    for child in identifier.children.values():
        for node in child if isinstance(child, list) else [child]:
            _collect(node, out)
    out.setdefault(identifier.hash, identifier)


def identifiers_store(
    *, identifiers: Iterable[ids.ComponentIdentifier | None]
) -> dict[str, ComponentIdentifier]:
    """Store identifier trees content-addressed and map every hash in them to its row.

    Rows that already exist are reused untouched (the first content stored under a hash is
    kept: later copies differ at most by truncation). Three queries for any number of trees.
    """
    nodes: dict[str, ids.ComponentIdentifier] = {}
    for identifier in identifiers:
        if identifier is not None:
            _collect(identifier, nodes)
    if not nodes:
        return {}
    with transaction.atomic():
        existing = set(
            ComponentIdentifier.objects.filter(hash__in=nodes).values_list("hash", flat=True)
        )
        new = [node for h, node in nodes.items() if h not in existing]
        ComponentIdentifier.objects.bulk_create(
            [
                ComponentIdentifier(
                    hash=node.hash,
                    class_name=node.class_name,
                    class_module=node.class_module,
                    params=node.params,
                    children=node.hash_dict().get("children", {}),
                    attributes=node.attributes,
                    eval_hash=node.eval_hash,
                    pyrit_version=node.pyrit_version or "",
                    content_hash=node.content_hash(),
                )
                for node in new
            ],
            ignore_conflicts=True,
            batch_size=500,
        )
        rows = ComponentIdentifier.objects.by_hash(list(nodes))
        edges = []
        for node in new:
            for name, child in node.children.items():
                is_list = isinstance(child, list)
                for position, item in enumerate(child if is_list else [child]):
                    edges.append(
                        ComponentIdentifierChild(
                            parent=rows[node.hash],
                            name=name,
                            position=position,
                            is_list=is_list,
                            child=rows[item.hash],
                        )
                    )
        ComponentIdentifierChild.objects.bulk_create(edges, ignore_conflicts=True, batch_size=500)
    return rows


def identifier_store(*, identifier: ids.ComponentIdentifier) -> ComponentIdentifier:
    """Store one identifier tree and return its root row."""
    return identifiers_store(identifiers=[identifier])[identifier.hash]


# --- media ----------------------------------------------------------------------------------


def media_store(*, data: bytes, original_name: str = "") -> MediaBlob:
    """Store bytes content-addressed and return their blob (the same bytes are stored once).

    The type is sniffed from the content; ``original_name`` is kept for provenance only.
    """
    digest = hashlib.sha256(data).hexdigest()
    blob = MediaBlob.objects.filter(sha256=digest).first()
    if blob is not None:
        return blob
    blob = MediaBlob(
        sha256=digest,
        size=len(data),
        content_type=sniff_content_type(data),
        original_name=original_name[:1024],
    )
    blob.file.save(digest, ContentFile(data), save=False)
    try:
        with transaction.atomic():
            blob.save()
    except IntegrityError:
        # Another writer stored the same bytes first; theirs is the blob.
        blob.file.delete(save=False)
        return MediaBlob.objects.get(sha256=digest)
    return blob


# --- conversations and messages -------------------------------------------------------------


def _label_rows(labels: dict[str, Any]) -> list[Label]:
    """Label rows for ``labels``, inserting new pairs: two statements however many labels."""
    pairs = {(str(k), v if isinstance(v, str) else str(v)) for k, v in labels.items()}
    if not pairs:
        return []
    Label.objects.bulk_create([Label(key=k, value=v) for k, v in pairs], ignore_conflicts=True)
    match = Q()
    for key, value in pairs:
        match |= Q(key=key, value=value)
    return list(Label.objects.filter(match))


def _harm_rows(names: Iterable[str]) -> list[HarmCategory]:
    """Harm category rows for ``names``, inserting new ones: two statements."""
    unique = {str(n) for n in names}
    HarmCategory.objects.bulk_create([HarmCategory(name=n) for n in unique], ignore_conflicts=True)
    return list(HarmCategory.objects.filter(name__in=unique))


def _merge_list(first: list[str], more: Iterable[str]) -> list[str]:
    """``first`` then the new items of ``more``, de-duplicated in first-seen order."""
    merged = list(first)
    for item in more:
        if item not in merged:
            merged.append(item)
    return merged


def _tag(target: Conversation | AttackResult, labels: dict, harm_categories: list[str]) -> None:
    """Merge labels and harm categories into ``target`` and its normalised index links."""
    merged_labels = {**target.labels, **labels}
    merged_harms = _merge_list(target.targeted_harm_categories, harm_categories)
    if merged_labels != target.labels or merged_harms != target.targeted_harm_categories:
        target.labels = merged_labels
        target.targeted_harm_categories = merged_harms
        target.save(update_fields=["labels", "targeted_harm_categories", "updated_at"])
    if labels:
        target.label_index.add(*_label_rows(labels))
    if harm_categories:
        target.harm_category_index.add(*_harm_rows(harm_categories))


def conversation_get_or_create(
    *,
    conversation_id: str,
    target_identifier: ids.ComponentIdentifier | None = None,
    retries: list[dict[str, Any]] | None = None,
    pyrit_version: str = "",
) -> Conversation:
    """The conversation with this PyRIT id, created if new; a missing target is filled in."""
    if not conversation_id or not conversation_id.strip():
        raise InvalidMemory([Problem("conversation_id", "must not be blank")])
    target_row = identifier_store(identifier=target_identifier) if target_identifier else None
    conversation, created = Conversation.objects.get_or_create(
        conversation_id=conversation_id,
        defaults={
            "target_identifier": target_row,
            "retries": retries or [],
            "pyrit_version": pyrit_version,
        },
    )
    if not created and target_row is not None and conversation.target_identifier_id is None:
        conversation.target_identifier = target_row
        conversation.save(update_fields=["target_identifier", "updated_at"])
    return conversation


def _validate_piece(index: int, piece: PieceSpec) -> list[Problem]:
    problems = []
    where = f"pieces[{index}]"
    for name in ("original_value_data_type", "converted_value_data_type"):
        value = getattr(piece, name)
        if value is not None and value not in PromptDataType.values:
            problems.append(Problem(f"{where}.{name}", f"unknown data type {value!r}"))
    if piece.response_error not in PromptResponseError.values:
        problems.append(
            Problem(f"{where}.response_error", f"unknown value {piece.response_error!r}")
        )
    if piece.originator not in Originator.values:
        problems.append(Problem(f"{where}.originator", f"unknown value {piece.originator!r}"))
    if piece.original_value is None:
        problems.append(Problem(f"{where}.original_value", "is required"))
    return problems


def _piece_sha(value: str, data_type: str, given: str | None, media: bytes | None) -> str | None:
    """Keep a given hash; otherwise hash text, or the media bytes when we have them."""
    if given is not None:
        return given
    if is_media_value(data_type, value):
        return hashlib.sha256(media).hexdigest() if media is not None else None
    return sha256_text(value)


def message_add(
    *,
    conversation_id: str,
    role: str,
    pieces: Sequence[PieceSpec],
    sequence: int | None = None,
) -> Message:
    """Add one message (turn) to a conversation, as PyRIT's memory does (spec §3).

    ``sequence`` defaults to one past the conversation's highest. Converted values default to
    the original (and their type to the original's); text SHA-256 values are computed when
    missing, media ones when the bytes are given. Piece order is kept as ``position``.
    """
    problems: list[Problem] = []
    if not pieces:
        problems.append(Problem("pieces", "a message needs at least one piece"))
    if role not in ChatMessageRole.values:
        problems.append(Problem("role", f"unknown role {role!r}"))
    for index, piece in enumerate(pieces):
        problems.extend(_validate_piece(index, piece))
    if sequence is not None and sequence < 0:
        problems.append(Problem("sequence", "must be >= 0"))
    if problems:
        raise InvalidMemory(problems)

    with transaction.atomic():
        target = next(
            (p.prompt_target_identifier for p in pieces if p.prompt_target_identifier), None
        )
        conversation = conversation_get_or_create(
            conversation_id=conversation_id, target_identifier=target
        )
        if sequence is None:
            highest = conversation.messages.aggregate(m=Max("sequence"))["m"]
            sequence = 0 if highest is None else highest + 1
        message = Message.objects.create(conversation=conversation, sequence=sequence, role=role)
        rows = identifiers_store(
            identifiers=[
                ident
                for p in pieces
                for ident in (
                    p.prompt_target_identifier,
                    p.attack_identifier,
                    p.scorer_identifier,
                    *p.converter_identifiers,
                )
            ]
        )

        def row(identifier: ids.ComponentIdentifier | None) -> ComponentIdentifier | None:
            return rows[identifier.hash] if identifier is not None else None

        piece_rows, links, timestamps = [], [], []
        labels: dict[str, Any] = {}
        harms: list[str] = []
        for position, spec in enumerate(pieces):
            # Contract (0.12): only a missing converted value falls back to the original;
            # an empty string is a real value and is kept.
            converted = (
                spec.original_value if spec.converted_value is None else spec.converted_value
            )
            converted_type = spec.converted_value_data_type or spec.original_value_data_type
            original_blob = (
                media_store(data=spec.original_media, original_name=spec.original_value)
                if spec.original_media is not None
                else None
            )
            converted_media = spec.converted_media
            if converted_media is None and converted == spec.original_value:
                converted_media = spec.original_media
            converted_blob = (
                media_store(data=converted_media, original_name=converted)
                if converted_media is not None
                else None
            )
            timestamp = spec.timestamp or _now()
            timestamps.append(timestamp)
            labels.update(spec.labels)
            harms = _merge_list(harms, spec.targeted_harm_categories)
            piece_rows.append(
                MessagePiece(
                    id=spec.id,
                    message=message,
                    position=position,
                    timestamp=timestamp,
                    labels=spec.labels,
                    prompt_metadata=spec.prompt_metadata,
                    targeted_harm_categories=spec.targeted_harm_categories,
                    prompt_target_identifier=row(spec.prompt_target_identifier),
                    attack_identifier=row(spec.attack_identifier),
                    scorer_identifier=row(spec.scorer_identifier),
                    original_value=spec.original_value,
                    original_value_data_type=spec.original_value_data_type,
                    original_value_sha256=_piece_sha(
                        spec.original_value,
                        spec.original_value_data_type,
                        spec.original_value_sha256,
                        spec.original_media,
                    ),
                    original_media=original_blob,
                    converted_value=converted,
                    converted_value_data_type=converted_type,
                    converted_value_sha256=_piece_sha(
                        converted, converted_type, spec.converted_value_sha256, converted_media
                    ),
                    converted_media=converted_blob,
                    response_error=spec.response_error,
                    originator=spec.originator,
                    original_prompt_id=spec.original_prompt_id or spec.id,
                    pyrit_version=spec.pyrit_version,
                    extra=spec.extra,
                )
            )
            links.extend(
                PieceConverter(piece_id=spec.id, position=i, identifier=rows[conv.hash])
                for i, conv in enumerate(spec.converter_identifiers)
            )
        MessagePiece.objects.bulk_create(piece_rows)
        PieceConverter.objects.bulk_create(links)
        earliest = min(timestamps)
        if conversation.started_at is None or earliest < conversation.started_at:
            conversation.started_at = earliest
            conversation.save(update_fields=["started_at", "updated_at"])
        _tag(conversation, labels, harms)
    return message


# --- scores ---------------------------------------------------------------------------------


def score_add(*, spec: ScoreSpec) -> Score:
    """Store one score after checking its value against its type and status (spec §6.2)."""
    problems = []
    if spec.score_type not in ScoreType.values:
        problems.append(Problem("score_type", f"unknown score type {spec.score_type!r}"))
    if spec.status not in ScoreStatus.values:
        problems.append(Problem("status", f"unknown status {spec.status!r}"))
    elif (spec.status == ScoreStatus.UNDETERMINED) != (spec.score_value is None):
        problems.append(
            Problem("score_value", "must be null exactly when the status is 'undetermined'")
        )
    numeric = None
    try:
        numeric = score_numeric_value(spec.score_type, spec.score_value)
    except ValueError as exc:
        problems.append(Problem("score_value", str(exc)))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        scorer = identifier_store(identifier=spec.scorer_class_identifier)
        score = Score(
            id=spec.id,
            score_value=spec.score_value,
            numeric_value=numeric,
            score_value_description=spec.score_value_description,
            score_type=spec.score_type,
            score_category=spec.score_category,
            score_rationale=spec.score_rationale,
            score_metadata=spec.score_metadata,
            scorer_class_identifier=scorer,
            message_piece_id=spec.message_piece_id,
            timestamp=spec.timestamp or _now(),
            objective=spec.objective,
            status=spec.status,
            scorable=spec.scorable,
            pyrit_version=spec.pyrit_version,
            extra=spec.extra,
        )
        Score.objects.bulk_create([score])
    return score


# --- attack results -------------------------------------------------------------------------


def attack_strategy_identifier(
    *,
    attack_identifier: ids.ComponentIdentifier | None,
    atomic_attack_identifier: ids.ComponentIdentifier | None,
) -> ids.ComponentIdentifier | None:
    """The attack strategy, wherever the PyRIT version put it (spec §9.2).

    0.10–0.14 store it as ``attack_identifier``; 0.12 nests it as ``children.attack`` of the
    atomic identifier; 0.13+ as ``children.attack_technique.children.attack``.
    """
    if attack_identifier is not None or atomic_attack_identifier is None:
        return attack_identifier
    direct = atomic_attack_identifier.get_child("attack")
    if direct is not None:
        return direct
    technique = atomic_attack_identifier.get_child("attack_technique")
    return technique.get_child("attack") if technique is not None else None


def attack_result_save(*, spec: AttackResultSpec) -> tuple[AttackResult, bool]:
    """Create or update (by ``id``) an attack result; returns it and whether it was created.

    A later outcome replaces an earlier one. Related conversations are added (never removed:
    PyRIT's references only accumulate). ``last_response_id`` and ``last_score_id`` must name
    a stored piece / score.
    """
    problems = []
    if not spec.objective and spec.objective != "":
        problems.append(Problem("objective", "is required"))
    for index, ref in enumerate(spec.related_conversations):
        if ref.conversation_type not in ConversationType.values:
            problems.append(
                Problem(
                    f"related_conversations[{index}].conversation_type",
                    f"unknown type {ref.conversation_type!r}",
                )
            )
    if spec.last_response_id and not MessagePiece.objects.filter(pk=spec.last_response_id).exists():
        problems.append(Problem("last_response", f"no piece with id {spec.last_response_id}"))
    if spec.last_score_id and not Score.objects.filter(pk=spec.last_score_id).exists():
        problems.append(Problem("last_score", f"no score with id {spec.last_score_id}"))
    if problems:
        raise InvalidMemory(problems)

    strategy = attack_strategy_identifier(
        attack_identifier=spec.attack_identifier,
        atomic_attack_identifier=spec.atomic_attack_identifier,
    )
    with transaction.atomic():
        rows = identifiers_store(identifiers=[strategy, spec.atomic_attack_identifier])
        conversation = conversation_get_or_create(conversation_id=spec.conversation_id)
        values = {
            "conversation": conversation,
            "objective": spec.objective,
            "objective_sha256": spec.objective_sha256 or sha256_text(spec.objective),
            "attack_identifier": rows.get(strategy.hash) if strategy else None,
            "atomic_attack_identifier": (
                rows[spec.atomic_attack_identifier.hash] if spec.atomic_attack_identifier else None
            ),
            "last_response_id": spec.last_response_id,
            "last_score_id": spec.last_score_id,
            "executed_turns": spec.executed_turns,
            "execution_time_ms": spec.execution_time_ms,
            "outcome": spec.outcome,
            "outcome_reason": spec.outcome_reason,
            "metadata": spec.metadata,
            "timestamp": spec.timestamp or _now(),
            "error_message": spec.error_message,
            "error_type": spec.error_type,
            "error_traceback": spec.error_traceback,
            "retry_events": spec.retry_events,
            "total_retries": spec.total_retries,
            "attribution_parent_id": spec.attribution_parent_id,
            "attribution_data": spec.attribution_data,
            "pyrit_version": spec.pyrit_version,
            "extra": spec.extra,
        }
        attack, created = AttackResult.objects.update_or_create(id=spec.id, defaults=values)
        for ref in spec.related_conversations:
            related = conversation_get_or_create(conversation_id=ref.conversation_id)
            RelatedConversation.objects.get_or_create(
                attack_result=attack,
                conversation=related,
                defaults={
                    "conversation_type": ref.conversation_type,
                    "description": ref.description,
                },
            )
        _tag(attack, spec.labels, spec.targeted_harm_categories)
        _tag(conversation, spec.labels, spec.targeted_harm_categories)
    return attack, created


# --- scenario results -----------------------------------------------------------------------


def scenario_result_save(
    *,
    id: uuid.UUID,
    scenario_name: str,
    scenario_identifier: ids.ComponentIdentifier,
    objective_target_identifier: ids.ComponentIdentifier | None = None,
    objective_scorer_identifier: ids.ComponentIdentifier | None = None,
    creation_time: datetime | None = None,
    **fields: Any,
) -> ScenarioResult:
    """Create or update (by ``id``) a scenario result; other fields as on the model."""
    with transaction.atomic():
        rows = identifiers_store(
            identifiers=[
                scenario_identifier,
                objective_target_identifier,
                objective_scorer_identifier,
            ]
        )

        def row(identifier: ids.ComponentIdentifier | None) -> ComponentIdentifier | None:
            return rows[identifier.hash] if identifier is not None else None

        scenario, _ = ScenarioResult.objects.update_or_create(
            id=id,
            defaults={
                "scenario_name": scenario_name,
                "scenario_identifier": row(scenario_identifier),
                "objective_target_identifier": row(objective_target_identifier),
                "objective_scorer_identifier": row(objective_scorer_identifier),
                "creation_time": creation_time or _now(),
                **fields,
            },
        )
    return scenario
