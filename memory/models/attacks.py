"""Attack results and their related conversations (contract §7)."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models
from django.db.models.deletion import Collector
from simple_history.models import HistoricalRecords

from memory.models.conversations import Conversation, MessagePiece
from memory.models.identifiers import ComponentIdentifier
from memory.models.push import PushSource
from memory.models.scenarios import ScenarioResult
from memory.models.scores import Score
from memory.models.tags import HarmCategory, Label
from redteam.core import nul
from redteam.core.choices import AttackOutcome, ConversationType, TimestampSource
from redteam.core.constraints import UniqueIndex, choice_check, sha256_or_null_check


def clear_last_score(collector: Collector, field: models.Field, sub_objs: Any, using: str) -> None:
    """``on_delete`` of ``AttackResult.last_score``: SET NULL on it and on ``last_scorer``.

    The scorer is cleared first: Django runs the field updates in the order they were added,
    each selecting the attacks by ``last_score``, so clearing ``last_score`` first would leave
    no attack for the second update to find.
    """
    collector.add_field_update(AttackResult._meta.get_field("last_scorer"), None, sub_objs)
    collector.add_field_update(field, None, sub_objs)


# Like SET_NULL: the attacks are updated by a query, never loaded.
clear_last_score.lazy_sub_objs = True  # type: ignore[attr-defined]


class AttackResultQuerySet(models.QuerySet):
    """Reads on attack results."""

    def with_identifiers(self) -> AttackResultQuerySet:
        """Join what every list row shows: the main conversation and both identifiers."""
        return self.select_related("conversation", "attack_identifier", "atomic_attack_identifier")


class AttackResult(models.Model):
    """The outcome of one attack on one objective: PyRIT's ``AttackResult``.

    ``id`` is PyRIT's ``attack_result_id``. ``attack_identifier`` is the attack strategy —
    taken from the 0.10–0.14 column or from inside the atomic identifier (both nesting styles,
    contract §9.2) — so every version is filterable the same way; the atomic identifier is kept
    as it came. Labels and harm categories are PyRIT 1.x fields; for 0.x data they are the
    union of the conversation's piece values.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        Conversation, on_delete=models.PROTECT, related_name="attack_results"
    )
    objective = nul.TextField()
    objective_sha256 = nul.CharField(max_length=64, null=True, blank=True)
    attack_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="attack_results",
    )
    atomic_attack_identifier = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="atomic_attack_results",
    )
    last_response = models.ForeignKey(
        MessagePiece, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The automated score (PyRIT ≤ 1.1 ``last_score``, 1.2 ``automated_score_id``).
    last_score = models.ForeignKey(
        Score, on_delete=clear_last_score, null=True, blank=True, related_name="+"
    )
    # Redline's own, not PyRIT's: the scorer of ``last_score``, copied on every write that
    # sets it (a score's scorer never changes) and cleared with it, so the scorer filters
    # read an index of attacks instead of the scorer's scores (docs/performance.md,
    # "Attack list"). Never exported.
    last_scorer = models.ForeignKey(
        ComponentIdentifier,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
        db_index=False,  # (last_scorer, -timestamp, -id) in Meta
    )
    # PyRIT 1.2's human score of the result (``human_score_id``), kept apart from the automated
    # one. Not Redline's own verdicts (``HumanVerdict``), which ingestion never writes.
    human_score = models.ForeignKey(
        Score,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # partial index in Meta: few results carry one
    )
    executed_turns = models.PositiveIntegerField(default=0)
    execution_time_ms = models.PositiveBigIntegerField(default=0)
    outcome = nul.CharField(
        max_length=16, choices=AttackOutcome.choices, default=AttackOutcome.UNDETERMINED
    )
    outcome_reason = nul.TextField(null=True, blank=True)
    metadata = nul.JSONField(default=dict, blank=True)
    timestamp = models.DateTimeField()
    # Derived timestamps are marked, so a reader knows PyRIT did not record the time.
    timestamp_source = nul.CharField(
        max_length=16, choices=TimestampSource.choices, default=TimestampSource.PYRIT
    )
    labels = nul.JSONField(default=dict, blank=True)
    targeted_harm_categories = nul.JSONField(default=list, blank=True)
    label_index = models.ManyToManyField(
        Label, blank=True, related_name="attack_results", through="AttackLabel"
    )
    harm_category_index = models.ManyToManyField(
        HarmCategory, blank=True, related_name="attack_results"
    )
    error_message = nul.TextField(null=True, blank=True)
    error_type = nul.CharField(max_length=255, null=True, blank=True)
    error_traceback = nul.TextField(null=True, blank=True)
    retry_events = nul.JSONField(default=list, blank=True)
    total_retries = models.PositiveIntegerField(default=0)
    attribution_parent = models.ForeignKey(
        ScenarioResult,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="attack_results",
    )
    attribution_data = nul.JSONField(null=True, blank=True)
    # PyRIT 1.2 attribution columns (before 1.2, the ``operator`` / ``operation`` labels).
    operator = nul.CharField(max_length=128, null=True, blank=True)
    operation = nul.CharField(max_length=128, null=True, blank=True)
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    extra = nul.JSONField(default=dict, blank=True)
    # The push that created it (redline-push); its index serves the "pushed from" filter.
    push_source = models.ForeignKey(
        PushSource,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="attack_results",
    )
    # The newest human verdict (see ``HumanVerdict``), mirrored here for lists and dashboards;
    # ingestion never writes these, so re-sending PyRIT data keeps the reviewers' word.
    human_outcome = nul.CharField(
        max_length=16, choices=AttackOutcome.choices, null=True, blank=True
    )
    human_verdict_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AttackResultQuerySet.as_manager()
    # Who changed or deleted it, when and why (docs/deployment.md, "Audit").
    history = HistoricalRecords(excluded_fields=["updated_at", "last_scorer"])

    class Meta:
        constraints = [
            choice_check("outcome", AttackOutcome, "%(app_label)s_%(class)s_outcome_valid"),
            choice_check(
                "timestamp_source", TimestampSource, "%(app_label)s_%(class)s_ts_source_valid"
            ),
            sha256_or_null_check("objective_sha256", "%(app_label)s_%(class)s_objective_sha256"),
        ]
        indexes = [
            # Attack list, default order: newest first.
            models.Index(fields=["-timestamp"], name="memory_attack_timestamp_idx"),
            # Outcome filter and ASR counts over a date range.
            models.Index(fields=["outcome", "timestamp"], name="memory_attack_outcome_idx"),
            # "Has human verdict" filter and human-outcome counts: few rows carry one.
            models.Index(
                fields=["human_outcome"],
                name="memory_attack_human_idx",
                condition=models.Q(human_outcome__isnull=False),
            ),
            # Dashboards (docs/dashboards.md): each widget groups 100,000 attacks by one narrow
            # key and counts outcomes, reading an index that holds exactly those columns
            # instead of rows dragging their JSON and text along. Every attack-level widget
            # and date-range filter (scanned, or range-searched by time):
            models.Index(
                fields=[
                    "timestamp",
                    "outcome",
                    "human_outcome",
                    "attack_identifier",
                    "atomic_attack_identifier",
                    "conversation",
                    "last_score",
                ],
                name="memory_attack_dash_idx",
            ),
            # Converter breakdown: converter links reach attacks through their conversation.
            models.Index(
                fields=["conversation", "outcome", "human_outcome", "id"],
                name="memory_attack_conv_dash_idx",
            ),
            # Label and harm-category breakdowns: link tables reach attacks by id.
            UniqueIndex(
                fields=["id", "outcome", "human_outcome"], name="memory_attack_id_dash_idx"
            ),
            # Deleting a score clears the human score of the results naming it (SET_NULL):
            # found here; partial, since few results carry one.
            models.Index(
                fields=["human_score"],
                name="memory_attack_human_score_idx",
                condition=models.Q(human_score__isnull=False),
            ),
            # Seed-dataset breakdown and the dataset filter: attacks by objective hash.
            models.Index(
                fields=["objective_sha256", "outcome", "human_outcome"],
                name="memory_attack_objective_idx",
            ),
            # Filtered dashboards reach the conversations of the attacks in scope by attack id.
            # Narrow on purpose: widening memory_attack_id_dash_idx instead made it SQLite's
            # choice for unfiltered scans, which then doubled (migration 0008).
            UniqueIndex(fields=["id", "conversation"], name="memory_attack_conv_by_id_idx"),
            # The scorer filters (``scorer_class``, ``scorer_hash``) in the list's order, newest
            # first with the id as tie-break: a page's keys are read from here alone and stop at
            # its size. With the id left out, a class of two scorer identifiers made SQLite read
            # every match's row to sort on it (49 ms per 22,700 matches). Also the attacks an
            # identifier's deletion clears.
            models.Index(
                fields=["last_scorer", "-timestamp", "-id"], name="memory_attack_scorer_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.outcome}: {self.objective[:60]}"

    @property
    def attack_result_id(self) -> uuid.UUID:
        """PyRIT's name for the primary key."""
        return self.id


class AttackLabel(models.Model):
    """One (attack result, label) pair of ``AttackResult.label_index``.

    The table Django made for the many-to-many (migration 0011 took it over unchanged) with
    one index of its own: (label, attack) lets a label filter read the attack ids straight
    from the index. Django's single-column label index had to look each link row up for its
    attack id, most of a label-filtered dashboard widget's time (docs/dashboards.md).
    """

    attackresult = models.ForeignKey(AttackResult, on_delete=models.CASCADE)
    label = models.ForeignKey(Label, on_delete=models.CASCADE, db_index=False)

    class Meta:
        db_table = "memory_attackresult_label_index"
        unique_together = [("attackresult", "label")]
        indexes = [
            models.Index(fields=["label", "attackresult"], name="memory_attack_label_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.attackresult_id}: {self.label_id}"


class RelatedConversation(models.Model):
    """A helper conversation of an attack (adversarial chat, pruned branch, scorer, converter).

    PyRIT compares references by conversation id only, hence one row per (attack, conversation).
    """

    attack_result = models.ForeignKey(
        AttackResult, on_delete=models.CASCADE, related_name="related_conversations"
    )
    conversation = models.ForeignKey(
        Conversation, on_delete=models.PROTECT, related_name="related_to_attacks"
    )
    conversation_type = nul.CharField(max_length=16, choices=ConversationType.choices)
    description = nul.TextField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["attack_result", "conversation"],
                name="%(app_label)s_%(class)s_unique_reference",
            ),
            choice_check(
                "conversation_type", ConversationType, "%(app_label)s_%(class)s_type_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.conversation_type}: {self.conversation_id}"
