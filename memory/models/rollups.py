"""Dashboard rollups: exact counts of the attacks and scores, kept by database triggers.

Each table holds one grouping of the whole memory — one row per distinct key with ``n``, how
many attacks (scores) have it — so the unfiltered dashboard sums a few thousand rows instead
of grouping 100,000 attacks per request (docs/dashboards.md → Rollups). Triggers on the
attack, conversation, score and link tables apply every insert, update and delete to them in
the same transaction, whichever path wrote it (ingestion, the import's direct writes, push,
uploads, verdicts, admin edits, deletes), so they are exact at every commit. The trigger SQL,
the rebuild from the raw tables and the check are in :mod:`memory.models.rollup_sql`.

Missing keys are stored as a sentinel, because a unique index treats NULLs as distinct on
SQLite and the triggers upsert (``ON CONFLICT``): identifier, label and harm-category ids as
0, a missing human outcome or objective hash as ``""``. Rows whose ``n`` fell to 0 stay until
the next rebuild; readers skip them.
"""

from __future__ import annotations

from django.db import models


class _Rollup(models.Model):
    outcome = models.CharField(max_length=16)
    human = models.CharField(max_length=16, default="")
    n = models.BigIntegerField(default=0)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.n} × {self.outcome}/{self.human or '-'}"


class _FactKey(_Rollup):
    strategy = models.BigIntegerField()
    atomic = models.BigIntegerField()
    target = models.BigIntegerField()
    scorer = models.BigIntegerField()

    class Meta:
        abstract = True


class FactRollup(_FactKey):
    """Attacks per (attack, atomic attack, objective target, scorer of the last score)
    identifier ids and outcomes: what ``aggregates.attack_facts`` groups."""

    class Meta:
        db_table = "memory_rollup_fact"
        constraints = [
            models.UniqueConstraint(
                fields=["strategy", "atomic", "target", "scorer", "outcome", "human"],
                name="memory_rollup_fact_key",
            )
        ]


class HourRollup(_Rollup):
    """Attacks per UTC hour of their timestamp (``YYYY-MM-DD HH``) and outcomes."""

    hour = models.CharField(max_length=13)

    class Meta:
        db_table = "memory_rollup_hour"
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "outcome", "human"], name="memory_rollup_hour_key"
            )
        ]


class ObjectiveRollup(_Rollup):
    """Attacks per objective hash and outcomes (the seed-dataset breakdown)."""

    objective = models.CharField(max_length=64)

    class Meta:
        db_table = "memory_rollup_objective"
        constraints = [
            models.UniqueConstraint(
                fields=["objective", "outcome", "human"], name="memory_rollup_objective_key"
            )
        ]


class _HarmListKey(_Rollup):
    classed = models.SmallIntegerField()
    attack_class = models.TextField()
    harms = models.TextField()
    harms_key = models.TextField()

    class Meta:
        abstract = True


class HarmListRollup(_HarmListKey):
    """Attacks per (attack class, targeted harm-category list as stored) and outcomes: the
    crosswalk tally of the framework breakdowns. ``classed`` 0: no attack identifier.
    ``harms_key`` is the list's text on SQLite and its MD5 on PostgreSQL (whose unique index
    limits a key's size)."""

    class Meta:
        db_table = "memory_rollup_harmlist"
        constraints = [
            models.UniqueConstraint(
                fields=["classed", "attack_class", "harms_key", "outcome", "human"],
                name="memory_rollup_harmlist_key",
            )
        ]


class LabelRollup(_Rollup):
    """Attacks per label (id) and outcomes."""

    label = models.BigIntegerField()

    class Meta:
        db_table = "memory_rollup_label"
        constraints = [
            models.UniqueConstraint(
                fields=["label", "outcome", "human"], name="memory_rollup_label_key"
            )
        ]


class HarmRollup(_Rollup):
    """Attacks per harm category (id; 0: attacks linked to none) and outcomes."""

    harm = models.BigIntegerField()

    class Meta:
        db_table = "memory_rollup_harm"
        constraints = [
            models.UniqueConstraint(
                fields=["harm", "outcome", "human"], name="memory_rollup_harm_key"
            )
        ]


class _ScoreKey(models.Model):
    scorer = models.BigIntegerField()
    kind = models.CharField(max_length=16)
    valued = models.SmallIntegerField()
    bucket = models.IntegerField()
    human = models.SmallIntegerField()
    n = models.BigIntegerField(default=0)

    class Meta:
        abstract = True


