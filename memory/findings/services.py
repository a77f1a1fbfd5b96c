"""Write services for operations, findings, evidence and retests.

Keyword-only and typed like ``memory.storage.services``: each validates its whole input,
raises ``InvalidMemory`` with every problem, then writes in one transaction. Every change is
recorded in the rows' history with the acting user (and, for status changes, the note as the
change reason). Notifications are queued after the transaction commits
(``memory.findings.events``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.findings import events, lifecycle
from memory.findings.reports import build_document
from memory.findings.seal import Target, keyed_seal, seal_documents
from memory.findings.selectors import (
    as_params,
    attack_configuration,
    evidence_target,
    filter_problems,
    finding_configuration,
    operation_params,
    rule_params,
)
from memory.models import (
    AttackResult,
    Conversation,
    Evidence,
    EvidenceKind,
    Finding,
    FindingComment,
    FindingStatus,
    MessagePiece,
    Operation,
    Report,
    Retest,
    RetestResult,
    Score,
    Severity,
)
from memory.storage import aggregates as ag
from memory.storage.queues import blind_hidden_attacks
from redteam.core.errors import InvalidMemory, Problem, text_checked
from redteam.core.lengths import HARM_CATEGORIES_MAX_ITEMS, too_many_items

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

TEXT_MAX = 20_000
#: A finding's or a report's title (the column's length).
TITLE_MAX_CHARS = 255


def _text(value: str | None, path: str, problems: list[Problem], *, required: bool = False) -> str:
    return text_checked(value, path=path, problems=problems, max_length=TEXT_MAX, required=required)


def _strings(values: Sequence[str] | None, path: str, problems: list[Problem]) -> list[str]:
    cleaned: list[str] = []
    if values is None:
        return cleaned
    if not isinstance(values, list | tuple):
        # A client's JSON may hold anything here: a clear problem, never a 500.
        problems.append(Problem(path, "must be a list of strings"))
        return cleaned
    if len(values) > HARM_CATEGORIES_MAX_ITEMS:
        problems.append(Problem(path, too_many_items(len(values), HARM_CATEGORIES_MAX_ITEMS)))
        return cleaned
    for index, value in enumerate(values):
        if not isinstance(value, str):
            problems.append(Problem(f"{path}[{index}]", "must be a string"))
            continue
        text = value.strip()
        if len(text) > 255:
            problems.append(Problem(f"{path}[{index}]", "must be at most 255 characters"))
        elif text and text not in cleaned:
            cleaned.append(text)
    return cleaned


def _with_actor(instance: Any, actor: AbstractBaseUser | None, reason: str | None = None) -> None:
    """Name the acting user (and why) in the history row the next save writes."""
    instance._history_user = actor
    if reason:
        instance._change_reason = reason[:100]


# --- operations ----------------------------------------------------------------------------------


def operation_save(
    *,
    actor: AbstractBaseUser,
    name: str,
    operation: Operation | None = None,
    description: str = "",
    scope: str = "",
    target_systems: Sequence[str] = (),
    starts_on: date | None = None,
    ends_on: date | None = None,
    members: Sequence[AbstractBaseUser] | None = None,
    pyrit_operation: str = "",
    attack_filter: str = "",
    pyrit_id: uuid.UUID | None = None,
) -> Operation:
    """Create an operation, or change ``operation``, with its rule for choosing attacks."""
    problems: list[Problem] = []
    name = _text(name, "name", problems, required=True)
    if len(name) > 128:
        problems.append(Problem("name", "must be at most 128 characters"))
    pyrit_operation = _text(pyrit_operation, "pyrit_operation", problems)
    attack_filter = _text(attack_filter, "attack_filter", problems).lstrip("?")
    for key, messages in filter_problems(attack_filter).items():
        problems.append(Problem(f"attack_filter.{key}", "; ".join(messages)))
    if starts_on and ends_on and ends_on < starts_on:
        problems.append(Problem("ends_on", "must not be before starts_on"))
    clash = Operation.objects.filter(name=name)
    if operation is not None:
        clash = clash.exclude(pk=operation.pk)
    if name and clash.exists():
        problems.append(Problem("name", f"an operation named {name!r} exists"))
    if problems:
        raise InvalidMemory(problems)
    target = operation or Operation(created_by=actor)
    target.name = name
    target.description = _text(description, "description", problems)
    target.scope = _text(scope, "scope", problems)
    target.target_systems = _strings(target_systems, "target_systems", problems)
    target.starts_on, target.ends_on = starts_on, ends_on
    target.pyrit_operation = pyrit_operation
    target.attack_filter = attack_filter
    if pyrit_id is not None:
        target.pyrit_id = pyrit_id
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        _with_actor(target, actor)
        target.save()
        if members is not None:
            target.members.set(members)
    return target


# --- findings ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvidenceSpec:
    """Memory to attach: its kind and PyRIT's id of it (attack_result_id, conversation_id,
    piece id or score id)."""

    kind: str
    ref: str
    note: str = ""


@dataclass
class _Resolved:
    spec: EvidenceSpec
    attack: AttackResult | None = None
    conversation: Conversation | None = None
    piece: MessagePiece | None = None
    score: Score | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> Target:
        pk = {
            EvidenceKind.ATTACK: self.attack,
            EvidenceKind.CONVERSATION: self.conversation,
            EvidenceKind.PIECE: self.piece,
            EvidenceKind.SCORE: self.score,
        }[self.spec.kind]
        return Target(self.spec.kind, pk.pk)


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError):
        return None


def _resolve_evidence(specs: Sequence[EvidenceSpec], problems: list[Problem]) -> list[_Resolved]:
    """Look every spec's memory up: one query per kind."""
    by_kind: dict[str, list[tuple[int, EvidenceSpec]]] = {k: [] for k in EvidenceKind.values}
    for index, spec in enumerate(specs):
        if spec.kind not in EvidenceKind.values:
            problems.append(
                Problem(f"evidence[{index}].kind", f"must be one of {', '.join(EvidenceKind)}")
            )
            continue
        if spec.kind != EvidenceKind.CONVERSATION and _uuid(spec.ref) is None:
            problems.append(Problem(f"evidence[{index}].ref", "must be a UUID"))
            continue
        by_kind[spec.kind].append((index, spec))
    attacks = {
        str(a.pk): a
        for a in AttackResult.objects.select_related(
            "conversation__target_identifier", "attack_identifier", "atomic_attack_identifier"
        ).filter(pk__in=[_uuid(s.ref) for _, s in by_kind[EvidenceKind.ATTACK]])
    }
    conversations = {
        c.conversation_id: c
        for c in Conversation.objects.filter(
            conversation_id__in=[s.ref for _, s in by_kind[EvidenceKind.CONVERSATION]]
        )
    }
    pieces = {
        str(p.pk): p
        for p in MessagePiece.objects.select_related("message__conversation").filter(
            pk__in=[_uuid(s.ref) for _, s in by_kind[EvidenceKind.PIECE]]
        )
    }
    scores = {
        str(s.pk): s
        for s in Score.objects.select_related("conversation").filter(
            pk__in=[_uuid(s.ref) for _, s in by_kind[EvidenceKind.SCORE]]
        )
    }
    resolved = []
    for kind, items in by_kind.items():
        for index, spec in items:
            ref = spec.ref if kind == EvidenceKind.CONVERSATION else str(_uuid(spec.ref))
            found = {
                EvidenceKind.ATTACK: attacks,
                EvidenceKind.CONVERSATION: conversations,
                EvidenceKind.PIECE: pieces,
                EvidenceKind.SCORE: scores,
            }[kind].get(ref)
            if found is None:
                problems.append(Problem(f"evidence[{index}].ref", f"no {kind} {spec.ref!r}"))
                continue
            item = _Resolved(EvidenceSpec(kind, ref, spec.note))
            if kind == EvidenceKind.ATTACK:
                item.attack, item.conversation = found, found.conversation
            elif kind == EvidenceKind.CONVERSATION:
                item.conversation = found
            elif kind == EvidenceKind.PIECE:
                item.piece, item.conversation = found, found.message.conversation
            else:
                item.score, item.conversation = found, found.conversation
            resolved.append(item)
    return resolved


