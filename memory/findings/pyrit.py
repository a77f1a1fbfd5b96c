"""PyRIT 1.2's operations, findings and finding evidence, mapped onto Redline's models and back.

The importer keeps PyRIT's rows verbatim (``PyritRecord``: ``OperationEntries``,
``FindingEntries``, ``FindingEvidenceEntries``, alembic ``c8d3e5f7a901``).
:func:`pyrit_findings_map` turns them into operations, findings and sealed evidence, keyed
by PyRIT's ids (``pyrit_id``), so running it again adds only what is new.
:func:`pyrit_findings_rows` writes Redline's operations, findings and evidence back as rows of
those three tables.

PyRIT 1.2 has no status, owner, framework tags or history: imported findings start ``new``.
Its severity is a free word (``severity``, with ``severity_other`` when it is ``other``) and
its harm type one value (``harm_type`` / ``harm_type_other``); the words Redline knows map onto
its severities (:data:`SEVERITY`), anything else becomes ``medium``, and PyRIT's own four
fields are kept in ``Finding.pyrit_fields`` and written back unchanged on export.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from memory.findings.services import EvidenceSpec, evidence_attach, finding_create, operation_save
from memory.models import (
    AttackResult,
    Conversation,
    Evidence,
    EvidenceKind,
    Finding,
    Operation,
    PyritRecord,
    Severity,
)

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

#: PyRIT severity words → Redline severities.
SEVERITY = {
    "critical": Severity.CRITICAL,
    "high": Severity.HIGH,
    "important": Severity.HIGH,
    "medium": Severity.MEDIUM,
    "moderate": Severity.MEDIUM,
    "low": Severity.LOW,
    "info": Severity.INFORMATIONAL,
    "informational": Severity.INFORMATIONAL,
}
#: Redline severities → the word written back for a finding that did not come from PyRIT.
SEVERITY_OUT = {value: value for value in Severity.values}


@dataclass
class MapSummary:
    operations: int = 0
    findings: int = 0
    evidence: int = 0
    skipped: list[str] = field(default_factory=list)


def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if timezone.is_naive(moment) else moment


def _rows(table: str) -> list[dict[str, Any]]:
    return [r.row for r in PyritRecord.objects.filter(table=table).order_by("pk")]


def pyrit_findings_map(*, actor: AbstractBaseUser | None = None) -> MapSummary:
    """Create the operations, findings and evidence PyRIT 1.2 recorded (new ones only)."""
    summary = MapSummary()
    operations = {str(o.pyrit_id): o for o in Operation.objects.filter(pyrit_id__isnull=False)}
    with transaction.atomic():
        for row in _rows("OperationEntries"):
            if row["id"] in operations:
                continue
            name = row["name"]
            if Operation.objects.filter(name=name).exists():
                name = f"{name} (PyRIT {row['id'][:8]})"
            operation = operation_save(
                actor=actor,
                name=name,
                description="Imported from PyRIT.",
                pyrit_operation=row["name"],
                pyrit_id=uuid.UUID(row["id"]),
            )
            Operation.objects.filter(pk=operation.pk).update(
                created_at=_moment(row.get("created_at")) or operation.created_at
            )
            operations[row["id"]] = operation
            summary.operations += 1
        evidence_by_finding: dict[str, list[dict[str, Any]]] = {}
        for row in _rows("FindingEvidenceEntries"):
            evidence_by_finding.setdefault(row["finding_id"], []).append(row)
        findings = {str(f.pyrit_id): f for f in Finding.objects.filter(pyrit_id__isnull=False)}
        known_evidence = {
            str(pk)
            for pk in Evidence.objects.filter(pyrit_id__isnull=False).values_list(
                "pyrit_id", flat=True
            )
        }
        attacks = {
            str(pk)
            for pk in AttackResult.objects.filter(
                pk__in=[
                    uuid.UUID(r["attack_result_id"])
                    for rows in evidence_by_finding.values()
                    for r in rows
                ]
            ).values_list("pk", flat=True)
        }
        conversations = set(
            Conversation.objects.filter(
                conversation_id__in=[
                    r["conversation_id"] for rows in evidence_by_finding.values() for r in rows
                ]
            ).values_list("conversation_id", flat=True)
        )
        for row in _rows("FindingEntries"):
            pyrit_fields = {
                key: row.get(key)
                for key in ("severity", "severity_other", "harm_type", "harm_type_other")
            }
            specs, ids = [], []
            for item in evidence_by_finding.get(row["id"], []):
                if item["id"] in known_evidence:
                    continue
                if item["attack_result_id"] in attacks:
                    specs.append(EvidenceSpec(EvidenceKind.ATTACK, item["attack_result_id"]))
                elif item["conversation_id"] in conversations:
                    specs.append(EvidenceSpec(EvidenceKind.CONVERSATION, item["conversation_id"]))
                else:
                    summary.skipped.append(f"evidence {item['id']}: its memory is not stored")
                    continue
                ids.append(item["id"])
            finding = findings.get(row["id"])
            if finding is None:
                harm = row.get("harm_type_other") or row.get("harm_type")
                finding = finding_create(
                    actor=actor,
                    title=row["title"],
                    description=row.get("description") or "",
                    severity=SEVERITY.get((row.get("severity") or "").lower(), Severity.MEDIUM),
                    operation=operations.get(row["operation_id"]),
                    harm_categories=[harm] if harm else [],
                    evidence=specs,
                    pyrit_id=uuid.UUID(row["id"]),
                    pyrit_fields=pyrit_fields,
                    created_at=_moment(row.get("created_at")),
                )
                summary.findings += 1
            elif specs:
                evidence_attach(finding=finding, evidence=specs, actor=actor)
            for spec, pyrit_id in zip(specs, ids, strict=True):
                Evidence.objects.filter(finding=finding, kind=spec.kind, ref=spec.ref).update(
                    pyrit_id=uuid.UUID(pyrit_id)
                )
            summary.evidence += len(specs)
    return summary


def _when(moment: datetime) -> str:
    """A time as PyRIT's SQLite stores it (naive UTC, microseconds)."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")


