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


class FactRollup(_Rollup):
    """Attacks per (attack, atomic attack, objective target, scorer of the last score)
    identifier ids and outcomes: what ``aggregates.attack_facts`` groups."""

    strategy = models.BigIntegerField()
    atomic = models.BigIntegerField()
    target = models.BigIntegerField()
    scorer = models.BigIntegerField()

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


class HarmListRollup(_Rollup):
    """Attacks per (attack class, targeted harm-category list as stored) and outcomes: the
    crosswalk tally of the framework breakdowns. ``classed`` 0: no attack identifier.
    ``harms_key`` is the list's text on SQLite and its MD5 on PostgreSQL (whose unique index
    limits a key's size)."""

    classed = models.SmallIntegerField()
    attack_class = models.TextField()
    harms = models.TextField()
    harms_key = models.TextField()

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


class ScoreRollup(models.Model):
    """Scores per (scorer identifier, score type, value bucket, human or not): the score
    distributions. ``bucket`` is the histogram bin as the raw query computes it (0 with
    ``valued`` 0: no numeric value)."""

    scorer = models.BigIntegerField()
    kind = models.CharField(max_length=16)
    valued = models.SmallIntegerField()
    bucket = models.IntegerField()
    human = models.SmallIntegerField()
    n = models.BigIntegerField(default=0)

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


class ConverterRollup(_Rollup):
    """Attacks per converter set and outcomes: ``converters`` is the set of converter
    identifier ids of the attack's main conversation (``Conversation.converter_index``),
    ascending, comma-separated; attacks whose conversation used none are not counted.
    ``converters_key`` is the text on SQLite and its MD5 on PostgreSQL (whose unique index
    limits a key's size)."""

    converters = models.TextField()
    converters_key = models.TextField()

    class Meta:
        db_table = "memory_rollup_converter"
        constraints = [
            models.UniqueConstraint(
                fields=["converters_key", "outcome", "human"], name="memory_rollup_converter_key"
            )
        ]