def _seal_and_create(
    finding: Finding, items: Sequence[_Resolved], actor: AbstractBaseUser | None
) -> list[Evidence]:
    documents = seal_documents([item.target for item in items])
    created = []
    now = timezone.now()
    for item in items:
        document = documents[item.target]
        key_id, seal = keyed_seal(document)
        evidence = Evidence(
            finding=finding,
            kind=item.spec.kind,
            ref=item.spec.ref,
            attack_result=item.attack,
            conversation=item.conversation,
            piece=item.piece,
            score=item.score,
            note=item.spec.note.strip(),
            seal=seal,
            seal_key_id=key_id,
            sealed=document,
            attached_by=actor,
            attached_at=now,
        )
        _with_actor(evidence, actor)
        evidence.save()
        created.append(evidence)
    return created


def _validate_finding_fields(
    problems: list[Problem],
    *,
    title: str | None,
    severity: str | None,
    harm_categories: Sequence[str] | None,
    framework_tags: Sequence[str] | None,
) -> dict[str, Any]:
    cleaned: dict[str, Any] = {}
    if title is not None:
        cleaned["title"] = _text(title, "title", problems, required=True)
        if len(cleaned["title"]) > TITLE_MAX_CHARS:
            problems.append(Problem("title", f"must be at most {TITLE_MAX_CHARS} characters"))
    if severity is not None:
        if severity not in Severity.values:
            problems.append(Problem("severity", f"must be one of {', '.join(Severity.values)}"))
        cleaned["severity"] = severity
    if harm_categories is not None:
        cleaned["harm_categories"] = _strings(harm_categories, "harm_categories", problems)
    if framework_tags is not None:
        cleaned["framework_tags"] = _strings(framework_tags, "framework_tags", problems)
    return cleaned


