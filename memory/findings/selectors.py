"""Reads of operations and findings: an operation's attacks, evidence seals, retest suggestions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from django.db.models import Count, Q, QuerySet
from django.http import QueryDict

from memory.findings.seal import (
    SEAL_STATES,
    Target,
    changed_paths,
    seal_documents,
    seal_state,
    seal_under,
)
from memory.models import AttackResult, Evidence, EvidenceKind, Finding, Operation, Retest
from memory.storage.crosswalk import Crosswalk, crosswalk_current
from memory.storage.filters import AttackResultFilter
from memory.storage.queues import with_seen_human_outcome
from redteam.core.hashing import sha256_text

Params = tuple[tuple[str, str], ...]

#: Filter parameters a rule may not use: outcomes are what reports and dashboards count.
RULE_IGNORED = frozenset({"outcome", "effective_outcome", "page", "sort", "source"})


def rule_params(*, pyrit_operation: str, attack_filter: str) -> Params:
    """The attack-list filter parameters of an operation's rule, in a stable order."""
    params: list[tuple[str, str]] = []
    if pyrit_operation:
        params.append(("labels", f"operation:{pyrit_operation}"))
    params += [
        (key, value)
        for key, value in parse_qsl(attack_filter.lstrip("?"), keep_blank_values=False)
        if key in AttackResultFilter.base_filters and key not in RULE_IGNORED
    ]
    return tuple(params)


def operation_params(operation: Operation) -> Params:
    """The filter parameters selecting ``operation``'s attacks (empty: it has no rule)."""
    return rule_params(
        pyrit_operation=operation.pyrit_operation, attack_filter=operation.attack_filter
    )


def params_query(params: Params) -> str:
    """``params`` as a query string (``labels=operation%3AOp``)."""
    return urlencode(params)


def params_querydict(params: Params) -> QueryDict:
    query = QueryDict(mutable=True)
    for key, value in params:
        query.appendlist(key, value)
    return query


def filter_problems(query: str) -> dict[str, list[str]]:
    """The attack filter's errors for query string ``query`` (empty: it parses)."""
    params = [(k, v) for k, v in parse_qsl(query.lstrip("?")) if k not in RULE_IGNORED]
    unknown = sorted({k for k, _ in params if k not in AttackResultFilter.base_filters})
    form = AttackResultFilter(params_querydict(tuple(params)), AttackResult.objects.none()).form
    errors = {name: list(messages) for name, messages in form.errors.items()} if params else {}
    if unknown:
        errors["attack_filter"] = [f"unknown filter parameters: {', '.join(unknown)}"]
    return errors


def attacks_for(params: Params, *, hidden: QuerySet | None = None) -> QuerySet:
    """The attack results the filter parameters select (all of them without parameters);
    with ``hidden`` (``queues.blind_hidden_attacks``) the filters on human verdicts leave
    out the verdicts blind review hides."""
    base = AttackResult.objects.all()
    if hidden is not None:
        base = with_seen_human_outcome(attacks=base, hidden=hidden, select=False)
    return AttackResultFilter(params_querydict(params), base).qs


def operation_attacks(operation: Operation) -> QuerySet:
    """The operation's attacks; none while it has no rule."""
    params = operation_params(operation)
    return attacks_for(params) if params else AttackResult.objects.none()


# --- evidence seals ------------------------------------------------------------------------------


def evidence_target(evidence: Evidence) -> Target:
    pk = {
        EvidenceKind.ATTACK: evidence.attack_result_id,
        EvidenceKind.CONVERSATION: evidence.conversation_id,
        EvidenceKind.PIECE: evidence.piece_id,
        EvidenceKind.SCORE: evidence.score_id,
    }[evidence.kind]
    return Target(evidence.kind, pk)


@dataclass(frozen=True)
class SealCheck:
    """Whether a piece of evidence still matches its seal."""

    evidence: Evidence
    #: "intact", "broken" (the memory changed), "missing" (it was deleted), "legacy" (an
    #: unkeyed seal that matches, which proves nothing) or "unknown_key" (sealed under a key
    #: not configured); ``memory.findings.seal.SEAL_STATES``.
    state: str
    current_seal: str | None
    changed: tuple[str, ...] = ()

    @property
    def intact(self) -> bool:
        return self.state == "intact"

    @property
    def label(self) -> str:
        """What the finding page says of the seal."""
        return {
            "intact": "Seal intact",
            "broken": "Seal broken",
            "missing": "Memory deleted",
            "legacy": "Legacy seal (unkeyed)",
            "unknown_key": "Seal key not configured",
        }[self.state]

    @property
    def meaning(self) -> str:
        """The state explained in a sentence."""
        return SEAL_STATES[self.state]


def seal_checks(evidence: Sequence[Evidence]) -> list[SealCheck]:
    """Check every piece of evidence against its seal, in a fixed number of queries."""
    targets = {e.pk: evidence_target(e) for e in evidence}
    documents = seal_documents([t for t in targets.values() if t.pk is not None])
    checks = []
    for item in evidence:
        target = targets[item.pk]
        document = documents.get(target) if target.pk is not None else None
        if document is None:
            checks.append(SealCheck(item, "missing", None))
            continue
        state = seal_state(document, seal=item.seal, key_id=item.seal_key_id)
        current = seal_under(document, key_id=item.seal_key_id)
        if state == "unknown_key" and document != item.sealed:
            # The key is gone but the stored copy shows the memory changed all the same.
            state = "broken"
        changed = tuple(changed_paths(item.sealed, document)) if state == "broken" else ()
        checks.append(SealCheck(item, state, current, changed))
    return checks


