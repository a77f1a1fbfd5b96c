"""Human review: reviewers' verdicts on attacks (human scores on pieces are ``Score`` rows)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from redteam.core import nul
from redteam.core.choices import AttackOutcome
from redteam.core.constraints import choice_check


class HumanOutcome(models.TextChoices):
    """What a reviewer may conclude about an attack; ``error`` is the machine's alone."""

    SUCCESS = AttackOutcome.SUCCESS.value, AttackOutcome.SUCCESS.label
    FAILURE = AttackOutcome.FAILURE.value, AttackOutcome.FAILURE.label
    UNDETERMINED = AttackOutcome.UNDETERMINED.value, AttackOutcome.UNDETERMINED.label


class HumanVerdict(models.Model):
    """A reviewer's verdict on an attack result, with the reason.

    Verdicts are an append-only history: the automated ``AttackResult.outcome`` is never
    changed. The newest verdict is mirrored onto ``AttackResult.human_outcome`` so lists and
    dashboards can filter and count on it without a subquery per row.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    attack_result = models.ForeignKey(
        "memory.AttackResult", on_delete=models.CASCADE, related_name="human_verdicts"
    )
    outcome = nul.CharField(max_length=16, choices=HumanOutcome.choices)
    reason = nul.TextField()
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="human_verdicts",
    )
    # Kept so the history still says who it was after the account is deleted.
    reviewer_name = nul.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    # Who deleted it (with its attack), when and why (docs/deployment.md, "Audit").
    history = HistoricalRecords()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["attack_result", "-created_at"], name="memory_verdict_attack_time")
        ]
        constraints = [
            choice_check("outcome", HumanOutcome, "%(app_label)s_%(class)s_outcome_valid"),
            models.CheckConstraint(
                condition=~models.Q(reason=""), name="%(app_label)s_%(class)s_reason_required"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.outcome} by {self.reviewer_name or 'unknown'}"