def finding_create(
    *,
    actor: AbstractBaseUser | None,
    title: str,
    description: str = "",
    severity: str = Severity.MEDIUM,
    owner: AbstractBaseUser | None = None,
    operation: Operation | None = None,
    harm_categories: Sequence[str] = (),
    framework_tags: Sequence[str] = (),
    reproduction_steps: str = "",
    remediation: str = "",
    evidence: Sequence[EvidenceSpec] = (),
    status: str = FindingStatus.NEW,
    pyrit_id: uuid.UUID | None = None,
    pyrit_fields: dict[str, Any] | None = None,
    created_at: Any = None,
) -> Finding:
    """Create a finding with its evidence, each piece sealed as it is now.

    The first attack among the evidence is the one it was found with: its objective hash,
    eval hash and target are remembered for retests. Without attack evidence the first
    conversation's attack (if any) stands in.
    """
    problems: list[Problem] = []
    cleaned = _validate_finding_fields(
        problems,
        title=title,
        severity=severity,
        harm_categories=harm_categories,
        framework_tags=framework_tags,
    )
    if status not in FindingStatus.values:
        problems.append(Problem("status", f"must be one of {', '.join(FindingStatus.values)}"))
    texts = {
        name: _text(value, name, problems)
        for name, value in (
            ("description", description),
            ("reproduction_steps", reproduction_steps),
            ("remediation", remediation),
        )
    }
    resolved = _resolve_evidence(evidence, problems)
    if problems:
        raise InvalidMemory(problems)
    found_with = next((item.attack for item in resolved if item.attack is not None), None)
    if found_with is None:
        conversations = [item.conversation for item in resolved if item.conversation is not None]
        if conversations:
            found_with = (
                AttackResult.objects.select_related(
                    "conversation__target_identifier",
                    "attack_identifier",
                    "atomic_attack_identifier",
                )
                .filter(conversation=conversations[0])
                .order_by("timestamp")
                .first()
            )
    found = attack_configuration(found_with) if found_with else None
    now = timezone.now()
    finding = Finding(
        **cleaned,
        **texts,
        status=status,
        owner=owner,
        operation=operation,
        found_objective_sha256=found.objective_sha256 if found else None,
        found_eval_hash=found.eval_hash if found else None,
        found_target_hash=found.target_hash if found else None,
        found_at=found_with.timestamp if found_with else None,
        pyrit_id=pyrit_id,
        pyrit_fields=pyrit_fields or {},
        created_by=actor,
        created_at=created_at or now,
        updated_at=now,
    )
    with transaction.atomic():
        _with_actor(finding, actor)
        finding.save()
        _seal_and_create(finding, resolved, actor)
        events.finding_created(finding)
    return finding


