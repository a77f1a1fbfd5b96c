"""Scores and the loose content PyRIT 1.1.0 can score (contract §6)."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable

from django.conf import settings
from django.db import models
from django.db.models import OuterRef, Q, Subquery
from simple_history.models import HistoricalRecords

from memory.models.conversations import MessagePiece
from memory.models.identifiers import ComponentIdentifier
from redteam.core import nul
from redteam.core.bulk import chunked
from redteam.core.choices import PromptDataType, ScoreStatus, ScoreType
from redteam.core.constraints import UniqueIndex, choice_check, partial_index, sha256_or_null_check
from redteam.core.scoring import score_numeric_value


class ScorableContent(models.Model):
    """Loose content scored outside any conversation (PyRIT 1.1.0 ``ScorableContentEntries``)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    value = nul.TextField()
    value_sha256 = nul.CharField(max_length=64, null=True, blank=True)
    data_type = nul.CharField(
        max_length=32, choices=PromptDataType.choices, default=PromptDataType.TEXT
    )
    timestamp = models.DateTimeField()
    # Keys a client sent that PyRIT's row does not define (e.g. a ``ContentScorable`` dump's
    # ``scorable_type``), given back on export.
    extra = nul.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            choice_check("data_type", PromptDataType, "%(app_label)s_%(class)s_data_type_valid"),
            sha256_or_null_check("value_sha256", "%(app_label)s_%(class)s_sha256_hex"),
        ]

    def __str__(self) -> str:
        return f"{self.data_type}: {self.value[:40]}"


class ScoreQuerySet(models.QuerySet):
    """Reads on scores."""

    def for_pieces(self, original_prompt_ids: Iterable[uuid.UUID]) -> ScoreQuerySet:
        """Scores visible on pieces with these ``original_prompt_id`` values (contract §6.4)."""
        return self.filter(message_piece_id__in=list(original_prompt_ids)).select_related(
            "scorer_class_identifier"
        )

    def adopt_homes(self, piece_ids: Collection[uuid.UUID]) -> int:
        """Give scores without a home that name one of these (new) pieces the piece's
        conversation (``Score.conversation``); returns how many.

        Ingestion sets the home when a score is written and its piece is known; this adopts
        scores stored before their piece. One ``UPDATE`` per 30,000 pieces, searching only the
        partial index of homeless scores, so it costs next to nothing when, as usual, scores
        arrive with or after their pieces.
        """
        home = MessagePiece.objects.filter(pk=OuterRef("message_piece_id")).values(
            "message__conversation_id"
        )[:1]
        adopted = 0
        for chunk in chunked(piece_ids):
            adopted += self.filter(conversation__isnull=True, message_piece_id__in=chunk).update(
                conversation_id=Subquery(home)
            )
        return adopted