# --- retests -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Configuration:
    """What a retest must repeat: the objective, the attack configuration and the target.

    PyRIT's eval hash leaves the objective out (contract §10.7), so two attacks of one
    configuration run in the same minute on different objectives share it: the objective's
    SHA-256 tells them apart.
    """

    objective_sha256: str | None
    eval_hash: str | None
    target_hash: str | None


def objective_hash(attack: AttackResult) -> str:
    """The SHA-256 of the attack's objective, as ingestion stores it (computed when absent)."""
    return attack.objective_sha256 or sha256_text(attack.objective)


def attack_configuration(attack: AttackResult) -> Configuration:
    """The objective hash, eval hash and target hash of an attack: what a retest repeats.

    The eval hash is the atomic attack identifier's (where PyRIT stamps it), else the attack
    identifier's; the target is the main conversation's target identifier.
    """
    eval_hash = None
    for identifier in (attack.atomic_attack_identifier, attack.attack_identifier):
        if identifier is not None and identifier.eval_hash:
            eval_hash = identifier.eval_hash
            break
    target = attack.conversation.target_identifier
    return Configuration(
        objective_sha256=objective_hash(attack),
        eval_hash=eval_hash,
        target_hash=target.hash if target is not None else None,
    )


def finding_configuration(finding: Finding) -> Configuration:
    """The configuration ``finding`` was found with (its ``found_*`` fields)."""
    return Configuration(
        objective_sha256=finding.found_objective_sha256,
        eval_hash=finding.found_eval_hash,
        target_hash=finding.found_target_hash,
    )


def retest_suggestions(finding: Finding, *, limit: int = 20) -> QuerySet:
    """Attacks that repeat the finding's objective and configuration against the same target,
    newer than the attack it was found with, not yet recorded as retests and not its
    evidence."""
    found = finding_configuration(finding)
    if not (found.objective_sha256 and found.eval_hash and found.target_hash):
        return AttackResult.objects.none()
    attacks = AttackResult.objects.filter(
        Q(attack_identifier__eval_hash=found.eval_hash)
        | Q(atomic_attack_identifier__eval_hash=found.eval_hash),
        objective_sha256=found.objective_sha256,
        conversation__target_identifier__hash=found.target_hash,
    )
    if finding.found_at is not None:
        attacks = attacks.filter(timestamp__gt=finding.found_at)
    recorded = Retest.objects.filter(finding=finding, attack_result__isnull=False).values(
        "attack_result_id"
    )
    evidence = Evidence.objects.filter(finding=finding, attack_result__isnull=False).values(
        "attack_result_id"
    )
    return (
        attacks.exclude(pk__in=recorded)
        .exclude(pk__in=evidence)
        .with_identifiers()
        .order_by("-timestamp")[:limit]
    )


def findings_by(findings: QuerySet, field: str) -> dict[str, int]:
    """``{value: count}`` of ``field`` over ``findings`` in one query."""
    return {
        row[field]: row["n"] for row in findings.order_by().values(field).annotate(n=Count("pk"))
    }


def finding_queryset() -> QuerySet:
    """Findings with what every list row shows."""
    return Finding.objects.select_related("operation", "owner").annotate(
        evidence_count=Count("evidence", distinct=True)
    )


def as_params(value: Any) -> Params:
    """A query string or a sequence of pairs as filter parameters."""
    if isinstance(value, str):
        return tuple(parse_qsl(value.lstrip("?")))
    return tuple((str(k), str(v)) for k, v in value)


# --- framework tags ------------------------------------------------------------------------


@dataclass(frozen=True)
class TagSuggestion:
    """A framework tag the crosswalk suggests for a finding, and why (``reasons``)."""

    tag: str
    code: str
    title: str
    framework: str
    reasons: tuple[str, ...]


def tag_suggestions(
    findings: Sequence[Finding], *, walk: Crosswalk | None = None
) -> dict[Any, list[TagSuggestion]]:
    """Per finding, the crosswalk's tags it does not carry yet, in framework order.

    A tag is suggested by the finding's harm categories and by the attacks attached as its
    evidence (their targeted harm categories and attack class). Two queries, whatever the
    number of findings: the crosswalk (unless ``walk`` is given) and the evidence attacks.
    """
    walk = walk or crosswalk_current()
    reasons: dict[Any, dict[str, list[str]]] = {f.pk: defaultdict(list) for f in findings}

    def note(finding_id: Any, tags: set[str], why: str) -> None:
        for tag in tags:
            if why not in reasons[finding_id][tag]:
                reasons[finding_id][tag].append(why)

    for finding in findings:
        for harm in finding.harm_categories or []:
            note(finding.pk, walk.harm_tags(harm), f"harm category {harm}")
    attacks = (
        Evidence.objects.filter(finding__in=[f.pk for f in findings], attack_result__isnull=False)
        .values_list(
            "finding_id",
            "attack_result__targeted_harm_categories",
            "attack_result__attack_identifier__class_name",
        )
        .distinct()
        .order_by()
    )
    for finding_id, harms, attack_class in attacks:
        for harm in harms if isinstance(harms, list) else []:
            note(finding_id, walk.harm_tags(harm), f"evidence attack harm category {harm}")
        if attack_class:
            note(finding_id, walk.technique_tags(attack_class), f"evidence attack {attack_class}")
    order = {tag: index for index, tag in enumerate(walk.entries)}
    out: dict[Any, list[TagSuggestion]] = {}
    for finding in findings:
        carried = set(finding.framework_tags or [])
        out[finding.pk] = [
            TagSuggestion(
                tag=tag,
                code=walk.entries[tag].code,
                title=walk.entries[tag].title,
                framework=walk.entries[tag].framework_name,
                reasons=tuple(why),
            )
            for tag, why in sorted(reasons[finding.pk].items(), key=lambda kv: order[kv[0]])
            if tag not in carried
        ]
    return out