#: Fields ``finding_update`` changes (status has its own service).
EDITABLE = (
    "title",
    "description",
    "severity",
    "owner",
    "operation",
    "harm_categories",
    "framework_tags",
    "reproduction_steps",
    "remediation",
)


def finding_update(*, finding: Finding, actor: AbstractBaseUser, **changes: Any) -> Finding:
    """Change any of :data:`EDITABLE` (keyword arguments); the history records what changed."""
    problems: list[Problem] = []
    unknown = sorted(set(changes) - set(EDITABLE))
    for name in unknown:
        problems.append(Problem(name, "cannot be changed here"))
    cleaned = _validate_finding_fields(
        problems,
        title=changes.get("title"),
        severity=changes.get("severity"),
        harm_categories=changes.get("harm_categories"),
        framework_tags=changes.get("framework_tags"),
    )
    for name in ("description", "reproduction_steps", "remediation"):
        if name in changes:
            cleaned[name] = _text(changes[name], name, problems)
    for name in ("owner", "operation"):
        if name in changes:
            cleaned[name] = changes[name]
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        locked = Finding.objects.select_for_update().get(pk=finding.pk)
        for name, value in cleaned.items():
            setattr(locked, name, value)
        locked.updated_at = timezone.now()
        _with_actor(locked, actor)
        locked.save()
    return locked


def finding_tags_add(*, finding: Finding, actor: AbstractBaseUser, tags: Sequence[str]) -> Finding:
    """Append framework tags the finding does not carry yet (a suggestion taken with one click).

    Appended under the row lock, so a tag added while someone else edits the finding joins
    their tags instead of replacing them.
    """
    problems: list[Problem] = []
    wanted = _strings(tags, "tags", problems)
    if not wanted:
        problems.append(Problem("tags", "is required"))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        locked = Finding.objects.select_for_update().get(pk=finding.pk)
        merged = _strings([*locked.framework_tags, *wanted], "framework_tags", problems)
        if merged != locked.framework_tags:
            locked.framework_tags = merged
            locked.updated_at = timezone.now()
            _with_actor(locked, actor)
            locked.save()
    return locked


def finding_status_set(
    *, finding: Finding, status: str, actor: AbstractBaseUser, note: str = ""
) -> Finding:
    """Move a finding along its lifecycle (``memory.findings.lifecycle``); the note is kept
    as the history's change reason (its first 100 characters) and as a comment."""
    problems: list[Problem] = []
    note = _text(note, "note", problems)
    if status not in FindingStatus.values:
        problems.append(Problem("status", f"must be one of {', '.join(FindingStatus.values)}"))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        locked = Finding.objects.select_for_update().get(pk=finding.pk)
        if not lifecycle.may_move(locked.status, status):
            allowed = lifecycle.labels(lifecycle.next_statuses(locked.status))
            raise InvalidMemory(
                [
                    Problem(
                        "status",
                        f"{lifecycle.label(locked.status)} can move to {allowed}, "
                        f"not {lifecycle.label(status)}",
                    )
                ]
            )
        move = lifecycle.move_text(locked.status, status)
        _set_status(locked, status, actor, note or move)
        if note:
            finding_comment_add(finding=locked, author=actor, body=f"[{move}] {note}")
    return locked


def _set_status(finding: Finding, status: str, actor: AbstractBaseUser | None, reason: str) -> None:
    previous = finding.status
    finding.status = status
    finding.updated_at = timezone.now()
    _with_actor(finding, actor, reason)
    finding.save(update_fields=["status", "updated_at"])
    events.finding_status_changed(finding, previous)


def finding_comment_add(*, finding: Finding, author: AbstractBaseUser, body: str) -> FindingComment:
    problems: list[Problem] = []
    body = _text(body, "body", problems, required=True)
    if problems:
        raise InvalidMemory(problems)
    comment = FindingComment(
        finding=finding, author=author, author_name=author.get_username(), body=body
    )
    _with_actor(comment, author)
    comment.save()
    return comment


