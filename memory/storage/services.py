"""Write services for PyRIT memory: every write path goes through these functions.

Each function is keyword-only, validates its whole input before writing, and writes inside
one transaction. Identifiers are stored content-addressed (one row per hash, children stored
once); media bytes content-addressed by SHA-256.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone

from memory.models import (
    AttackResult,
    Conversation,
    HumanOutcome,
    HumanVerdict,
    Message,
    MessagePiece,
    QueueResolution,
    ReviewQueue,
    ScenarioResult,
    Score,
)
from memory.storage.batch import NormalizedBatch, NormalizedMessage, NormalizedPiece
from memory.storage.queues import attack_in_queue, queue_filter_params, queue_filter_problems
from memory.storage.specs import AttackResultSpec, PieceSpec, ScenarioResultSpec, ScoreSpec
from memory.storage.write import serialise_writers
from redteam.core import identifiers as ids
from redteam.core.choices import (
    ChatMessageRole,
    ConversationType,
    Originator,
    PromptDataType,
    PromptResponseError,
    ScoreStatus,
    ScoreType,
    is_media_value,
)
from redteam.core.errors import InvalidMemory, Problem, text_checked
from redteam.core.hashing import sha256_text
from redteam.core.scoring import score_numeric_value
from redteam.security import security_event

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

    from memory.storage.write import IngestReport


def _now() -> datetime:
    return datetime.now(UTC)


# --- conversations and messages -------------------------------------------------------------


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


def _with_text_hashes(spec: PieceSpec) -> PieceSpec:
    """``spec`` with the SHA-256 of its text values filled in where missing."""
    converted = spec.original_value if spec.converted_value is None else spec.converted_value
    converted_type = spec.converted_value_data_type or spec.original_value_data_type
    changes = {}
    if spec.original_value_sha256 is None and not is_media_value(
        spec.original_value_data_type, spec.original_value
    ):
        changes["original_value_sha256"] = sha256_text(spec.original_value)
    if spec.converted_value_sha256 is None and not is_media_value(converted_type, converted):
        changes["converted_value_sha256"] = sha256_text(converted)
    return replace(spec, **changes) if changes else spec


def message_add(
    *,
    conversation_id: str,
    role: str,
    pieces: Sequence[PieceSpec],
    sequence: int | None = None,
) -> Message:
    """Add one message (turn) to a conversation, as PyRIT's memory does (contract §3).

    ``sequence`` defaults to one past the conversation's highest. Converted values default to
    the original (and their type to the original's). Text SHA-256 values are computed when
    missing, as PyRIT does when it stores a piece, except on system pieces (PyRIT hashes
    none); media ones when the bytes are given. Piece order is kept as ``position``.
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

    if sequence is None:
        highest = Message.objects.filter(conversation__conversation_id=conversation_id).aggregate(
            m=Max("sequence")
        )["m"]
        sequence = 0 if highest is None else highest + 1
    if role != ChatMessageRole.SYSTEM:
        pieces = [_with_text_hashes(spec) for spec in pieces]
    pieces_in = [
        NormalizedPiece(
            conversation_id=conversation_id,
            sequence=sequence,
            role=role,
            spec=spec,
            path=f"pieces[{index}]",
        )
        for index, spec in enumerate(pieces)
    ]
    batch = NormalizedBatch(
        pieces=pieces_in,
        messages=[
            NormalizedMessage(
                conversation_id=conversation_id, sequence=sequence, role=role, pieces=pieces_in
            )
        ],
    )
    for piece in pieces_in:
        batch.register("message_piece", piece.path, None, piece.spec)
    _write(batch)
    return Message.objects.get(conversation__conversation_id=conversation_id, sequence=sequence)


def _write(batch: NormalizedBatch, prefix: str = "") -> IngestReport:
    """Write ``batch`` through the one ingestion path; its problems raise ``InvalidMemory``."""
    from memory.storage.write import ingest_batch

    report = ingest_batch(batch=batch)
    if report.errors:
        raise InvalidMemory(
            [Problem(e["path"].removeprefix(prefix), e["message"]) for e in report.errors]
        )
    return report


# --- scores ---------------------------------------------------------------------------------


def score_add(*, spec: ScoreSpec) -> Score:
    """Store one score after checking its value against its type and status (contract §6.2)."""
    problems = []
    if spec.score_type not in ScoreType.values:
        problems.append(Problem("score_type", f"unknown score type {spec.score_type!r}"))
    if spec.status not in ScoreStatus.values:
        problems.append(Problem("status", f"unknown status {spec.status!r}"))
    elif (spec.status == ScoreStatus.UNDETERMINED) != (spec.score_value is None):
        problems.append(
            Problem("score_value", "must be null exactly when the status is 'undetermined'")
        )
    try:
        score_numeric_value(spec.score_type, spec.score_value)
    except ValueError as exc:
        problems.append(Problem("score_value", str(exc)))
    if problems:
        raise InvalidMemory(problems)
    batch = NormalizedBatch(scores=[spec])
    batch.register("score", "score", None, spec)
    _write(batch, "score.")
    return Score.objects.get(pk=spec.id)


# --- attack results -------------------------------------------------------------------------


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
    if problems:
        raise InvalidMemory(problems)
    batch = NormalizedBatch(attack_results=[spec])
    batch.register("attack_result", "attack_result", None, spec)
    report = _write(batch, "attack_result.")
    created = report.counts["attack_results"]["created"] == 1
    return AttackResult.objects.get(pk=spec.id), created


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
    spec = ScenarioResultSpec(
        id=id,
        scenario_name=scenario_name,
        scenario_identifier=scenario_identifier,
        objective_target_identifier=objective_target_identifier,
        objective_scorer_identifier=objective_scorer_identifier,
        creation_time=creation_time or _now(),
        **fields,
    )
    batch = NormalizedBatch(scenario_results=[spec])
    batch.register("scenario_result", "scenario_result", None, spec)
    _write(batch, "scenario_result.")
    return ScenarioResult.objects.get(pk=id)


# --- human review ---------------------------------------------------------------------------

#: ``class_module`` of the scorer identity of human scores recorded in Redline.
HUMAN_SCORER_MODULE = "redline.review"
#: Longest verdict reason / score rationale accepted (a paragraph or two, not a document).
HUMAN_TEXT_MAX = 10_000


def human_scorer_identifier(*, score_type: str, reviewer_name: str) -> ids.ComponentIdentifier:
    """The scorer identity of a reviewer's human scores of one type (``HumanScorer``).

    Built with PyRIT's identifier rules, so it hashes, filters (``scorer_hash``) and groups
    (``eval_hash``) like any automated scorer: one identity per reviewer and score type.
    """
    identifier = ids.ComponentIdentifier(
        class_name="HumanScorer",
        class_module=HUMAN_SCORER_MODULE,
        params={"scorer_type": score_type, "reviewer": reviewer_name},
        pyrit_version="",
    )
    return identifier.with_eval_hash(ids.ScorerEvaluationIdentifier(identifier).eval_hash)


def _human_text(value: str, path: str, problems: list[Problem]) -> str:
    return text_checked(
        value, path=path, problems=problems, max_length=HUMAN_TEXT_MAX, required=True
    )


def _verdict_text(outcome: str, reason: str, problems: list[Problem]) -> str:
    """Check a verdict's outcome and reason; the reason as stored."""
    if outcome not in HumanOutcome.values:
        problems.append(
            Problem("outcome", f"must be one of {', '.join(HumanOutcome.values)}, not {outcome!r}")
        )
    return _human_text(reason, "reason", problems)


def human_verdict_record(
    *, attack_result: AttackResult, outcome: str, reason: str, reviewer: AbstractBaseUser
) -> HumanVerdict:
    """Record a reviewer's verdict on an attack and mirror it onto the attack result.

    The automated ``outcome`` is never touched: verdicts are an append-only history, and the
    newest one is copied to ``human_outcome`` / ``human_verdict_at`` in the same transaction
    (the attack row is locked first, so two reviewers saving at once cannot leave the mirror
    pointing at the older verdict).
    """
    problems: list[Problem] = []
    reason = _verdict_text(outcome, reason, problems)
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        serialise_writers()  # before the row lock: the update's rollup triggers take it too
        locked = AttackResult.objects.select_for_update().get(pk=attack_result.pk)
        verdict = HumanVerdict.objects.create(
            attack_result=locked,
            outcome=outcome,
            reason=reason,
            reviewer=reviewer,
            reviewer_name=reviewer.get_username(),
            created_at=_now(),
        )
        newest = locked.human_verdicts.order_by("-created_at", "-pk").first()
        AttackResult.objects.filter(pk=locked.pk).update(
            human_outcome=newest.outcome, human_verdict_at=newest.created_at
        )
    attack_result.human_outcome = newest.outcome
    attack_result.human_verdict_at = newest.created_at
    return verdict


def _human_score_value(score_type: str, value: str | bool | float, problems: list[Problem]) -> str:
    """The stored string of a human score value, PyRIT style (``"true"``, ``"0.75"``)."""
    if score_type == ScoreType.TRUE_FALSE:
        text = str(value).strip().lower()
        if text not in {"true", "false"}:
            problems.append(Problem("value", "must be true or false"))
        return text
    if score_type == ScoreType.FLOAT_SCALE:
        try:
            number = float(value)
        except (TypeError, ValueError):
            problems.append(Problem("value", "must be a number between 0 and 1"))
            return ""
        if not 0.0 <= number <= 1.0:  # NaN fails both comparisons
            problems.append(Problem("value", "must lie between 0 and 1"))
        return repr(number)
    problems.append(Problem("score_type", "must be true_false or float_scale"))
    return ""


def human_score_add(
    *,
    piece: MessagePiece,
    score_type: str,
    value: str | bool | float,
    rationale: str,
    reviewer: AbstractBaseUser,
    categories: Sequence[str] = (),
    objective: str | None = None,
) -> Score:
    """Add a reviewer's score of ``piece`` as a ``Score`` row beside the automated ones.

    The score goes through the same ingestion path as PyRIT's scores, with a ``HumanScorer``
    identity (:func:`human_scorer_identifier`) and ``reviewer`` set. It points at the piece's
    ``original_prompt_id``, the key PyRIT joins scores on, so it shows on every copy of a
    duplicated piece (contract §6.4).
    """
    problems: list[Problem] = []
    stored = _human_score_value(score_type, value, problems)
    rationale = _human_text(rationale, "rationale", problems)
    clean_categories = [c.strip() for c in categories if c.strip()]
    if any(len(c) > 255 for c in clean_categories):
        problems.append(Problem("categories", "each category must be at most 255 characters"))
    if problems:
        raise InvalidMemory(problems)
    spec = ScoreSpec(
        score_type=score_type,
        score_value=stored,
        scorer_class_identifier=human_scorer_identifier(
            score_type=score_type, reviewer_name=reviewer.get_username()
        ),
        message_piece_id=piece.original_prompt_id,
        score_rationale=rationale,
        score_value_description="Human review in Redline",
        score_category=clean_categories or None,
        objective=objective,
        timestamp=_now(),
    )
    with transaction.atomic():
        score = score_add(spec=spec)
        Score.objects.filter(pk=score.pk).update(reviewer=reviewer)
    score.reviewer = reviewer
    return score


# --- correcting memory --------------------------------------------------------------------------


def piece_correct(
    *,
    piece: MessagePiece,
    actor: AbstractBaseUser,
    reason: str,
    original_value: str | None = None,
    converted_value: str | None = None,
) -> MessagePiece:
    """Correct a piece's text values (a superuser's last resort, e.g. a secret pasted into a
    prompt), with a reason kept in its history and the security log.

    PyRIT's SHA-256 of a changed text value is computed again. Findings holding the piece as
    evidence show their seal broken: a correction is a change of the evidence.
    """
    problems: list[Problem] = []
    reason = (reason or "").strip()
    if not reason:
        problems.append(Problem("reason", "say why this memory is corrected"))
    if original_value is None and converted_value is None:
        problems.append(Problem("value", "give the corrected original or converted value"))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        locked = MessagePiece.objects.select_for_update().get(pk=piece.pk)
        changed = []
        given = (("original_value", original_value), ("converted_value", converted_value))
        for name, value in given:
            if value is None or value == getattr(locked, name):
                continue
            changed.append(name)
            setattr(locked, name, value)
            data_type = getattr(locked, f"{name}_data_type")
            if not is_media_value(data_type, value):
                setattr(locked, f"{name}_sha256", sha256_text(value))
        if changed:
            locked._history_user = actor
            locked._change_reason = reason[:100]
            locked.save()
    if changed:
        security_event(
            "memory_corrected",
            user=actor.get_username(),
            reason=reason,
            piece=str(piece.pk),
            fields=changed,
        )
    return locked


# --- deleting memory ----------------------------------------------------------------------------

#: How each model reaches the human verdicts that judged it: an attack's own verdicts, or those
#: of the attack whose main conversation holds it.
_VERDICT_PATHS = {
    "AttackResult": "human_verdicts",
    "Conversation": "attack_results__human_verdicts",
    "Message": "conversation__attack_results__human_verdicts",
    "MessagePiece": "message__conversation__attack_results__human_verdicts",
    "Score": "conversation__attack_results__human_verdicts",
}


# --- review queues ---------------------------------------------------------------------------

VERDICT_PERMISSION = "memory.add_humanverdict"
#: The most attacks one bulk verdict records (each is a locked row and a history entry).
BULK_VERDICT_MAX = 200
QUEUE_NAME_MAX = 200


def human_verdicts_record_bulk(
    *,
    attack_results: Sequence[AttackResult],
    outcome: str,
    reason: str,
    reviewer: AbstractBaseUser,
) -> list[HumanVerdict]:
    """One verdict, with one reason, on each of ``attack_results``: all or none.

    Each goes through :func:`human_verdict_record` (so each attack's human outcome is its
    newest verdict), inside one transaction. Needs ``memory.add_humanverdict``.
    """
    if not reviewer.has_perm(VERDICT_PERMISSION):
        raise PermissionDenied("Recording verdicts needs the reviewer role.")
    problems: list[Problem] = []
    reason = _verdict_text(outcome, reason, problems)
    distinct = list({attack.pk: attack for attack in attack_results}.values())
    if not distinct:
        problems.append(Problem("attack_results", "select at least one attack"))
    elif len(distinct) > BULK_VERDICT_MAX:
        problems.append(
            Problem(
                "attack_results", f"at most {BULK_VERDICT_MAX} attacks at once, not {len(distinct)}"
            )
        )
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        return [
            human_verdict_record(
                attack_result=attack, outcome=outcome, reason=reason, reviewer=reviewer
            )
            for attack in distinct
        ]


def review_queue_problems(
    *,
    name: str,
    filter_query: str,
    required_reviews: int,
    assignees: Sequence[AbstractBaseUser],
    queue: ReviewQueue | None = None,
) -> list[Problem]:
    """Why these cannot be ``queue``'s (or a new queue's) settings; empty when they can."""
    problems: list[Problem] = []
    name = (name or "").strip()
    if not name:
        problems.append(Problem("name", "is required"))
    elif len(name) > QUEUE_NAME_MAX:
        problems.append(Problem("name", f"must be at most {QUEUE_NAME_MAX} characters"))
    elif (
        ReviewQueue.objects.filter(name=name)
        .exclude(pk=queue.pk if queue is not None and queue.pk else None)
        .exists()
    ):
        problems.append(Problem("name", f"a queue named {name!r} exists already"))
    problems.extend(queue_filter_problems(filter_query or ""))
    people = {person.pk: person for person in assignees}
    if not isinstance(required_reviews, int) or required_reviews < 1:
        problems.append(Problem("required_reviews", "must be a whole number of at least 1"))
    elif people and required_reviews > len(people):
        problems.append(
            Problem(
                "required_reviews",
                f"{required_reviews} reviews per attack need at least as many assignees, "
                f"not {len(people)}",
            )
        )
    unable = sorted(p.get_username() for p in people.values() if not p.has_perm(VERDICT_PERMISSION))
    if unable:
        problems.append(
            Problem("assignees", f"cannot record verdicts (reviewer role): {', '.join(unable)}")
        )
    return problems


def review_queue_save(
    *,
    user: AbstractBaseUser,
    name: str,
    filter_query: str,
    required_reviews: int,
    assignees: Sequence[AbstractBaseUser],
    blind: bool = False,
    description: str = "",
    queue: ReviewQueue | None = None,
) -> ReviewQueue:
    """Create a review queue (``queue`` None, or not saved yet), or change ``queue``.

    Needs ``memory.add_reviewqueue`` (new) or ``memory.change_reviewqueue``. The filter must be
    the attack list's (:func:`memory.storage.queues.queue_filter_problems`); it is stored
    without a leading ``?`` or empty values. Every assignee must be able to record verdicts,
    and there must be at least ``required_reviews`` of them (or no item could be completed);
    see :func:`review_queue_problems`.
    """
    creating = queue is None or queue.pk is None
    needed = "memory.add_reviewqueue" if creating else "memory.change_reviewqueue"
    if not user.has_perm(needed):
        raise PermissionDenied("Creating and changing review queues needs the lead role.")
    problems = review_queue_problems(
        name=name,
        filter_query=filter_query,
        required_reviews=required_reviews,
        assignees=assignees,
        queue=queue,
    )
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        if queue is None:
            queue = ReviewQueue()
        if creating:
            queue.created_by = user
            queue.created_at = _now()
        queue.name = name.strip()
        queue.description = (description or "").strip()
        queue.filter_query = queue_filter_params(filter_query or "").urlencode()
        queue.required_reviews = required_reviews
        queue.blind = blind
        queue.save()
        queue.assignees.set(list({person.pk: person for person in assignees}.values()))
    return queue


def queue_resolution_record(
    *,
    queue: ReviewQueue,
    attack_result: AttackResult,
    outcome: str,
    reason: str,
    resolved_by: AbstractBaseUser,
) -> QueueResolution:
    """A lead's final verdict on an attack of ``queue``, where its reviewers disagree.

    Recorded as a verdict (:func:`human_verdict_record`, so it becomes the attack's human
    outcome) plus the resolution row that marks it as one; both in one transaction. Needs
    ``memory.add_queueresolution`` and ``memory.add_humanverdict``; the attack must be in the
    queue now.
    """
    if not resolved_by.has_perms(["memory.add_queueresolution", VERDICT_PERMISSION]):
        raise PermissionDenied("Resolving disagreements needs the lead role.")
    problems: list[Problem] = []
    _verdict_text(outcome, reason, problems)
    if not attack_in_queue(queue=queue, attack_id=attack_result.pk):
        problems.append(Problem("attack_result", f"is not in the queue {queue.name!r}"))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        verdict = human_verdict_record(
            attack_result=attack_result, outcome=outcome, reason=reason, reviewer=resolved_by
        )
        return QueueResolution.objects.create(
            queue=queue,
            attack_result=attack_result,
            verdict=verdict,
            resolved_by=resolved_by,
            created_at=verdict.created_at,
        )


#: How each model reaches the finding evidence that holds it: evidence naming the row itself, or
#: the conversation it belongs to (attack evidence names its main conversation too).
_EVIDENCE_PATHS = {
    "AttackResult": ("finding_evidence", "conversation__finding_evidence"),
    "Conversation": ("finding_evidence",),
    "Message": ("conversation__finding_evidence",),
    "MessagePiece": ("finding_evidence", "message__conversation__finding_evidence"),
    "Score": ("finding_evidence", "conversation__finding_evidence"),
}


def memory_evidence(*, queryset: QuerySet) -> int:
    """How many of ``queryset``'s rows are, or are part of, a finding's evidence."""
    paths = _EVIDENCE_PATHS.get(queryset.model.__name__)
    if not paths:
        return 0
    held = Q()
    for path in paths:
        held |= Q(**{f"{path}__isnull": False})
    return queryset.filter(held).distinct().count()


def memory_reviewed(*, queryset: QuerySet) -> int:
    """How many of ``queryset``'s rows a human verdict refers to (directly or as the
    conversation it judged)."""
    path = _VERDICT_PATHS.get(queryset.model.__name__)
    if path is None:
        return 0
    return queryset.filter(**{f"{path}__isnull": False}).distinct().count()


def memory_delete(
    *, queryset: QuerySet, actor: AbstractBaseUser, reason: str, force: bool = False
) -> int:
    """Delete PyRIT memory with a reason; refuse memory a human verdict refers to, or that is
    a finding's evidence, unless ``force``. Returns how many rows were deleted (cascades
    included). Deleted evidence keeps its seal and shows as missing on the finding.

    Memory is evidence: every deletion is recorded in the rows' history with ``actor`` and
    ``reason`` (what cascades with them too), and in the security log.
    """
    reason = (reason or "").strip()
    if not reason:
        raise InvalidMemory([Problem("reason", "say why this memory is deleted")])
    reviewed = memory_reviewed(queryset=queryset)
    evidence = memory_evidence(queryset=queryset)
    if reviewed and not force:
        raise InvalidMemory(
            [
                Problem(
                    "force",
                    f"{reviewed} of the selected rows hold memory a human verdict refers to; "
                    "confirm deleting the evidence of those verdicts too",
                )
            ]
        )
    if evidence and not force:
        raise InvalidMemory(
            [
                Problem(
                    "force",
                    f"{evidence} of the selected rows are evidence of a finding; confirm "
                    "deleting finding evidence too",
                )
            ]
        )
    started = timezone.now()
    models = _HISTORY_MODELS
    with transaction.atomic():
        serialise_writers()  # before the delete locks rows: its rollup triggers take it too
        deleted, per_model = queryset.delete()
        for model in models:
            model.history.filter(history_type="-", history_date__gte=started).update(
                history_user_id=actor.pk, history_change_reason=reason[:100]
            )
    security_event(
        "memory_deleted",
        user=actor.get_username(),
        reason=reason,
        forced=bool(reviewed or evidence),
        counts={label.rsplit(".", 1)[-1]: n for label, n in per_model.items() if n},
    )
    return deleted


#: The memory models whose changes and deletions are recorded (``history``).
_HISTORY_MODELS = (AttackResult, Conversation, MessagePiece, Score, HumanVerdict)