def pyrit_findings_rows() -> dict[str, list[dict[str, Any]]]:
    """Redline's operations, findings and evidence as PyRIT 1.2 rows, by table name.

    PyRIT ids are kept for what came from PyRIT; Redline's own ids are used otherwise. Only
    evidence PyRIT can hold (an attack and its conversation) is written; findings without an
    operation are left out, since PyRIT's ``operation_id`` is required.
    """
    operations = list(Operation.objects.order_by("created_at", "id"))
    op_id = {o.pk: str(o.pyrit_id or o.pk) for o in operations}
    findings = list(Finding.objects.filter(operation__isnull=False).order_by("created_at", "id"))
    evidence = Evidence.objects.filter(
        finding__in=findings, attack_result__isnull=False
    ).select_related("conversation", "finding")
    finding_rows = []
    for finding in findings:
        fields = finding.pyrit_fields or {}
        finding_rows.append(
            {
                "id": str(finding.pyrit_id or finding.pk),
                "operation_id": op_id[finding.operation_id],
                "title": finding.title,
                "description": finding.description,
                "severity": fields.get("severity") or SEVERITY_OUT[finding.severity],
                "severity_other": fields.get("severity_other"),
                "harm_type": fields.get("harm_type")
                or (finding.harm_categories[0] if finding.harm_categories else None),
                "harm_type_other": fields.get("harm_type_other"),
                "created_at": _when(finding.created_at),
            }
        )
    return {
        "OperationEntries": [
            {
                "id": op_id[o.pk],
                "name": o.pyrit_operation or o.name,
                "name_key": (o.pyrit_operation or o.name).lower(),
                "created_at": _when(o.created_at),
            }
            for o in operations
        ],
        "FindingEntries": finding_rows,
        "FindingEvidenceEntries": [
            {
                "id": str(e.pyrit_id or e.pk),
                "finding_id": str(e.finding.pyrit_id or e.finding_id),
                "conversation_id": e.conversation.conversation_id if e.conversation else None,
                "attack_result_id": str(e.attack_result_id),
                "attached_at": _when(e.attached_at),
            }
            for e in evidence
        ],
    }