class Score(models.Model):
    """A scorer's judgement of one piece (or of loose content): PyRIT's ``Score``.

    ``message_piece_id`` is the raw id PyRIT stored. It is not a foreign key on purpose: PyRIT
    joins it against pieces' ``original_prompt_id`` (so every copy of a duplicated piece shows
    the score), and scores of pieces that were never stored must still be kept (a dangling
    link). ``numeric_value`` is the value as a number, derived on write, so aggregates and the
    check constraints can read it. ``conversation`` is the score's home: the conversation of
    the piece whose id it names, kept by ingestion (also when the piece arrives after the score)
    so dashboards count the scores behind a set of conversations without a per-piece join.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    score_value = nul.TextField(null=True, blank=True)
    numeric_value = models.FloatField(null=True, blank=True, editable=False)
    score_value_description = nul.TextField(null=True, blank=True)
    score_type = nul.CharField(max_length=16, choices=ScoreType.choices)
    score_category = nul.JSONField(null=True, blank=True)
    score_rationale = nul.TextField(null=True, blank=True)
    score_metadata = nul.JSONField(default=dict, blank=True)
    scorer_class_identifier = models.ForeignKey(
        ComponentIdentifier, on_delete=models.PROTECT, related_name="scores"
    )
    message_piece_id = models.UUIDField(null=True, blank=True)
    conversation = models.ForeignKey(
        "memory.Conversation",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="home_scores",
        db_index=False,  # memory_score_conv_dash_idx starts with it
    )
    timestamp = models.DateTimeField()
    # The objective the score was judged against: PyRIT ≤ 1.1's ``objective`` column, and from
    # 1.2 on the ``objective`` of ``scored_expectation`` (PyRIT's read-only view of it).
    objective = nul.TextField(null=True, blank=True)
    # PyRIT 1.2's whole versioned expectation (objective plus typed conditions), verbatim;
    # null for older scores, which carried only the objective.
    scored_expectation = nul.JSONField(null=True, blank=True)
    status = nul.CharField(max_length=16, choices=ScoreStatus.choices, default=ScoreStatus.COMPLETE)
    scorable = nul.JSONField(null=True, blank=True)
    scorable_content = models.ForeignKey(
        ScorableContent,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="scores",
        db_index=False,  # partial index in Meta: only 1.x non-piece scores have one
    )
    pyrit_version = nul.CharField(max_length=32, blank=True, default="")
    extra = nul.JSONField(default=dict, blank=True)
    # Set only on human scores recorded in Redline (scorer identity ``HumanScorer``).
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="human_scores",
        db_index=False,  # partial index in Meta: only human scores have one
    )

    objects = ScoreQuerySet.as_manager()
    # Who changed or deleted it, when and why (docs/deployment.md, "Audit").
    history = HistoricalRecords()

    class Meta:
        constraints = [
            choice_check("score_type", ScoreType, "%(app_label)s_%(class)s_type_valid"),
            choice_check("status", ScoreStatus, "%(app_label)s_%(class)s_status_valid"),
            # 1.1.0: undetermined <=> no value.
            models.CheckConstraint(
                condition=Q(status=ScoreStatus.UNDETERMINED, score_value__isnull=True)
                | Q(status=ScoreStatus.COMPLETE, score_value__isnull=False),
                name="%(app_label)s_%(class)s_value_matches_status",
            ),
            # true_false values are "true"/"false" in any case, and numeric_value agrees.
            models.CheckConstraint(
                condition=~Q(score_type=ScoreType.TRUE_FALSE)
                | Q(score_value__isnull=True, numeric_value__isnull=True)
                | Q(score_value__iexact="true", numeric_value__isnull=False, numeric_value=1.0)
                | Q(score_value__iexact="false", numeric_value__isnull=False, numeric_value=0.0),
                name="%(app_label)s_%(class)s_true_false_value",
            ),
            # float_scale values lie in [0, 1].
            models.CheckConstraint(
                condition=~Q(score_type=ScoreType.FLOAT_SCALE)
                | Q(score_value__isnull=True, numeric_value__isnull=True)
                | Q(numeric_value__isnull=False, numeric_value__gte=0.0, numeric_value__lte=1.0),
                name="%(app_label)s_%(class)s_float_scale_range",
            ),
        ]
        indexes = [
            # Scores of pieces (WHERE message_piece_id IN (original_prompt_ids…)), and score
            # distributions and counts of the whole memory, read from the index alone.
            models.Index(
                fields=[
                    "message_piece_id",
                    "scorer_class_identifier",
                    "score_type",
                    "numeric_value",
                    "reviewer",
                ],
                name="memory_score_piece_dash_idx",
            ),
            # Scorer breakdown: an attack's last score to its scorer.
            UniqueIndex(
                fields=["id", "scorer_class_identifier"], name="memory_score_scorer_id_idx"
            ),
            # Score lists and trends by time.
            models.Index(fields=["timestamp"], name="memory_score_timestamp_idx"),
            # The scores behind a set of conversations, and their distributions per scorer
            # (dashboards), read from the index alone.
            models.Index(
                fields=[
                    "conversation",
                    "scorer_class_identifier",
                    "score_type",
                    "numeric_value",
                    "reviewer",
                ],
                name="memory_score_conv_dash_idx",
            ),
            # Scores whose piece has not arrived yet, found again when it does.
            models.Index(
                fields=["message_piece_id"],
                condition=Q(conversation__isnull=True),
                name="memory_score_homeless_idx",
            ),
            # Partial: most scores are automated and scored a piece.
            partial_index("reviewer", "memory_score_reviewer_idx"),
            partial_index("scorable_content", "memory_score_scorable_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.score_type}={self.score_value} ({self.scorer_class_identifier_id})"

    def save(self, *args, **kwargs) -> None:
        """Derive ``numeric_value`` from the value, so it can never disagree with it, and find
        the score's home conversation when it is saved without one."""
        self.numeric_value = score_numeric_value(self.score_type, self.score_value)
        if self.conversation_id is None and self.message_piece_id is not None:
            homes = MessagePiece.objects.conversation_pks([self.message_piece_id])
            self.conversation_id = homes.get(self.message_piece_id)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "numeric_value" not in update_fields:
            kwargs["update_fields"] = [*update_fields, "numeric_value"]
        super().save(*args, **kwargs)

    def get_value(self) -> bool | float | str | None:
        """PyRIT's ``get_value()``: a bool for true_false, a float for float_scale."""
        if self.score_value is None:
            return None
        if self.score_type == ScoreType.TRUE_FALSE:
            return self.score_value.lower() == "true"
        if self.score_type == ScoreType.FLOAT_SCALE:
            return float(self.score_value)
        return self.score_value