class ScoreRollup(_ScoreKey):
    """Scores per (scorer identifier, score type, value bucket, human or not): the score
    distributions. ``bucket`` is the histogram bin as the raw query computes it (0 with
    ``valued`` 0: no numeric value)."""

    class Meta:
        db_table = "memory_rollup_score"
        constraints = [
            models.UniqueConstraint(
                fields=["scorer", "kind", "valued", "bucket", "human"],
                name="memory_rollup_score_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.n} × scorer {self.scorer} {self.kind} bin {self.bucket}"


class CountRollup(models.Model):
    """Rows of a raw table, by name: ``conversations`` on both databases, ``pieces`` on
    PostgreSQL only (SQLite counts its pieces faster than a trigger per piece would cost its
    ingestion). The volume part's whole-memory counts."""

    name = models.CharField(max_length=32, unique=True)
    n = models.BigIntegerField(default=0)

    class Meta:
        db_table = "memory_rollup_count"

    def __str__(self) -> str:
        return f"{self.n} {self.name}"


class _ConverterKey(_Rollup):
    converters = models.TextField()
    converters_key = models.TextField()

    class Meta:
        abstract = True


class ConverterRollup(_ConverterKey):
    """Attacks per converter set and outcomes: ``converters`` is the set of converter
    identifier ids of the attack's main conversation (``Conversation.converter_index``),
    ascending, comma-separated; attacks whose conversation used none are not counted.
    ``converters_key`` is the text on SQLite and its MD5 on PostgreSQL (whose unique index
    limits a key's size)."""

    class Meta:
        db_table = "memory_rollup_converter"
        constraints = [
            models.UniqueConstraint(
                fields=["converters_key", "outcome", "human"], name="memory_rollup_converter_key"
            )
        ]


# --- scoped by one label ------------------------------------------------------------------------
#
# The same groupings for the attacks that carry one label, ``scope`` (a label id): an attack
# with three labels counts once in each of their scopes. A dashboard filtered by one
# ``labels=key:value`` reads these (docs/dashboards.md → Rollups). Kept by their own triggers
# (migration 0026), next to the whole memory's, which they leave as they were.


class _Scoped(_Rollup):
    scope = models.BigIntegerField()

    class Meta:
        abstract = True


class LabelFactRollup(_Scoped, _FactKey):
    """:class:`FactRollup` per label: the attacks that carry label ``scope``."""

    class Meta:
        db_table = "memory_rollup_label_fact"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "strategy", "atomic", "target", "scorer", "outcome", "human"],
                name="memory_rollup_label_fact_key",
            )
        ]


class LabelHourRollup(_Scoped):
    """:class:`HourRollup` per label."""

    hour = models.CharField(max_length=13)

    class Meta:
        db_table = "memory_rollup_label_hour"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "hour", "outcome", "human"], name="memory_rollup_label_hour_key"
            )
        ]


class LabelObjectiveRollup(_Scoped):
    """:class:`ObjectiveRollup` per label."""

    objective = models.CharField(max_length=64)

    class Meta:
        db_table = "memory_rollup_label_objective"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "objective", "outcome", "human"],
                name="memory_rollup_label_objective_key",
            )
        ]


class LabelHarmListRollup(_Scoped, _HarmListKey):
    """:class:`HarmListRollup` per label."""

    class Meta:
        db_table = "memory_rollup_label_harmlist"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "classed", "attack_class", "harms_key", "outcome", "human"],
                name="memory_rollup_label_harmlist_key",
            )
        ]


class LabelPairRollup(_Scoped):
    """:class:`LabelRollup` per label: the attacks that carry both ``scope`` and ``label``
    (the label breakdown of a page filtered by one label)."""

    label = models.BigIntegerField()

    class Meta:
        db_table = "memory_rollup_label_label"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "label", "outcome", "human"], name="memory_rollup_label_label_key"
            )
        ]


class LabelHarmRollup(_Scoped):
    """:class:`HarmRollup` per label."""

    harm = models.BigIntegerField()

    class Meta:
        db_table = "memory_rollup_label_harm"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "harm", "outcome", "human"], name="memory_rollup_label_harm_key"
            )
        ]


class LabelConverterRollup(_Scoped, _ConverterKey):
    """:class:`ConverterRollup` per label."""

    class Meta:
        db_table = "memory_rollup_label_converter"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "converters_key", "outcome", "human"],
                name="memory_rollup_label_converter_key",
            )
        ]


class LabelConversationRollup(models.Model):
    """How often each conversation is in a label's scope (migration 0027): per (conversation,
    label ``scope``), the label's attacks whose main conversation it is plus their related
    conversation rows naming it. While ``n`` is above 0 the conversation, its pieces and its
    scores count in the label's volume and score distributions (:class:`LabelCountRollup`,
    :class:`LabelScoreRollup`), as a filtered scope's conversations do."""

    conversation = models.BigIntegerField()
    scope = models.BigIntegerField()
    n = models.BigIntegerField(default=0)

    class Meta:
        db_table = "memory_rollup_label_conversation"
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "scope"], name="memory_rollup_label_conversation_key"
            )
        ]

    def __str__(self) -> str:
        return f"conversation {self.conversation} × {self.n} in label {self.scope}"


class LabelScoreRollup(_ScoreKey):
    """:class:`ScoreRollup` per label: the scores of the conversations in the label's scope."""

    scope = models.BigIntegerField()

    class Meta:
        db_table = "memory_rollup_label_score"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "scorer", "kind", "valued", "bucket", "human"],
                name="memory_rollup_label_score_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.n} × scorer {self.scorer} {self.kind} bin {self.bucket} in {self.scope}"


class LabelCountRollup(models.Model):
    """Per label, ``conversations`` in its scope and their ``pieces`` (the sum of their
    ``piece_count``): the volume part of a page filtered by one label."""

    scope = models.BigIntegerField()
    name = models.CharField(max_length=32)
    n = models.BigIntegerField(default=0)

    class Meta:
        db_table = "memory_rollup_label_count"
        constraints = [
            models.UniqueConstraint(fields=["scope", "name"], name="memory_rollup_label_count_key")
        ]

    def __str__(self) -> str:
        return f"{self.n} {self.name} in label {self.scope}"