def evidence_attach(
    *, finding: Finding, evidence: Sequence[EvidenceSpec], actor: AbstractBaseUser
) -> list[Evidence]:
    """Attach more memory to a finding, sealed as it is now; already attached memory is
    refused (one seal per thing)."""
    problems: list[Problem] = []
    if not evidence:
        problems.append(Problem("evidence", "name at least one thing to attach"))
    resolved = _resolve_evidence(evidence, problems)
    attached = set(Evidence.objects.filter(finding=finding).values_list("kind", "ref"))
    for index, item in enumerate(resolved):
        if (item.spec.kind, item.spec.ref) in attached:
            problems.append(Problem(f"evidence[{index}].ref", "is already evidence of it"))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        try:
            created = _seal_and_create(finding, resolved, actor)
        except IntegrityError as error:  # a concurrent attach of the same memory
            raise InvalidMemory([Problem("evidence", "is already evidence of it")]) from error
        if not finding.found_eval_hash:
            found_with = next((i.attack for i in resolved if i.attack is not None), None)
            if found_with is not None:
                found = attack_configuration(found_with)
                Finding.objects.filter(pk=finding.pk).update(
                    found_objective_sha256=found.objective_sha256,
                    found_eval_hash=found.eval_hash,
                    found_target_hash=found.target_hash,
                    found_at=found_with.timestamp,
                )
    return created


def evidence_reseal(*, evidence: Evidence, actor: AbstractBaseUser, reason: str) -> Evidence:
    """Seal evidence again as the memory is now, with a reason (kept in its history)."""
    problems: list[Problem] = []
    reason = _text(reason, "reason", problems, required=True)
    if problems:
        raise InvalidMemory(problems)
    document = seal_documents([evidence_target(evidence)]).get(evidence_target(evidence))
    if document is None:
        raise InvalidMemory([Problem("evidence", "the memory it pointed at was deleted")])
    evidence.sealed = document
    evidence.seal_key_id, evidence.seal = keyed_seal(document)
    _with_actor(evidence, actor, reason)
    evidence.save(update_fields=["sealed", "seal", "seal_key_id"])
    return evidence


# --- retests -------------------------------------------------------------------------------------


def retest_record(
    *,
    finding: Finding,
    attack: AttackResult,
    actor: AbstractBaseUser,
    confirm_jump: bool = False,
) -> Retest:
    """Record ``attack`` as a retest of ``finding`` and move the finding's status.

    The attack must repeat what the finding was found with: the same objective (its SHA-256),
    the same attack configuration (eval hash) and the same target. It passes when the attack
    failed (the reviewers' verdict over PyRIT's outcome), fails when it succeeded; an
    undetermined or errored attack proves nothing and is refused. The status moves as the
    lifecycle allows (from mitigated, or from one retest result to the other); any other move
    is a jump, refused unless ``confirm_jump``, and then recorded in the history as a confirmed
    jump.
    """
    problems: list[Problem] = []
    found, given = finding_configuration(finding), attack_configuration(attack)
    if not (found.objective_sha256 and found.eval_hash):
        problems.append(Problem("finding", "has no attack configuration to retest"))
    else:
        if given.objective_sha256 != found.objective_sha256:
            problems.append(
                Problem(
                    "attack_result_id",
                    "attacks another objective than the finding was found with: a retest "
                    "repeats the same objective",
                )
            )
        if (given.eval_hash, given.target_hash) != (found.eval_hash, found.target_hash):
            problems.append(
                Problem("attack_result_id", "does not repeat the finding's eval hash and target")
            )
    outcome = attack.human_outcome or attack.outcome
    status = lifecycle.after_retest(outcome)
    if status is None:
        problems.append(Problem("attack_result_id", f"its outcome is {outcome}: no retest"))
    if finding.status not in lifecycle.RETESTABLE:
        problems.append(
            Problem("status", f"a {lifecycle.label(finding.status)} finding is not retested")
        )
    if Retest.objects.filter(finding=finding, attack_ref=str(attack.pk)).exists():
        problems.append(Problem("attack_result_id", "is already recorded as a retest"))
    if problems:
        raise InvalidMemory(problems)
    result = RetestResult.PASSED if status == FindingStatus.RETEST_PASSED else RetestResult.FAILED
    with transaction.atomic():
        locked = Finding.objects.select_for_update().get(pk=finding.pk)
        jump = lifecycle.needs_confirmation(locked.status, status)
        if jump and not confirm_jump:
            raise InvalidMemory([_jump_problem(locked.status, status)])
        retest = Retest(
            finding=locked,
            attack_result=attack,
            attack_ref=str(attack.pk),
            attack_outcome=outcome,
            result=result,
            recorded_by=actor,
        )
        _with_actor(retest, actor)
        retest.save()
        if locked.status != status:
            move = lifecycle.move_text(locked.status, status)
            reason = f"Retest {result.label.lower()}: {move}"
            if jump:
                reason = f"Confirmed jump: {move} (retest {result.label.lower()})"
                finding_comment_add(
                    finding=locked,
                    author=actor,
                    body=f"{reason}, skipping the lifecycle; attack {attack.pk}.",
                )
            _set_status(locked, status, actor, reason)
    finding.status = locked.status
    return retest


