"""Operations, findings and their sealed evidence: what a red team's work ends in.

PyRIT 1.2 (alembic ``c8d3e5f7a901``) has operations and findings with evidence (title,
description, severity, harm type, the conversations behind it); Redline adds what a team needs
to act on them: a lifecycle, an owner, framework tags, comments, a full history, evidence that
is sealed when attached, and retests. Rows imported from PyRIT keep PyRIT's id (``pyrit_id``)
so importing the same database again changes nothing.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from simple_history.models import HistoricalRecords

from redteam.core import nul
from redteam.core.constraints import choice_check, sha256_or_null_check


class Severity(models.TextChoices):
    """How bad a finding is, most severe first (``Finding.SEVERITY_ORDER`` sorts by it)."""

    CRITICAL = "critical", "Critical"
    HIGH = "high", "High"
    MEDIUM = "medium", "Medium"
    LOW = "low", "Low"
    INFORMATIONAL = "informational", "Informational"


class FindingStatus(models.TextChoices):
    """Where a finding is in its lifecycle (``memory.findings.lifecycle`` has the moves)."""

    NEW = "new", "New"
    CONFIRMED = "confirmed", "Confirmed"
    REPORTED = "reported", "Reported"
    MITIGATED = "mitigated", "Mitigated"
    RETEST_PASSED = "retest_passed", "Retest passed"
    RETEST_FAILED = "retest_failed", "Retest failed"
    FALSE_POSITIVE = "false_positive", "False positive"
    WONT_FIX = "wont_fix", "Won't fix"


class EvidenceKind(models.TextChoices):
    """What a piece of evidence points at."""

    ATTACK = "attack", "Attack"
    CONVERSATION = "conversation", "Conversation"
    PIECE = "piece", "Message piece"
    SCORE = "score", "Score"


class RetestResult(models.TextChoices):
    """A retest passes when the attack no longer succeeds."""

    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"


class Operation(models.Model):
    """An engagement: what was tested, when, by whom, and which attacks belong to it.

    The attacks are chosen by a rule: ``pyrit_operation`` matches PyRIT's ``operation`` label
    convention and PyRIT 1.2's operation column alike (both are indexed as the label
    ``operation=<name>``), and ``attack_filter`` is any query string of the attack list's
    filter (``harm_category=…&timestamp_after=…``). Both given: an attack must match both.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = nul.CharField(max_length=128, unique=True)
    description = nul.TextField(blank=True, default="")
    scope = nul.TextField(blank=True, default="", help_text="What is in and out of scope.")
    target_systems = nul.JSONField(
        default=list, blank=True, help_text="The systems under test, one name each."
    )
    starts_on = models.DateField(null=True, blank=True)
    ends_on = models.DateField(null=True, blank=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="redline_operations"
    )
    pyrit_operation = nul.CharField(
        max_length=128,
        blank=True,
        default="",
        help_text="PyRIT's operation name: attacks labelled operation=<this> belong here.",
    )
    attack_filter = nul.TextField(
        blank=True,
        default="",
        help_text="A query string of the attack list's filters (e.g. harm_category=violence).",
    )
    # PyRIT 1.2's OperationEntries.id, when the operation was imported.
    pyrit_id = models.UUIDField(null=True, blank=True, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    history = HistoricalRecords(m2m_fields=[members])

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(name=""), name="%(app_label)s_%(class)s_name_required"
            ),
            models.CheckConstraint(
                condition=models.Q(starts_on__isnull=True)
                | models.Q(ends_on__isnull=True)
                | models.Q(ends_on__gte=models.F("starts_on")),
                name="%(app_label)s_%(class)s_dates_ordered",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("operation-detail", args=[self.pk])


class Finding(models.Model):
    """A weakness the red team found, with its evidence, lifecycle and advice.

    ``found_objective_sha256`` / ``found_eval_hash`` / ``found_target_hash`` remember the
    objective, attack configuration and target it was found with, so a later attack of the
    same objective and configuration against the same target is offered as a retest.
    ``history`` records every change (who, when, what, and the note given with a status change
    as the change reason).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    operation = models.ForeignKey(
        Operation, on_delete=models.SET_NULL, null=True, blank=True, related_name="findings"
    )
    title = nul.CharField(max_length=255)
    description = nul.TextField(blank=True, default="")
    severity = nul.CharField(max_length=16, choices=Severity.choices, default=Severity.MEDIUM)
    status = nul.CharField(max_length=16, choices=FindingStatus.choices, default=FindingStatus.NEW)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="owned_findings",
    )
    harm_categories = nul.JSONField(default=list, blank=True)
    framework_tags = nul.JSONField(
        default=list, blank=True, help_text='Tags such as "owasp-llm:LLM01", "atlas:AML.T0051".'
    )
    reproduction_steps = nul.TextField(blank=True, default="")
    remediation = nul.TextField(blank=True, default="")
    # The objective and attack configuration it was found with (retests, contract §10.7):
    # PyRIT's eval hash leaves the objective out, so the objective's hash is kept beside it.
    found_objective_sha256 = nul.CharField(max_length=64, null=True, blank=True)
    found_eval_hash = nul.CharField(max_length=64, null=True, blank=True)
    found_target_hash = nul.CharField(max_length=64, null=True, blank=True)
    found_at = models.DateTimeField(null=True, blank=True)
    # PyRIT 1.2's FindingEntries.id and its severity/harm as PyRIT wrote them.
    pyrit_id = models.UUIDField(null=True, blank=True, unique=True)
    pyrit_fields = nul.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    history = HistoricalRecords(excluded_fields=["updated_at"])

    SEVERITY_ORDER = {value: index for index, value in enumerate(Severity.values)}

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # The findings list of an operation, by status.
            models.Index(fields=["operation", "status"], name="memory_finding_op_status_idx"),
            # The findings list: open ones first, newest first.
            models.Index(fields=["status", "-created_at"], name="memory_finding_status_idx"),
            # Retest suggestions: findings waiting for an attack of this configuration.
            models.Index(
                fields=["found_eval_hash"],
                name="memory_finding_eval_idx",
                condition=models.Q(found_eval_hash__isnull=False),
            ),
        ]
        constraints = [
            choice_check("severity", Severity, "%(app_label)s_%(class)s_severity_valid"),
            choice_check("status", FindingStatus, "%(app_label)s_%(class)s_status_valid"),
            models.CheckConstraint(
                condition=~models.Q(title=""), name="%(app_label)s_%(class)s_title_required"
            ),
            sha256_or_null_check(
                "found_objective_sha256", "%(app_label)s_%(class)s_objective_sha256"
            ),
            sha256_or_null_check("found_eval_hash", "%(app_label)s_%(class)s_eval_hash"),
            sha256_or_null_check("found_target_hash", "%(app_label)s_%(class)s_target_hash"),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("finding-detail", args=[self.pk])


class FindingComment(models.Model):
    """A comment on a finding; comments are never edited, only added."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Kept so the comment still says who wrote it after the account is deleted.
    author_name = nul.CharField(max_length=150, blank=True, default="")
    body = nul.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    history = HistoricalRecords()

    class Meta:
        ordering = ["created_at"]
        indexes = [
            # A finding's comments, oldest first.
            models.Index(fields=["finding", "created_at"], name="memory_fcomment_finding_idx")
        ]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(body=""), name="%(app_label)s_%(class)s_body_required"
            )
        ]

    def __str__(self) -> str:
        return f"{self.author_name or 'unknown'}: {self.body[:40]}"


class Evidence(models.Model):
    """A piece of memory attached to a finding, sealed when attached.

    ``seal`` is the HMAC-SHA256, under the key named by ``seal_key_id`` (kept outside the
    database), of a canonical JSON document of what was attached (values, scores, outcome;
    ``memory.findings.seal``; an empty key id: a legacy plain SHA-256) and ``sealed`` that
    document, so the finding
    page can say whether the memory still matches and what changed. The links are cleared if
    the memory is deleted (which needs force and a reason, ``memory_delete``); ``ref`` keeps
    the PyRIT id of what it was. An attack's evidence also links its main conversation, so
    deleting anything inside it is refused the same way.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="evidence")
    kind = nul.CharField(max_length=16, choices=EvidenceKind.choices)
    ref = nul.CharField(max_length=255, help_text="PyRIT's id of what was attached.")
    attack_result = models.ForeignKey(
        "memory.AttackResult",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="finding_evidence",
    )
    conversation = models.ForeignKey(
        "memory.Conversation",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="finding_evidence",
    )
    piece = models.ForeignKey(
        "memory.MessagePiece",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="finding_evidence",
    )
    score = models.ForeignKey(
        "memory.Score",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="finding_evidence",
    )
    note = nul.TextField(blank=True, default="")
    seal = nul.CharField(max_length=64)
    seal_key_id = nul.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="Id of the key the seal was made with; empty: a legacy unkeyed SHA-256.",
    )
    sealed = nul.JSONField(default=dict)
    attached_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    attached_at = models.DateTimeField(default=timezone.now)
    # PyRIT 1.2's FindingEvidenceEntries.id, when imported.
    pyrit_id = models.UUIDField(null=True, blank=True, unique=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["attached_at", "id"]
        constraints = [
            choice_check("kind", EvidenceKind, "%(app_label)s_%(class)s_kind_valid"),
            models.UniqueConstraint(
                fields=["finding", "kind", "ref"], name="%(app_label)s_%(class)s_unique_ref"
            ),
            sha256_or_null_check("seal", "%(app_label)s_%(class)s_seal_sha256"),
        ]
        indexes = [
            # A finding's evidence in attachment order.
            models.Index(fields=["finding", "attached_at"], name="memory_evidence_finding_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.ref}"


class Retest(models.Model):
    """A later attack recorded as a retest of a finding; it moves the finding's status."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="retests")
    attack_result = models.ForeignKey(
        "memory.AttackResult",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="retests",
    )
    attack_ref = nul.CharField(max_length=64)
    # The attack's outcome when recorded (the reviewers' verdict over PyRIT's, if any).
    attack_outcome = nul.CharField(max_length=16)
    result = nul.CharField(max_length=8, choices=RetestResult.choices)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    recorded_at = models.DateTimeField(default=timezone.now)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-recorded_at"]
        constraints = [
            choice_check("result", RetestResult, "%(app_label)s_%(class)s_result_valid"),
            models.UniqueConstraint(
                fields=["finding", "attack_ref"], name="%(app_label)s_%(class)s_once_per_attack"
            ),
        ]
        indexes = [
            # A finding's retests, newest first.
            models.Index(fields=["finding", "-recorded_at"], name="memory_retest_finding_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.result}: {self.attack_ref}"


class Report(models.Model):
    """A report as it was made: the snapshot of every figure in it, and the snapshot's hash.

    ``snapshot`` is the whole report document (``memory.findings.reports``): every format is
    rendered from it, so a report downloaded again is byte-for-byte the one first made, and
    ``snapshot_sha256`` proves it. ``scope_params`` is the attack filter the figures count.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    title = nul.CharField(max_length=255)
    operation = models.ForeignKey(
        Operation, on_delete=models.SET_NULL, null=True, blank=True, related_name="reports"
    )
    scope_query = nul.TextField(blank=True, default="")
    snapshot = nul.JSONField(default=dict)
    snapshot_sha256 = nul.CharField(max_length=64)
    attack_count = models.PositiveIntegerField(default=0)
    finding_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # An operation's reports, newest first.
            models.Index(fields=["operation", "-created_at"], name="memory_report_op_idx"),
        ]
        constraints = [
            sha256_or_null_check("snapshot_sha256", "%(app_label)s_%(class)s_sha256"),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("report-detail", args=[self.pk])