def _jump_problem(current: str, new: str) -> Problem:
    allowed = lifecycle.labels(lifecycle.next_statuses(current))
    return Problem(
        "confirm_jump",
        f"{lifecycle.move_text(current, new)} skips the lifecycle ({lifecycle.label(current)} "
        f"can move to {allowed}); mark the finding mitigated first, or confirm the jump",
    )


def user_named(username: str) -> AbstractBaseUser | None:
    """The user with ``username`` (None: no such user)."""
    return get_user_model().objects.filter(username=username).first()


# --- reports -------------------------------------------------------------------------------------


def report_create(
    *,
    actor: AbstractBaseUser | None,
    title: str = "",
    operation: Operation | None = None,
    scope_query: str = "",
    redact_media: bool = False,
    outcome_source: str = ag.Source.AUTOMATED,
) -> Report:
    """Make a report of an operation (its rule) or of a saved filter, and store its snapshot.

    Without an operation or a filter the report covers all of memory. ``outcome_source`` is
    whose outcome the figures count, as the dashboards' ``source``: ``automated`` (PyRIT's)
    or ``human`` (the reviewers' verdict where there is one); the snapshot states it.
    """
    problems: list[Problem] = []
    if outcome_source not in {source.value for source in ag.Source}:
        choices = ", ".join(source.value for source in ag.Source)
        problems.append(Problem("outcome_source", f"must be one of {choices}"))
    scope_query = (scope_query or "").strip().lstrip("?")
    for key, messages in filter_problems(scope_query).items():
        problems.append(Problem(f"scope_query.{key}", "; ".join(messages)))
    if operation is not None and scope_query:
        problems.append(Problem("scope_query", "give an operation or a filter, not both"))
    if operation is not None and not operation_params(operation):
        problems.append(Problem("operation", "has no rule choosing its attacks"))
    # Refused, never cut: a report's title is what its readers and its seal see.
    title = text_checked(
        title, path="title", problems=problems, max_length=TITLE_MAX_CHARS, required=False
    )
    if problems:
        raise InvalidMemory(problems)
    if operation is not None:
        params = operation_params(operation)
    else:
        params = rule_params(pyrit_operation="", attack_filter=scope_query)
    title = (
        title
        or (f"Operation {operation.name}" if operation else "Red-team report")[:TITLE_MAX_CHARS]
    )
    document = build_document(
        params=as_params(params),
        title=title,
        operation=operation,
        redact_media=redact_media,
        source=ag.Source(outcome_source),
        # Blind review: the author's report counts no verdict hidden from them.
        hidden=None if actor is None else blind_hidden_attacks(user=actor),
    )
    counts = document["snapshot"]["counts"]
    return Report.objects.create(
        title=title,
        operation=operation,
        scope_query=document["scope"]["query"],
        snapshot=document,
        snapshot_sha256=document["snapshot"]["sha256"],
        attack_count=counts["attacks"],
        finding_count=counts["findings"],
        created_by=actor,
    )
