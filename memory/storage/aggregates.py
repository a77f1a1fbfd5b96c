"""Dashboard aggregates: one function per widget, each a fixed number of queries.

Every widget counts the attacks of a :class:`Scope` — the attack results left by the shared
``AttackResultFilter`` — by outcome, per group. Each group carries the filter parameters that
select exactly its attacks (``Group.params``), so a drill-down link is the scope's own
parameters plus the group's. Where no parameter of the filter contract can express a group
("no harm category", "no model name"), ``params`` is ``None`` and the page shows the number
without a link.

Outcome source: ``automated`` counts PyRIT's ``outcome``; ``human`` counts the newest human
verdict where there is one, else the automated outcome (the filter's ``effective_outcome``).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple

from django.core.exceptions import EmptyResultSet, ValidationError
from django.db import connections
from django.db.models import (
    BigIntegerField,
    Case,
    CharField,
    Count,
    Exists,
    Expression,
    ExpressionWrapper,
    F,
    IntegerField,
    Max,
    Min,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    UUIDField,
    Value,
    When,
)
from django.db.models.functions import Cast, Coalesce, Floor, Least, Substr, TruncDay, TruncHour
from django.utils import timezone

from memory.models import (
    AttackLabel,
    AttackResult,
    ComponentIdentifier,
    Conversation,
    FactRollup,
    Label,
    LabelFactRollup,
    LabelObjectiveRollup,
    MessagePiece,
    ObjectiveRollup,
    RelatedConversation,
    Score,
    label_value_sha256,
)
from memory.storage.crosswalk import Crosswalk, crosswalk_current
from redteam.core.choices import AttackOutcome, ScoreType
from redteam.core.filters import LabelPairsField
from redteam.core.nul import escape_nul, unescape_nul
from redteam.core.stats import (
    HISTOGRAM_BINS,
    Agreement,
    OutcomeCounts,
    agreement,
)

Params = tuple[tuple[str, str], ...]


class Source(StrEnum):
    """Whose judgement of an attack the dashboard counts."""

    AUTOMATED = "automated"
    HUMAN = "human"


OUTCOME_PARAM = {Source.AUTOMATED: "outcome", Source.HUMAN: "effective_outcome"}
#: Each source as people read it (the dashboards' choice, the reports' statement).
SOURCE_LABELS = {
    Source.AUTOMATED: "Automated (PyRIT's outcome)",
    Source.HUMAN: "Human where reviewed",
}


def human_expression(hidden: QuerySet | None = None, prefix: str = "") -> Expression:
    """The newest human verdict's outcome, None on the attacks of ``hidden`` (those whose
    verdicts blind review hides from the reader: ``queues.blind_hidden_attacks``)."""
    column = F(f"{prefix}human_outcome")
    if hidden is None:
        return column
    return Case(
        When(**{f"{prefix}pk__in": hidden}, then=Value(None)),
        default=column,
        output_field=CharField(),
    )


def outcome_expression(
    source: Source, prefix: str = "", hidden: QuerySet | None = None
) -> Expression:
    """The outcome column (automated) or the newest human verdict over it (human), leaving
    out the verdicts blind review hides (``hidden``, see :func:`human_expression`).

    ``prefix`` is the path to the attack from another model (``"attackresult__"``).
    """
    if source == Source.HUMAN and hidden is not None:
        return Coalesce(
            human_expression(hidden, prefix), F(f"{prefix}outcome"), output_field=CharField()
        )
    if source == Source.HUMAN:
        return Coalesce(F(f"{prefix}human_outcome"), F(f"{prefix}outcome"))
    return F(f"{prefix}outcome")


def id_key(path: str) -> Expression:
    """A foreign-key column to group by, written ``column + 0``.

    The ``+ 0`` stops SQLite from walking the column's own (non-covering) index to avoid a
    sort; it then scans the narrow covering dashboard index instead, 4× less work at 100,000
    attacks (see ``docs/dashboards.md``). PostgreSQL hashes either way.
    """
    return ExpressionWrapper(F(path) + 0, output_field=BigIntegerField())


@dataclass(frozen=True)
class Scope:
    """What every widget aggregates: the filtered attacks and how to count and link them.

    ``params`` are the filter parameters that produced ``attacks`` (name, raw value), in
    request order; drill-down links start from them.
    """

    attacks: QuerySet
    source: Source = Source.AUTOMATED
    params: Params = ()
    #: What several widgets of one request read alike (:func:`attack_facts`, identifier
    #: names), kept for this scope object only: each request starts from the database.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: Whether an unfiltered scope may read the rollups the triggers keep (False: group the
    #: raw tables, as a filtered scope does; the tests compare the two).
    rollups: bool = field(default=True, compare=False)
    #: The attacks whose human verdicts blind review hides from the reader
    #: (``queues.blind_hidden_attacks``): counted by their automated outcome, never from the
    #: rollups (which hold every verdict).
    hidden: QuerySet | None = field(default=None, compare=False)

    @property
    def from_rollups(self) -> bool:
        """Whether the widgets read the whole memory's rollup tables
        (:mod:`memory.models.rollups`): the scope is the whole memory, which is what they
        count."""
        return self.rollups and not self.filtered

    @property
    def blinded(self) -> bool:
        """Whether blind review may hide some of the verdicts this scope counts (then the
        rollups, which hold every verdict, are not read, whatever the source)."""
        return self.hidden is not None

    @property
    def counted(self) -> bool:
        """Whether rollups count this scope: the whole memory's (:attr:`from_rollups`), or,
        when the only filter is one ``labels=key:value``, that label's
        (``memory_rollup_label_*``, :attr:`rollup_label`), its volume and scores included.
        Otherwise the widgets group the attacks themselves."""
        return (
            self.rollups
            and not self.blinded
            and (not self.filtered or self.rollup_label is not None)
        )

    @property
    def human(self) -> Expression:
        """The human outcome the reader may see (:func:`human_expression`)."""
        return human_expression(self.hidden)

    @property
    def rollup_label(self) -> tuple[str, str] | None:
        """The (key, value) of the scope's only filter, one label; None for any other scope."""
        if len(self.params) != 1 or self.params[0][0] != "labels":
            return None
        try:
            (pair,) = LabelPairsField().to_python(self.params[0][1])
        except ValidationError:
            return None
        return pair

    @property
    def outcome(self) -> Expression:
        return outcome_expression(self.source, hidden=self.hidden)

    @property
    def filtered(self) -> bool:
        """Whether any filter narrows the attacks (else the scope is the whole memory), or
        blind review hides verdicts: the whole-memory shortcuts count every verdict."""
        return bool(self.params) or self.blinded

    @property
    def vendor(self) -> str:
        return connections[self.attacks.db].vendor

    def pks(self) -> QuerySet:
        """The scope's attack ids, as a subquery."""
        return self.attacks.values("pk")

    @property
    def outcome_param(self) -> str:
        return OUTCOME_PARAM[self.source]

    def values_of(self, name: str) -> list[str]:
        """The raw values given for filter parameter ``name``."""
        return [value for key, value in self.params if key == name]

    @cached_property
    def crosswalk_tally(self) -> CrosswalkTally:
        """The scope's attacks by attack class and targeted harm categories, with the
        crosswalk: what every framework dimension counts. Two queries, once per scope
        (the OWASP, ATLAS and NIST breakdowns of one page share them)."""
        return crosswalk_tally(self)

    def unjoined(self) -> QuerySet:
        """The attacks as ``id IN (…)`` of the filtered set.

        A filter on a many-to-many path (harm categories) joins it; grouping by the same path
        afterwards would reuse that join and see only the filtered value. Grouping over the
        wrapped set gets a join of its own.
        """
        if not self.values_of("harm_category"):
            return self.attacks
        return AttackResult.objects.filter(pk__in=self.attacks.values("pk"))


# --- groups and dimensions -------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """One bar or table row: a group key, its outcome counts, and the parameters selecting it."""

    key: Any
    label: str
    counts: OutcomeCounts
    params: Params | None
    members: tuple[Any, ...] = ()

    @property
    def linkable(self) -> bool:
        return self.params is not None


@dataclass(frozen=True)
class Dimension:
    """A way to group attacks: the SQL key it groups by, how a key becomes a name, and the
    filter parameter that selects a name's attacks.

    ``path`` is grouped by. With ``resolve`` it is an identifier id, turned into the
    identifier's class name (``"class"``) or ``model_name`` param (``"model"``) in Python —
    grouping by the narrow integer and merging ids with the same name is much cheaper than
    joining the identifier rows into the scan. ``multi``: an attack can belong to several
    groups (counted once in each). ``single_param``: the filter parameter takes one value,
    so with it already in the scope only that value's group can be linked exactly.
    """

    name: str
    title: str
    param: str
    multi: bool = False
    single_param: bool = True
    path: str = ""
    resolve: str = ""
    none_label: str = "(not set)"
    framework: str = ""

    def expression(self, label_key: str | None = None) -> Expression:
        if self.name == "label":
            return Subquery(
                Label.objects.filter(attack_results=OuterRef("pk"), key=label_key or "").values(
                    "value"
                )[:1]
            )
        return id_key(self.path) if self.resolve else F(self.path)

    def param_value(self, key: Any, label_key: str | None = None) -> str | None:
        """The filter parameter value selecting ``key``'s attacks, or None if none can."""
        if not isinstance(key, str) or key == "":
            return None
        if self.name == "label":
            # ``labels=key:value`` splits at the first colon.
            if not label_key or ":" in label_key:
                return None
            return f"{label_key}:{key}"
        if self.param != "harm_category" and key != key.strip():
            # Single-valued filters strip their value; such a key cannot be asked for.
            return None
        return key

    def group_params(self, key: Any, label_key: str | None = None) -> Params | None:
        value = self.param_value(key, label_key)
        return None if value is None else ((self.param, value),)


DIMENSIONS: dict[str, Dimension] = {
    d.name: d
    for d in [
        Dimension(
            "attack_class",
            "Attack class",
            "attack_class",
            path="attack_identifier_id",
            resolve="class",
            none_label="(no attack identifier)",
        ),
        Dimension(
            "target_model",
            "Objective target (model)",
            "target_model",
            path="conversation__target_identifier_id",
            resolve="model",
            none_label="(no model name)",
        ),
        Dimension(
            "converter",
            "Converter (any in the chain)",
            "converter_class",
            multi=True,
            none_label="(no converter)",
        ),
        Dimension(
            "harm_category",
            "Harm category",
            "harm_category",
            multi=True,
            single_param=False,
            path="harm_category_index__name",
            none_label="(no harm category)",
        ),
        Dimension(
            "owasp",
            "OWASP Top 10 for LLM Applications 2025",
            "framework",
            multi=True,
            single_param=False,
            framework="owasp-llm",
            none_label="(no OWASP category)",
        ),
        Dimension(
            "atlas",
            "MITRE ATLAS technique",
            "framework",
            multi=True,
            single_param=False,
            framework="atlas",
            none_label="(no ATLAS technique)",
        ),
        Dimension(
            "nist",
            "NIST AI 600-1 risk",
            "framework",
            multi=True,
            single_param=False,
            framework="nist-ai-600-1",
            none_label="(no NIST AI 600-1 risk)",
        ),
        Dimension(
            "dataset",
            "Seed dataset",
            "dataset",
            multi=True,
            none_label="(objective in no dataset)",
        ),
        Dimension(
            "label",
            "Label",
            "labels",
            single_param=False,
            none_label="(label not set)",
        ),
        Dimension(
            "scorer",
            "Objective scorer (last score)",
            "scorer_class",
            path="last_score__scorer_class_identifier_id",
            resolve="class",
            none_label="(no score)",
        ),
        Dimension(
            "eval_hash",
            "Attack configuration (eval hash)",
            "eval_hash",
            multi=True,
            none_label="(no eval hash)",
        ),
    ]
}

#: The one-dimensional breakdowns, in page order; the eval-hash grouping is a widget of its own.
BREAKDOWNS: tuple[str, ...] = tuple(name for name in DIMENSIONS if name != "eval_hash")

#: Dimensions a heat map axis can use (one SQL expression each, at most one row per attack
#: and axis value). Converters are left out: "no converter" needs a pass of its own.
AXIS_DIMENSIONS = ("attack_class", "target_model", "scorer", "harm_category", "label")
TREND_SPLITS = ("attack_class", "target_model")


def identifier_names(ids: Iterable[int | None] | QuerySet) -> dict[int, dict[str, Any]]:
    """``{id: {"class": …, "model": …, "hash": …, "eval_hash": …}}`` for identifier ids, or
    for the ids a queryset of one column selects (a subquery: no parameter per id).

    One query, always (an empty id list asks for id 0), so widget query counts are fixed.
    """
    if isinstance(ids, QuerySet):
        wanted: Any = ids
    else:
        wanted = [i for i in set(ids) if i is not None] or [0]
    rows = ComponentIdentifier.objects.filter(pk__in=wanted).values(
        "pk", "class_name", "hash", "eval_hash", model=F("params__model_name")
    )
    return {
        row["pk"]: {
            "class": row["class_name"],
            "model": row["model"] if isinstance(row["model"], str) else None,
            "hash": row["hash"],
            "eval_hash": row["eval_hash"],
        }
        for row in rows
    }


def _name(dimension: Dimension, key: Any, names: dict[int, dict[str, Any]]) -> Any:
    """The group name of a raw key (an identifier id for resolved dimensions)."""
    if not dimension.resolve:
        return key
    if key is None or key not in names:
        return None
    return names[key][dimension.resolve]


# --- one pass for the attack-level widgets -------------------------------------------------------

#: Dimensions counted from :func:`attack_facts` instead of a grouping of their own, with the
#: fact field holding each one's identifier id.
FACT_FIELDS = {"attack_class": "strategy", "target_model": "target", "scorer": "scorer"}


class AttackFact(NamedTuple):
    """How many attacks of the scope share one combination of the narrow keys that the
    attack-level widgets group by: identifier ids (attack, atomic attack, objective target,
    scorer of the last score) and both outcomes. A named tuple: a page reads thousands."""

    strategy: int | None
    atomic: int | None
    target: int | None
    scorer: int | None
    outcome: str
    human: str | None
    count: int

    def out(self, source: Source) -> str:
        """The outcome ``source`` counts (as :func:`outcome_expression` computes it in SQL)."""
        if source == Source.HUMAN and self.human is not None:
            return self.human
        return self.outcome


def _facts_ready(scope: Scope) -> bool:
    """Whether :func:`attack_facts` costs nothing more: read already, or a rollup read."""
    return "facts" in scope.memo or scope.counted


def _rollup_rows(scope: Scope, sql: str, params: list[Any] | None = None) -> list[tuple]:
    with connections[scope.attacks.db].cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


def _rollup(scope: Scope, name: str, alias: str = "") -> tuple[str, str, list[Any]]:
    """(table, condition, parameters) of the rows of rollup ``name`` (``fact``, ``hour``,
    ``objective``, ``harmlist``, ``label``, ``harm``, ``converter``, ``score``, ``count``) that
    count the scope: the whole memory's table, or its label-scoped twin's rows of the scope's
    label (looked up in the same statement: a pair no attack carries matches no row)."""
    column = f"{alias}." if alias else ""
    if scope.rollup_label is None:
        return f"memory_rollup_{name}", f"{column}n > 0", []
    return (
        f"memory_rollup_label_{name}",
        f"{column}scope = (SELECT id FROM {Label._meta.db_table} "
        "WHERE key = %s AND value_sha256 = %s AND value = %s) "
        f"AND {column}n > 0",
        # As stored: a label's columns hold U+FFFE doubled (``redteam.core.nul``); the hash is
        # of the text itself.
        [
            escape_nul(scope.rollup_label[0]),
            label_value_sha256(scope.rollup_label[1]),
            escape_nul(scope.rollup_label[1]),
        ],
    )


def _rollup_rows_of(scope: Scope, whole: type[Model], scoped: type[Model]) -> QuerySet:
    """:func:`_rollup`'s rows as a QuerySet of the rollup model ``whole`` or its label-scoped
    twin ``scoped``."""
    if scope.rollup_label is None:
        return whole.objects.using(scope.attacks.db).filter(n__gt=0)
    key, value = scope.rollup_label
    label = Label.objects.using(scope.attacks.db).filter(Label.matching(key, value)).values("pk")
    return scoped.objects.using(scope.attacks.db).filter(scope=Subquery(label[:1]), n__gt=0)


def _out(source: Source, outcome: str, human: str) -> str:
    """The outcome ``source`` counts, from a rollup row (``human`` "" when there is none)."""
    return human if source == Source.HUMAN and human else outcome


def attack_facts(scope: Scope) -> list[AttackFact]:
    """The scope's attacks grouped by every key of :class:`AttackFact`. One query, run once
    per scope: once read, the headline, the attack-class, target and scorer breakdowns, the
    heat map over them, the eval-hash groups and the verdict agreement are sums over its rows.

    Its rows are the identifier combinations in use times their outcomes, a few thousand at
    100,000 attacks, where each of those widgets grouping on its own scanned every attack again
    (docs/dashboards.md → Performance). It joins the attacks to their conversations and last
    scores, so it costs more than any one of those widgets' own grouping: a caller that shows
    several of them (the dashboard page) reads it first; one that shows one (a CSV, the stats
    API, a report) does not, and each widget then runs its own.
    """
    if "facts" not in scope.memo and scope.counted:
        table, live, params = _rollup(scope, "fact")
        # The rollup's sentinels (0, "") read back as None.
        scope.memo["facts"] = [
            AttackFact(
                strategy or None,
                atomic or None,
                target or None,
                scorer or None,
                outcome,
                human or None,
                n,
            )
            for strategy, atomic, target, scorer, outcome, human, n in _rollup_rows(
                scope,
                f"SELECT strategy, atomic, target, scorer, outcome, human, n FROM {table} "
                f"WHERE {live}",
                params,
            )
        ]
    if "facts" not in scope.memo:
        rows = (
            scope.attacks.values(
                strategy=id_key("attack_identifier_id"),
                atomic=id_key("atomic_attack_identifier_id"),
                target=id_key(DIMENSIONS["target_model"].path),
                scorer=id_key(DIMENSIONS["scorer"].path),
                outcome_=F("outcome"),
                human=scope.human,
            )
            .annotate(count=Count("*"))
            .order_by()
        )
        scope.memo["facts"] = [
            AttackFact(
                strategy=row["strategy"],
                atomic=row["atomic"],
                target=row["target"],
                scorer=row["scorer"],
                outcome=row["outcome_"],
                human=row["human"],
                count=row["count"],
            )
            for row in rows
        ]
    return scope.memo["facts"]


def _facts_out(scope: Scope) -> list[tuple[AttackFact, str]]:
    """Each fact with the outcome the scope's source counts, worked out once per scope."""
    if "facts_out" not in scope.memo:
        scope.memo["facts_out"] = [(fact, fact.out(scope.source)) for fact in attack_facts(scope)]
    return scope.memo["facts_out"]


def fact_names(scope: Scope) -> dict[int, dict[str, Any]]:
    """:func:`identifier_names` of every identifier in :func:`attack_facts`. One query, once per
    scope."""
    if "fact_names" not in scope.memo:
        if scope.counted:
            # The rollup's own ids as a subquery: a thousand ids as parameters cost more to
            # send than the look-up.
            live = _rollup_rows_of(scope, FactRollup, LabelFactRollup)
            ids: Any = live.values("strategy").union(
                *(live.values(key) for key in ("atomic", "target", "scorer"))
            )
        else:
            ids = (
                i
                for fact in attack_facts(scope)
                for i in (fact.strategy, fact.atomic, fact.target, fact.scorer)
            )
        scope.memo["fact_names"] = identifier_names(ids)
    return scope.memo["fact_names"]


def _fact_counts(scope: Scope, dimensions: tuple[Dimension, ...]) -> dict[Any, OutcomeCounts]:
    """Outcome counts per name of ``dimensions`` (a tuple of names for several), from the facts."""
    names = fact_names(scope)
    ids_of = itemgetter(*(AttackFact._fields.index(FACT_FIELDS[d.name]) for d in dimensions))
    # Summed as plain integers per (ids, outcome) first: thousands of facts, few groups.
    tally: dict[tuple[Any, str], int] = defaultdict(int)
    for fact, out in _facts_out(scope):
        tally[(ids_of(fact), out)] += fact.count
    counts: dict[Any, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (ids, out), count in tally.items():
        if len(dimensions) == 1:
            key = _name(dimensions[0], ids, names)
        else:
            key = tuple(_name(d, i, names) for d, i in zip(dimensions, ids, strict=True))
        counts[key][out] += count
    return {key: OutcomeCounts.of(per_out) for key, per_out in counts.items()}


@dataclass(frozen=True)
class Breakdown:
    """Success rates of one dimension's groups (sorted: highest rate first, undecided last)."""

    dimension: Dimension
    groups: list[Group]
    label_key: str | None = None

    @property
    def title(self) -> str:
        if self.dimension.name == "label":
            return f"Label “{self.label_key}”" if self.label_key else "Label"
        return self.dimension.title


def _sorted(groups: Iterable[Group]) -> list[Group]:
    def order(group: Group) -> tuple:
        asr = group.counts.asr
        return (
            group.key is None,
            asr is None,
            -(asr or 0.0),
            -group.counts.n,
            -group.counts.attacks,
            str(group.key),
        )

    return sorted(groups, key=order)


def _counts_by_key(rows: Iterable[dict[str, Any]], *keys: str) -> dict[Any, OutcomeCounts]:
    """``{key (or tuple of keys): OutcomeCounts}`` from ``values(...).annotate(count=…)`` rows."""
    out: dict[Any, OutcomeCounts] = defaultdict(OutcomeCounts)
    for row in rows:
        key = row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)
        out[key] = out[key].with_outcome(row["out"], row["count"])
    return dict(out)


def _restricted(scope: Scope, dimension: Dimension, key: Any, label_key: str | None) -> bool:
    """Whether ``key``'s group must be left out because the scope already pins the parameter.

    With ``converter_class=X`` in the scope, an attack also using converter Y is counted
    under Y too, but ``converter_class`` takes one value: no link could select "X and Y".
    Only X's group is kept, so every group shown is exactly what its link selects.
    """
    if not dimension.single_param:
        return False
    pinned = scope.values_of(dimension.param)
    return bool(pinned) and dimension.param_value(key, label_key) != pinned[-1]


def _build_groups(
    scope: Scope, dimension: Dimension, counts: dict[Any, OutcomeCounts], label_key: str | None
) -> list[Group]:
    groups = []
    for key, value in counts.items():
        if _restricted(scope, dimension, key, label_key):
            continue
        groups.append(
            Group(
                key=key,
                label=dimension.none_label if key is None else str(key),
                counts=value,
                params=dimension.group_params(key, label_key),
            )
        )
    return _sorted(groups)


# --- headline ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """The scope at a glance: attacks by outcome and how many carry a human verdict."""

    counts: OutcomeCounts
    human_reviewed: int


@dataclass(frozen=True)
class Volume:
    """The conversations, pieces and scores behind the scope's attacks.

    ``whole_memory``: no filter is set, so these are everything stored (including
    conversations no attack points to), counted from the tables directly.
    """

    conversations: int
    pieces: int
    scores: int
    whole_memory: bool = False


def outcome_totals(scope: Scope) -> OutcomeCounts:
    """Outcome counts of the whole scope. One query, none when the scope's
    :func:`attack_facts` are already read."""
    total = OutcomeCounts()
    if _facts_ready(scope):
        per_outcome: dict[str, int] = defaultdict(int)
        for fact, out in _facts_out(scope):
            per_outcome[out] += fact.count
        for outcome, count in per_outcome.items():
            total = total.with_outcome(outcome, count)
        return total
    rows = scope.attacks.values(out=scope.outcome).annotate(count=Count("*")).order_by()
    for row in rows:
        total = total.with_outcome(row["out"], row["count"])
    return total


def scope_conversation_ids(scope: Scope) -> QuerySet:
    """Ids of the conversations behind the scope's attacks: main and related ones (contract §7).

    A UNION, so both databases can hash or index-search it once instead of testing every
    conversation against two subqueries.
    """
    related = RelatedConversation.objects.filter(attack_result__in=scope.pks())
    return scope.attacks.values("conversation_id").union(related.values("conversation_id"))


def scope_scores(scope: Scope) -> QuerySet:
    """Scores at home in the scope's conversations (``Score.conversation``: the conversation
    of the piece a score names); every score when nothing is filtered.

    Read through the score's stored conversation, not by joining every piece's
    ``original_prompt_id`` as the review pages do: that join cost in proportion to the pieces
    behind the filter (0.4–0.9 s at 1,000,000 pieces). The two differ only for copies made by
    duplicating a conversation, whose scores count once, in the conversation they were made in.
    """
    if not scope.filtered:
        return Score.objects.all()
    return Score.objects.filter(conversation_id__in=scope_conversation_ids(scope))


def headline(scope: Scope) -> Headline:
    """Attacks by outcome and attacks with a human verdict. Two queries, each reading one
    small index, or none once the scope has read its :func:`attack_facts`."""
    if _facts_ready(scope):
        reviewed = sum(fact.count for fact in attack_facts(scope) if fact.human is not None)
    else:
        reviewed = scope.attacks.alias(_human=scope.human).filter(_human__isnull=False).count()
    return Headline(counts=outcome_totals(scope), human_reviewed=reviewed)


def volume(scope: Scope) -> Volume:
    """Conversations (main and related), pieces and scores behind the attacks.

    Unfiltered, one statement reading the rollups (:mod:`memory.models.rollups`): the
    conversations (and on PostgreSQL the pieces) from ``memory_rollup_count``, the scores
    summed over ``memory_rollup_score``; SQLite counts its pieces itself, which costs it less
    than a trigger per stored piece would. Filtered by one label, one statement reading that
    label's count and score rollups. Otherwise filtered, they follow the attacks to their
    conversations and read each one's stored piece count and home scores, so they cost in
    proportion to the conversations, not to the pieces behind them: one statement, in which
    the scope's conversation ids are a CTE computed once (both databases materialise a CTE
    used more than once) instead of once per count.
    """
    if scope.from_rollups:
        connection = connections[scope.attacks.db]
        if connection.vendor == "postgresql":
            pieces = "SELECT n FROM memory_rollup_count WHERE name = 'pieces'"
        else:
            pieces = (
                f"SELECT COUNT(*) FROM {connection.ops.quote_name(MessagePiece._meta.db_table)}"
            )
        ((conversations, pieces, scores),) = _rollup_rows(
            scope,
            "SELECT (SELECT n FROM memory_rollup_count WHERE name = 'conversations'), "
            f"({pieces}), (SELECT SUM(n) FROM memory_rollup_score)",
        )
        return Volume(
            conversations=int(conversations or 0),
            pieces=int(pieces or 0),
            scores=int(scores or 0),
            whole_memory=True,
        )
    if scope.counted:  # one label: its count and score rollups
        counts, live, params = _rollup(scope, "count")
        score_table, scores_live, more = _rollup(scope, "score")
        ((conversations, pieces, scores),) = _rollup_rows(
            scope,
            f"SELECT (SELECT n FROM {counts} WHERE {live} AND name = 'conversations'), "
            f"(SELECT n FROM {counts} WHERE {live} AND name = 'pieces'), "
            f"(SELECT SUM(n) FROM {score_table} WHERE {scores_live})",
            params + params + more,
        )
        return Volume(
            conversations=int(conversations or 0), pieces=int(pieces or 0), scores=int(scores or 0)
        )
    if not scope.filtered:
        return Volume(
            conversations=Conversation.objects.count(),
            pieces=MessagePiece.objects.count(),
            scores=Score.objects.count(),
            whole_memory=True,
        )
    try:
        ids_sql, params = scope_conversation_ids(scope).query.sql_with_params()
    except EmptyResultSet:  # e.g. an unknown target model: Django knows no row can match
        return Volume(conversations=0, pieces=0, scores=0)
    connection = connections[scope.attacks.db]
    quote = connection.ops.quote_name
    conversation, score = quote(Conversation._meta.db_table), quote(Score._meta.db_table)
    in_scope = "IN (SELECT id FROM scope_conversation)"
    if connection.vendor == "postgresql":
        # As an array, PostgreSQL searches the index once per id in one scan; as ``IN`` it
        # planned a nested loop for a guessed 200 ids and paid per loop (16,000 ids for a
        # label: 99 → 65 ms for the whole statement).
        in_scope = "= ANY(ARRAY(SELECT id FROM scope_conversation))"
    sql = (
        f"WITH scope_conversation (id) AS ({ids_sql}) SELECT "
        "(SELECT COUNT(*) FROM scope_conversation), "
        f"(SELECT COALESCE(SUM(piece_count), 0) FROM {conversation} WHERE id {in_scope}), "
        f"(SELECT COUNT(*) FROM {score} WHERE conversation_id {in_scope})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        conversations, pieces, scores = cursor.fetchone()
    return Volume(conversations=conversations, pieces=int(pieces), scores=scores)


# --- breakdowns ----------------------------------------------------------------------------------


def breakdown(scope: Scope, name: str, *, label_key: str | None = None) -> Breakdown:
    """Success rate per group of dimension ``name``.

    Two queries (grouping, identifier names; none for attack class, target model and scorer
    once the scope has read its :func:`attack_facts`); harm categories one, seed datasets two,
    labels three, converters three. The label dimension groups by the value of label ``label_key``.
    """
    dimension = DIMENSIONS[name]
    if dimension.framework:
        return _framework_breakdown(scope, dimension)
    if name == "dataset":
        return _dataset_breakdown(scope, dimension)
    if name == "eval_hash":
        return eval_hash_breakdown(scope)
    if name == "converter":
        return _converter_breakdown(scope, dimension)
    if name == "label":
        return _label_breakdown(scope, dimension, label_key)
    if name in FACT_FIELDS and _facts_ready(scope):
        counts = _fact_counts(scope, (dimension,))
        return Breakdown(dimension, _build_groups(scope, dimension, counts, label_key), label_key)
    if name == "harm_category" and scope.counted:
        table, live, params = _rollup(scope, "harm", "r")
        counts = defaultdict(OutcomeCounts)
        for key, outcome, human, n in _rollup_rows(
            scope,
            f"SELECT h.name, r.outcome, r.human, r.n FROM {table} r "
            f"LEFT JOIN memory_harmcategory h ON h.id = r.harm WHERE {live}",
            params,
        ):
            counts[key] = counts[key].with_outcome(_out(scope.source, outcome, human), n)
        return Breakdown(
            dimension, _build_groups(scope, dimension, dict(counts), label_key), label_key
        )
    rows = list(
        _grouping_source(scope, [dimension])
        .values(key=dimension.expression(label_key), out=scope.outcome)
        .annotate(count=Count("*"))
        .order_by()
    )
    names = identifier_names(row["key"] for row in rows) if dimension.resolve else {}
    counts: dict[Any, OutcomeCounts] = defaultdict(OutcomeCounts)
    for row in rows:
        key = _name(dimension, row["key"], names)
        counts[key] = counts[key].with_outcome(row["out"], row["count"])
    return Breakdown(dimension, _build_groups(scope, dimension, dict(counts), label_key), label_key)


def _grouping_source(scope: Scope, dimensions: list[Dimension]) -> QuerySet:
    """The attacks to group; unjoined when a dimension walks the harm-category relation."""
    if any(d.name == "harm_category" for d in dimensions):
        return scope.unjoined()
    return scope.attacks


def _label_breakdown(scope: Scope, dimension: Dimension, label_key: str | None) -> Breakdown:
    """Per value of label ``label_key``, from the label link table. Three queries.

    The key's label ids are read first and the links filtered by them: joined to the label
    table instead, PostgreSQL misjudges the tiny label table and loops over every
    (attack, label) pair, ten times slower with a label filter in the scope. An attack has
    at most one value per key, so "not set" is the scope's totals minus the labelled attacks.
    """
    values = dict(Label.objects.filter(key=label_key or "").values_list("pk", "value"))
    if scope.counted:
        ids = list(values) or [0]
        table, live, params = _rollup(scope, "label")
        counts = {}
        for label, outcome, human, n in _rollup_rows(
            scope,
            f"SELECT label, outcome, human, n FROM {table} WHERE {live} "
            f"AND label IN ({', '.join(['%s'] * len(ids))})",
            params + ids,
        ):
            key = values.get(label)
            counts[key] = counts.get(key, OutcomeCounts()).with_outcome(
                _out(scope.source, outcome, human), n
            )
        return _label_groups(scope, dimension, label_key, counts)
    links = AttackLabel.objects.filter(label_id__in=list(values) or [0])
    if scope.filtered:
        # Tested as an expression, not the bare column: SQLite would otherwise probe the
        # (label, attack) index once per label and scoped attack (30 × 33,000 probes for the
        # last 30 days, 2× slower) instead of reading the key's links and testing each.
        links = links.annotate(
            scoped=Coalesce(F("attackresult_id"), Value(None), output_field=UUIDField())
        ).filter(scoped__in=scope.pks())
    rows = [
        {**row, "key": values.get(row["key"])}
        for row in links.values(
            key=F("label_id"), out=outcome_expression(scope.source, "attackresult__", scope.hidden)
        )
        .annotate(count=Count("*"))
        .order_by()
    ]
    return _label_groups(scope, dimension, label_key, _counts_by_key(rows, "key"))


def _label_groups(
    scope: Scope, dimension: Dimension, label_key: str | None, counts: dict[Any, OutcomeCounts]
) -> Breakdown:
    """The label breakdown of ``counts`` per value, with "not set" from the scope's totals."""
    labelled = sum(counts.values(), OutcomeCounts())
    total = outcome_totals(scope)
    rest = total - labelled
    if rest.attacks:
        counts[None] = rest
    if not label_key:
        return Breakdown(dimension, [], label_key)
    return Breakdown(dimension, _build_groups(scope, dimension, counts, label_key), label_key)


def _converter_breakdown(scope: Scope, dimension: Dimension) -> Breakdown:
    """Per converter class anywhere in the chain of any piece of the main conversation.

    Reads the (converter, attack, outcome) rows of ``Conversation.converter_index`` (one per
    conversation and converter configuration, kept by ingestion) and tallies them here: an
    attack counts once per class (two configurations of a class, or a converter used on several
    pieces, count once) and once towards "any converter"; the scope's totals give "no
    converter". Three queries (links, identifier names, outcome totals), the first costing in
    proportion to the converted conversations, not their pieces. Tallying in Python beat
    ``COUNT(DISTINCT)`` per class and per outcome in SQL, which needs a second pass for "any".
    Unfiltered, the links are first folded in SQL into each conversation's set of converters
    (:func:`_converter_sets`).
    """
    if not scope.filtered or scope.counted:
        return _converter_set_breakdown(scope, dimension)
    attack = "conversation__attack_results__"
    links = Conversation.converter_index.through.objects.filter(
        **{f"{attack}in": scope.pks()} if scope.filtered else {f"{attack}isnull": False}
    )
    # The attack id only groups rows here: as text it skips building a UUID per row, which was
    # most of this widget's time (80,000 rows unfiltered at 100,000 attacks).
    rows = links.values_list(
        "componentidentifier_id",
        Cast(f"{attack}id", CharField()),
        outcome_expression(scope.source, attack, scope.hidden),
    ).order_by()
    per_identifier: dict[int, list[tuple[Any, str]]] = defaultdict(list)
    for identifier_id, attack_id, outcome in rows:
        per_identifier[identifier_id].append((attack_id, outcome))
    names = identifier_names(per_identifier)
    per_class: dict[str, dict[Any, str]] = defaultdict(dict)
    converted: dict[Any, str] = {}
    for identifier_id, pairs in per_identifier.items():
        for attack_id, outcome in pairs:
            per_class[names[identifier_id]["class"]][attack_id] = outcome
            converted[attack_id] = outcome
    counts: dict[Any, OutcomeCounts] = {
        name: _tally(attacks.values()) for name, attacks in per_class.items()
    }
    total = outcome_totals(scope)
    with_any = _tally(converted.values())
    rest = total - with_any
    if rest.attacks:
        counts[None] = rest
    return Breakdown(dimension, _build_groups(scope, dimension, counts, None))


def _converter_sets(scope: Scope) -> list[tuple[frozenset[int], str, str | None, int]]:
    """(converter identifier ids, outcome, human outcome, attacks) of every attack whose main
    conversation used a converter. One statement: each conversation's links are folded into
    one string of ids (in any order: read back as a set), then the attacks are counted per
    string. At 100,000 attacks that is a few dozen
    rows where the per-attack links were 80,000 rows to read into Python (2.6× the time)."""
    connection = connections[scope.attacks.db]
    quote = connection.ops.quote_name
    links = quote(Conversation.converter_index.through._meta.db_table)
    attacks = quote(AttackResult._meta.db_table)
    if connection.vendor == "postgresql":
        ids = "string_agg(componentidentifier_id::text, ',')"
    else:
        ids = "group_concat(componentidentifier_id)"
    sql = (
        f"SELECT chain.ids, a.outcome, a.human_outcome, COUNT(*) FROM "
        f"(SELECT conversation_id, {ids} AS ids FROM {links} GROUP BY conversation_id) chain "
        f"JOIN {attacks} a ON a.conversation_id = chain.conversation_id GROUP BY 1, 2, 3"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)
        rows = cursor.fetchall()
    return [
        (frozenset(int(i) for i in chain.split(",")), outcome, human, count)
        for chain, outcome, human, count in rows
    ]


def _converter_rollup_sets(
    scope: Scope,
) -> tuple[list[tuple[frozenset[int], str, str | None, int]], OutcomeCounts]:
    """:func:`_converter_sets` and :func:`outcome_totals` of the scope (the whole memory or a
    label's), from the converter and fact rollups in one statement."""
    sets = []
    per_outcome: dict[str, int] = defaultdict(int)
    converter, converter_live, params = _rollup(scope, "converter")
    fact, fact_live, more = _rollup(scope, "fact")
    for converters, outcome, human, n in _rollup_rows(
        scope,
        f"SELECT converters, outcome, human, n FROM {converter} WHERE {converter_live} "
        f"UNION ALL SELECT NULL, outcome, human, SUM(n) FROM {fact} WHERE {fact_live} "
        "GROUP BY outcome, human",
        params + more,
    ):
        if converters is None:
            per_outcome[_out(scope.source, outcome, human)] += int(n)
        else:
            sets.append(
                (frozenset(int(i) for i in converters.split(",")), outcome, human or None, int(n))
            )
    total = OutcomeCounts()
    for outcome, count in per_outcome.items():
        total = total.with_outcome(outcome, count)
    return sets, total


def _converter_set_breakdown(scope: Scope, dimension: Dimension) -> Breakdown:
    """:func:`_converter_breakdown` of the whole memory, from :func:`_converter_sets`, or of
    the whole memory or a label from the converter rollups (two queries: sets with totals,
    identifier names)."""
    if scope.counted:
        sets, total = _converter_rollup_sets(scope)
    else:
        sets, total = _converter_sets(scope), None
    names = identifier_names(i for ids, _, _, _ in sets for i in ids)
    counts: dict[Any, OutcomeCounts] = defaultdict(OutcomeCounts)
    with_any = OutcomeCounts()
    for ids, outcome, human, count in sets:
        out = human if scope.source == Source.HUMAN and human is not None else outcome
        for name in {names[i]["class"] for i in ids}:
            counts[name] = counts[name].with_outcome(out, count)
        with_any = with_any.with_outcome(out, count)
    rest = (total if total is not None else outcome_totals(scope)) - with_any
    if rest.attacks:
        counts[None] = rest
    return Breakdown(dimension, _build_groups(scope, dimension, dict(counts), None))


def _tally(outcomes: Iterable[str]) -> OutcomeCounts:
    total = OutcomeCounts()
    for outcome, count in Counter(outcomes).items():
        total = total.with_outcome(outcome, count)
    return total


@dataclass(frozen=True)
class CrosswalkTally:
    """Outcome counts per (attack class, targeted harm categories) and the crosswalk."""

    crosswalk: Crosswalk
    rows: list[tuple[str | None, list[Any], OutcomeCounts]]


def crosswalk_tally(scope: Scope) -> CrosswalkTally:
    """Group the scope's attacks by attack class and harm-category list. Two queries
    (crosswalk, grouping).

    Grouped by the class name (joined: a handful of classes, where identifier ids run to
    hundreds, one per endpoint and converter chain) and by the stored JSON list as text,
    decoded once per distinct list: one row per distinct (class, harm list, outcome), not one
    per attack, so the rows stay in the thousands at 100,000 attacks. Grouping by identifier
    id and decoding each row's JSON returned a row for nearly every attack (1,936 of 2,000
    in bench/crosswalk.py) and cost 3× more.
    """
    walk = crosswalk_current()
    if scope.counted:
        table, live, params = _rollup(scope, "harmlist")
        grouped = [
            {
                "strategy": name if classed else None,
                "harms": harms or None,
                "out": _out(scope.source, o, h),
                "count": n,
            }
            for classed, name, harms, o, h, n in _rollup_rows(
                scope,
                f"SELECT classed, attack_class, harms, outcome, human, n FROM {table} WHERE {live}",
                params,
            )
        ]
    else:
        grouped = (
            scope.attacks.values(
                strategy=F("attack_identifier__class_name"),
                harms=Cast("targeted_harm_categories", TextField()),
                out=scope.outcome,
            )
            .annotate(count=Count("*"))
            .order_by()
        )
    decoded: dict[str | None, tuple[str, ...]] = {}
    merged: dict[tuple[str | None, tuple[str, ...]], dict[str, int]] = defaultdict(
        lambda: defaultdict(int)
    )
    for row in grouped:
        text = row["harms"]
        if text not in decoded:
            decoded[text] = _harm_names(text)
        merged[(row["strategy"], decoded[text])][row["out"]] += row["count"]
    return CrosswalkTally(
        walk, [(k[0], list(k[1]), OutcomeCounts.of(v)) for k, v in merged.items()]
    )


def _harm_names(text: str | None) -> tuple[str, ...]:
    """The harm-category names of a stored JSON list (as text, NUL escapes undone)."""
    try:
        value = json.loads(text) if text else []
    except ValueError:
        return ()
    if not isinstance(value, list):
        return ()
    return tuple(unescape_nul(v) for v in value if isinstance(v, str))


def _framework_breakdown(scope: Scope, dimension: Dimension) -> Breakdown:
    """Per entry of one framework of the crosswalk (OWASP category, ATLAS technique, NIST risk).

    An attack belongs to every entry its attack class or any of its targeted harm categories
    maps to, once each, exactly as the ``framework`` filter selects it; so the groups do not
    sum to the scope's total (an attack is in several, or in none: "no … category").
    """
    tally = scope.crosswalk_tally
    walk = tally.crosswalk
    per_tag: dict[Any, list[OutcomeCounts]] = defaultdict(list)
    for strategy, harms, value in tally.rows:
        tags = walk.tags_for(
            harms=harms, techniques=[strategy] if strategy else [], framework=dimension.framework
        )
        for tag in tags or [None]:
            per_tag[tag].append(value)
    groups = [
        Group(
            key=tag,
            label=dimension.none_label if tag is None else walk.entries[tag].label,
            counts=OutcomeCounts.total(values),
            params=None if tag is None else dimension.group_params(tag),
        )
        for tag, values in per_tag.items()
    ]
    return Breakdown(dimension, _sorted(groups))


def _dataset_breakdown(scope: Scope, dimension: Dimension) -> Breakdown:
    """Per seed dataset holding the objective (by content hash). Two queries.

    The filter's rule: a seed with ``value_sha256 == objective_sha256`` in a curated dataset
    counts for that dataset's name, a seed without one for the ``dataset_name`` it carries.
    There is no foreign key from attacks to seeds, so the (small) objective → dataset map is
    read once and the per-objective outcome counts are summed into it.
    """
    from seeds.models import Seed

    objectives: QuerySet = scope.attacks.values("objective_sha256")
    if scope.counted:
        table, live, params = _rollup(scope, "objective")
        # Summed as plain integers per objective and outcome, counts made once per objective.
        per_out: dict[Any, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for digest, outcome, human, n in _rollup_rows(
            scope, f"SELECT objective, outcome, human, n FROM {table} WHERE {live}", params
        ):
            per_out[digest or None][_out(scope.source, outcome, human)] += n
        per_objective = {key: OutcomeCounts.of(counts) for key, counts in per_out.items()}
        objectives = _rollup_rows_of(scope, ObjectiveRollup, LabelObjectiveRollup).values(
            "objective"
        )
    else:
        by_objective = (
            scope.attacks.values("objective_sha256", out=scope.outcome)
            .annotate(count=Count("*"))
            .order_by()
        )
        per_objective = _counts_by_key(by_objective, "objective_sha256")
    datasets: dict[str, set[str]] = defaultdict(set)
    seeds = (
        # A subquery, not the hashes: there can be more distinct objectives than SQLite
        # accepts parameters.
        Seed.objects.filter(value_sha256__in=objectives)
        .annotate(key=Coalesce(F("dataset__name"), F("dataset_name")))
        .filter(key__isnull=False)
        .values_list("value_sha256", "key")
        .distinct()
    )
    for digest, key in seeds:
        datasets[digest].add(key)
    per_dataset: dict[Any, list[OutcomeCounts]] = defaultdict(list)
    for digest, value in per_objective.items():
        for key in datasets.get(digest) or [None]:
            per_dataset[key].append(value)
    counts = {key: OutcomeCounts.total(values) for key, values in per_dataset.items()}
    return Breakdown(dimension, _build_groups(scope, dimension, counts, None))


def eval_hash_breakdown(scope: Scope) -> Breakdown:
    """Group attacks by eval hash: the same logical attack across endpoints (contract §10.7).

    An attack belongs to the group of its atomic-attack identifier's eval hash (PyRIT stamps
    one there) and of its attack identifier's (when it carries one), exactly as the filter's
    ``eval_hash`` matches either. Each group lists its concrete identifiers (``members``:
    hash, class, targets, counts), each selecting its attacks with ``identifier=<hash>``.
    Two queries: counts per identifier pair and target, then the identifiers (none once the
    scope has read its :func:`attack_facts`).
    """
    dimension = DIMENSIONS["eval_hash"]
    if _facts_ready(scope):
        merged: dict[tuple[Any, Any, Any, str], int] = defaultdict(int)
        for fact, out in _facts_out(scope):
            merged[(fact.atomic, fact.strategy, fact.target, out)] += fact.count
        rows = [(*key, n) for key, n in merged.items()]
        names = fact_names(scope)
    else:
        rows = list(
            scope.attacks.values_list(
                id_key("atomic_attack_identifier_id"),
                id_key("attack_identifier_id"),
                id_key("conversation__target_identifier_id"),
                scope.outcome,
            )
            .annotate(count=Count("*"))
            .order_by()
        )
        names = identifier_names(i for row in rows for i in row[:3])

    def eval_of(identifier_id: int | None) -> str | None:
        return names[identifier_id]["eval_hash"] if identifier_id in names else None

    # Summed as plain integers per group and member and outcome, counts made once at the end.
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    members: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for atomic, strategy, target_id, out, count in rows:
        atomic_eval, strategy_eval = eval_of(atomic), eval_of(strategy)
        strategy_class = names.get(strategy, {}).get("class")
        target = names.get(target_id, {}).get("model")
        # An attack whose two identifiers share the eval hash is in that group once.
        for digest in {atomic_eval, strategy_eval} - {None}:
            totals[digest][out] += count
        for identifier_id, digest in ((atomic, atomic_eval), (strategy, strategy_eval)):
            if digest is None:
                continue
            member = members[digest].get(identifier_id)
            if member is None:
                info = names[identifier_id]
                member = members[digest][identifier_id] = {
                    "hash": info["hash"],
                    "class_name": info["class"],
                    "attack_classes": set(),
                    "targets": set(),
                    "counts": defaultdict(int),
                }
            member["counts"][out] += count
            if strategy_class:
                member["attack_classes"].add(strategy_class)
            if target:
                member["targets"].add(target)
    groups = []
    for digest, per_out in totals.items():
        if _restricted(scope, dimension, digest, None):
            continue
        counts = OutcomeCounts.of(per_out)
        group_members = sorted(
            (
                {
                    **m,
                    "attack_classes": sorted(m["attack_classes"]),
                    "targets": sorted(m["targets"]),
                    "counts": OutcomeCounts.of(m["counts"]),
                    "params": (("identifier", m["hash"]),),
                }
                for m in members[digest].values()
            ),
            key=lambda m: (-m["counts"].attacks, m["hash"]),
        )
        classes = sorted({c for m in group_members for c in m["attack_classes"]})
        groups.append(
            Group(
                key=digest,
                # The short hash first: a chart label cut to fit still tells groups apart.
                label=f"{digest[:8]} · {' / '.join(classes) or group_members[0]['class_name']}",
                counts=counts,
                params=(("eval_hash", digest),),
                members=tuple(group_members),
            )
        )
    # Most-used configurations first: there can be hundreds, and the page shows the top ones.
    groups.sort(key=lambda g: (-g.counts.attacks, g.key))
    return Breakdown(dimension, groups)


# --- heat map -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeatCell:
    """One cell of the heat map; ``params`` select its attacks (None: not expressible)."""

    counts: OutcomeCounts
    params: Params | None


@dataclass(frozen=True)
class HeatMap:
    """Success rate per (row group, column group) with n per cell."""

    rows: Dimension
    cols: Dimension
    row_keys: list[Any]
    col_keys: list[Any]
    cells: dict[tuple[Any, Any], HeatCell]
    label_key: str | None = None

    def cell(self, row: Any, col: Any) -> HeatCell | None:
        return self.cells.get((row, col))

    def label(self, dimension: Dimension, key: Any) -> str:
        return dimension.none_label if key is None else str(key)


def heatmap(scope: Scope, rows: str, cols: str, *, label_key: str | None = None) -> HeatMap:
    """Success rate for every combination of two dimensions. Two queries (one without an
    identifier-based axis); none between attack class, target model and scorer once the
    scope has read its :func:`attack_facts`."""
    if rows not in AXIS_DIMENSIONS or cols not in AXIS_DIMENSIONS:
        raise ValueError(f"heat map axes must be among {AXIS_DIMENSIONS}")
    row_dim, col_dim = DIMENSIONS[rows], DIMENSIONS[cols]
    if rows in FACT_FIELDS and cols in FACT_FIELDS and _facts_ready(scope):
        counts = _fact_counts(scope, (row_dim, col_dim))
    else:
        counts = _heat_counts(scope, row_dim, col_dim, label_key)
    return _place_cells(scope, row_dim, col_dim, counts, label_key)


def _heat_counts(
    scope: Scope, row_dim: Dimension, col_dim: Dimension, label_key: str | None
) -> dict[tuple[Any, Any], OutcomeCounts]:
    """Counts per (row name, column name) from a grouping of their own."""
    data = list(
        _grouping_source(scope, [row_dim, col_dim])
        .values(
            row=row_dim.expression(label_key),
            col=col_dim.expression(label_key),
            out=scope.outcome,
        )
        .annotate(count=Count("*"))
        .order_by()
    )
    names: dict[int, dict[str, Any]] = {}
    if row_dim.resolve or col_dim.resolve:
        names = identifier_names(
            [r["row"] for r in data if row_dim.resolve]
            + [r["col"] for r in data if col_dim.resolve]
        )
    counts: dict[tuple[Any, Any], OutcomeCounts] = defaultdict(OutcomeCounts)
    for r in data:
        key = (_name(row_dim, r["row"], names), _name(col_dim, r["col"], names))
        counts[key] = counts[key].with_outcome(r["out"], r["count"])
    return dict(counts)


def _place_cells(
    scope: Scope,
    row_dim: Dimension,
    col_dim: Dimension,
    counts: dict[tuple[Any, Any], OutcomeCounts],
    label_key: str | None,
) -> HeatMap:
    """The heat map of ``counts``, leaving out the groups the scope's filters cannot link."""
    cells: dict[tuple[Any, Any], HeatCell] = {}
    row_totals: dict[Any, int] = defaultdict(int)
    col_totals: dict[Any, int] = defaultdict(int)
    for (row, col), value in counts.items():
        if _restricted(scope, row_dim, row, label_key) or _restricted(
            scope, col_dim, col, label_key
        ):
            continue
        row_params = row_dim.group_params(row, label_key)
        col_params = col_dim.group_params(col, label_key)
        params = None if row_params is None or col_params is None else row_params + col_params
        cells[(row, col)] = HeatCell(value, params)
        row_totals[row] += value.attacks
        col_totals[col] += value.attacks

    def order(totals: dict[Any, int]) -> list[Any]:
        return sorted(totals, key=lambda k: (k is None, -totals[k], str(k)))

    return HeatMap(row_dim, col_dim, order(row_totals), order(col_totals), cells, label_key)


# --- trends -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrendPoint:
    """One period: its bounds, counts, and per-series counts."""

    start: datetime
    end: datetime
    counts: OutcomeCounts
    series: dict[Any, OutcomeCounts]
    params: Params


@dataclass(frozen=True)
class Trend:
    """Volume and success rate per hour, day or week, optionally split by target or attack
    class."""

    period: str
    split: Dimension | None
    points: list[TrendPoint]
    series_keys: list[Any]

    def label(self, point: TrendPoint) -> str:
        """The period's start as the page and the CSV name it: a date, or a date and hour."""
        local = timezone.localtime(point.start)
        if self.period == "hour":
            return local.strftime("%Y-%m-%d %H:%M")
        return local.date().isoformat()


def _period_params(scope: Scope, start: datetime, end: datetime) -> Params:
    """``timestamp_after``/``_before`` selecting [start, end), intersected with the scope's."""
    after = start
    before = end - timedelta(microseconds=1)
    for value in scope.values_of("timestamp_after")[-1:]:
        parsed = _parse_moment(value)
        if parsed and parsed > after:
            after = parsed
    for value in scope.values_of("timestamp_before")[-1:]:
        parsed = _parse_moment(value)
        if parsed and parsed < before:
            before = parsed
    return (("timestamp_after", after.isoformat()), ("timestamp_before", before.isoformat()))


def _parse_moment(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment


#: With ``period="auto"``, more days than this are shown as weeks.
AUTO_WEEKS_AFTER_DAYS = 120
#: With ``period="auto"``, attacks spanning at most this long are shown per hour: a day's
#: attacks drawn per day were one bar and one point.
AUTO_HOURS_UP_TO = timedelta(hours=48)
PERIODS = ("auto", "hour", "day", "week")


def trend(scope: Scope, *, period: str = "auto", split: str | None = None) -> Trend:
    """Attacks and success rate per hour, day or week (in the current time zone).

    ``period`` is "hour", "day", "week" (ISO weeks, from Monday) or "auto" (hours when the
    attacks span at most ``AUTO_HOURS_UP_TO``, weeks when they span more than
    ``AUTO_WEEKS_AFTER_DAYS`` days, days in between). ``split`` ("attack_class" or
    "target_model") adds one series per group. Periods without attacks between the first and
    the last are included (zero volume, no rate). One query, counts per day (per hour for
    "hour"), folded into longer periods here; "auto" first reads the first and last attack's
    time, and counts per hour only when that span asks for hours (grouping 100,000 attacks by
    hour and folding the hours cost 4× as much as grouping by day). With ``split``, one more
    for the series' names unless the scope has read its :func:`attack_facts`.
    """
    if period not in PERIODS:
        raise ValueError("period must be 'auto', 'hour', 'day' or 'week'")
    if split is not None and split not in TREND_SPLITS:
        raise ValueError(f"split must be one of {TREND_SPLITS}")
    tz = timezone.get_current_timezone()
    dimension = DIMENSIONS[split] if split else None
    hours = _rollup_hours(scope, tz) if dimension is None else None
    if period == "auto":
        period = _auto_period(scope, tz, hours)
    hourly = period == "hour"
    # Summed as plain integers per period (and series) and outcome; each period's start is
    # worked out once per distinct hour or day, not once per row.
    per_period: dict[datetime, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    per_series: dict[datetime, dict[Any, dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(int))
    )
    series_totals: dict[Any, int] = defaultdict(int)
    starts: dict[Any, datetime] = {}
    if hours is not None:
        for local, counts in hours.items():
            key = local if hourly else local.date()
            start = starts.get(key)
            if start is None:
                if not hourly:  # the local midnight of the hour's day, as the raw grouping's
                    local = timezone.make_aware(datetime(key.year, key.month, key.day), tz)
                start = starts[key] = _period_start(local, period, tz=tz)
            into = per_period[start]
            for out, n in counts.items():
                into[out] += n
    else:
        values: dict[str, Any] = {
            "start": _hour(scope, tz) if hourly else _day(scope, tz),
            "out": scope.outcome,
        }
        if dimension:
            values["series"] = dimension.expression()
        rows = list(scope.attacks.values(**values).annotate(count=Count("*")).order_by())
        names: dict[int, dict[str, Any]] = {}
        if dimension and _facts_ready(scope):
            names = fact_names(scope)  # the series are attack-class or target identifiers
        elif dimension:
            names = identifier_names(r["series"] for r in rows)
        for row in rows:
            start = starts.get(row["start"])
            if start is None:
                moment = row["start"]
                if isinstance(moment, str):
                    moment = timezone.make_aware(datetime.fromisoformat(moment), tz)
                start = starts[row["start"]] = _period_start(moment, period, tz=tz)
            out, count = row["out"], row["count"]
            per_period[start][out] += count
            if dimension:
                key = _name(dimension, row["series"], names)
                per_series[start][key][out] += count
                series_totals[key] += count
    points = []
    if per_period:
        step = timedelta(days=1 if period == "day" else 7)
        current, last = min(per_period), max(per_period)
        while current <= last:
            following = _next_hour(current, tz) if period == "hour" else _shift(current, step, tz)
            counts = per_period.get(current)
            points.append(
                TrendPoint(
                    start=current,
                    end=following,
                    counts=OutcomeCounts() if counts is None else OutcomeCounts.of(counts),
                    series={
                        key: OutcomeCounts.of(by_out)
                        for key, by_out in per_series.get(current, {}).items()
                    },
                    params=_period_params(scope, current, following),
                )
            )
            current = following
    keys = sorted(series_totals, key=lambda k: (k is None, -series_totals[k], str(k)))
    return Trend(period, dimension, points, keys)


def _rollup_hours(scope: Scope, tz: Any) -> dict[datetime, dict[str, int]] | None:
    """``{local start of the UTC hour: {outcome counted: attacks}}`` from the hour rollup, or
    None when the scope is filtered or ``tz`` puts some hour's start off a whole local hour (a
    half-hour offset): its days and hours are then not unions of UTC hours. One query, which
    sums the rollup's rows per hour and outcome counted (as :func:`_out` picks it)."""
    if not scope.counted:
        return None
    table, live, params = _rollup(scope, "hour")
    out = "CASE WHEN human <> '' THEN human ELSE outcome END"
    if scope.source != Source.HUMAN:
        out = "outcome"
    per_hour: dict[str, dict[str, int]] = defaultdict(dict)
    # PostgreSQL's SUM of a bigint is a numeric, read as a Decimal: cast back.
    for hour, outcome, n in _rollup_rows(
        scope,
        f"SELECT hour, {out}, CAST(SUM(n) AS BIGINT) FROM {table} WHERE {live} "
        f"GROUP BY hour, {out}",
        params,
    ):
        per_hour[hour][outcome] = n
    hours = {}
    for hour, counts in per_hour.items():
        local = datetime.fromisoformat(f"{hour}:00+00:00").astimezone(tz)
        if local.minute or local.second:
            return None
        hours[local] = counts
    return hours


def _auto_period(scope: Scope, tz: Any, hours: dict[datetime, Any] | None = None) -> str:
    """The period "auto" stands for: from the span between the hours (in ``tz``) of the
    scope's first and last attack. One query (none from the hour rollup's rows)."""
    if hours is not None:
        bounds = {"first": min(hours, default=None), "last": max(hours, default=None)}
    else:
        bounds = scope.attacks.order_by().aggregate(first=Min("timestamp"), last=Max("timestamp"))
    if bounds["first"] is None:
        return "hour"
    first, last = (
        timezone.localtime(bounds[end], tz).replace(minute=0, second=0, microsecond=0)
        for end in ("first", "last")
    )
    span = last - first
    if span <= AUTO_HOURS_UP_TO:
        return "hour"
    return "week" if span.days > AUTO_WEEKS_AFTER_DAYS else "day"


def _day(scope: Scope, tz: Any) -> Expression:
    """The attack's day in ``tz``.

    SQLite stores UTC text, so with a UTC time zone the day is its first ten characters — a
    native function, where ``TruncDay`` calls back into Python for every row.
    """
    if scope.vendor == "sqlite" and str(tz) in ("UTC", "Etc/UTC"):
        return Substr("timestamp", 1, 10)
    return TruncDay("timestamp", tzinfo=tz)


def _hour(scope: Scope, tz: Any) -> Expression:
    """The attack's hour in ``tz`` (on SQLite in UTC: the stored text's first 13 characters,
    as :func:`_day` does)."""
    if scope.vendor == "sqlite" and str(tz) in ("UTC", "Etc/UTC"):
        return Substr("timestamp", 1, 13)
    return TruncHour("timestamp", tzinfo=tz)


def _period_start(start: datetime, period: str, *, tz: Any) -> datetime:
    """The start of the ``period`` holding ``start`` (an hour's start for "hour", else a
    day's)."""
    if period in ("hour", "day"):
        return start
    return _week_start(start, tz)


def _next_hour(start: datetime, tz: Any) -> datetime:
    """One hour on in absolute time (local wall time repeats or skips an hour at DST)."""
    return timezone.localtime(start.astimezone(UTC) + timedelta(hours=1), tz)


def _shift(start: datetime, step: timedelta, tz: Any) -> datetime:
    """``start`` plus whole local days: across a DST change midnight stays midnight."""
    local = timezone.localtime(start, tz).replace(tzinfo=None) + step
    return timezone.make_aware(local, tz)


def _week_start(day: datetime, tz: Any) -> datetime:
    """Local midnight of the Monday of ``day``'s ISO week."""
    local = timezone.localtime(day, tz)
    return _shift(day, -timedelta(days=local.weekday()), tz)


# --- scorer analytics --------------------------------------------------------------------------


@dataclass
class ScorerDistribution:
    """One scorer class's scores in scope: float-scale histogram and true/false counts."""

    scorer: str
    bins: list[int] = field(default_factory=lambda: [0] * HISTOGRAM_BINS)
    true: int = 0
    false: int = 0
    undetermined: int = 0
    other: int = 0

    @property
    def float_count(self) -> int:
        return sum(self.bins)


def scorer_distributions(scope: Scope) -> list[ScorerDistribution]:
    """Per scorer class: histogram of float-scale values, true/false and undetermined counts.

    The scores at home in the scope's conversations, main and related (``scope_scores``); every
    score when nothing is filtered. Human scores (``reviewer`` set) are kept apart. Two queries.
    """
    if scope.counted:
        table, live, params = _rollup(scope, "score")
        rows = [
            {
                "scorer": scorer,
                "kind": kind,
                "bucket": bucket if valued else None,
                "human": bool(human),
                "count": n,
            }
            for scorer, kind, valued, bucket, human, n in _rollup_rows(
                scope,
                f"SELECT scorer, kind, valued, bucket, human, n FROM {table} WHERE {live}",
                params,
            )
        ]
    else:
        rows = _score_rows(scope)
    names = identifier_names(row["scorer"] for row in rows)
    return _distributions(rows, names)


def _score_rows(scope: Scope) -> list[dict[str, Any]]:
    """(scorer, kind, bucket, human, count) rows of the scope's scores, grouped."""
    # No value, no bucket: PostgreSQL's LEAST skips a NULL and would put it in the last bin.
    bucket = Case(
        When(numeric_value__isnull=True, then=Value(None)),
        default=Least(
            Cast(Floor(F("numeric_value") * HISTOGRAM_BINS), IntegerField()), HISTOGRAM_BINS - 1
        ),
        output_field=IntegerField(),
    )
    return list(
        scope_scores(scope)
        .values(
            scorer=id_key("scorer_class_identifier_id"),
            kind=F("score_type"),
            bucket=bucket,
            human=Q(reviewer__isnull=False),
        )
        .annotate(count=Count("*"))
        .order_by()
    )


def _distributions(
    rows: list[dict[str, Any]], names: dict[int, dict[str, Any]]
) -> list[ScorerDistribution]:
    out: dict[str, ScorerDistribution] = {}
    for row in rows:
        name = names[row["scorer"]]["class"] + (" (human)" if row["human"] else "")
        dist = out.setdefault(name, ScorerDistribution(name))
        if row["bucket"] is None:
            dist.undetermined += row["count"]
        elif row["kind"] == ScoreType.FLOAT_SCALE:
            dist.bins[row["bucket"]] += row["count"]
        elif row["kind"] == ScoreType.TRUE_FALSE:
            if row["bucket"] >= 1:
                dist.true += row["count"]
            else:
                dist.false += row["count"]
        else:
            dist.other += row["count"]
    return sorted(out.values(), key=lambda d: d.scorer)


@dataclass(frozen=True)
class ScorerAgreement:
    """Machine vs human judgement for one scorer, with drill-down parameters per cell."""

    scorer: str
    agreement: Agreement
    cell_params: dict[tuple[str, str], Params | None]


ATTACK_CATEGORIES = (
    AttackOutcome.SUCCESS.value,
    AttackOutcome.FAILURE.value,
    AttackOutcome.UNDETERMINED.value,
    AttackOutcome.ERROR.value,
)


def attack_agreement(scope: Scope) -> list[ScorerAgreement]:
    """Automated outcome vs the newest human verdict, per objective scorer (of the last score).

    Only attacks with a human verdict take part. Each cell's attacks are selected by
    ``scorer_class``, ``outcome`` and ``effective_outcome`` with ``has_human_verdict=true``
    (then the effective outcome is the verdict). Sums over :func:`attack_facts` once the
    scope has read them; else, unfiltered, one query over the fact rollup's reviewed rows, or,
    filtered, one over the few attacks with a verdict (the late part that shows this has no
    facts to share).
    """
    dimension = DIMENSIONS["scorer"]
    per_scorer: dict[Any, list[tuple[str, str, int]]] = defaultdict(list)
    if "facts" in scope.memo:
        names = fact_names(scope)
        for fact in attack_facts(scope):
            if fact.human is not None:
                scorer = _name(dimension, fact.scorer, names)
                per_scorer[scorer].append((fact.outcome, fact.human, fact.count))
    elif scope.counted:
        # The fact rollup's reviewed rows, named by a join (0: no last score, no class).
        identifiers = connections[scope.attacks.db].ops.quote_name(
            ComponentIdentifier._meta.db_table
        )
        table, live, params = _rollup(scope, "fact", "f")
        for scorer, machine, human, n in _rollup_rows(
            scope,
            f"SELECT i.class_name, f.outcome, f.human, CAST(SUM(f.n) AS BIGINT) "
            f"FROM {table} f LEFT JOIN {identifiers} i ON i.id = f.scorer "
            f"WHERE {live} AND f.human <> '' GROUP BY i.class_name, f.outcome, f.human",
            params,
        ):
            per_scorer[None if scorer is None else unescape_nul(scorer)].append((machine, human, n))
    else:
        rows = (
            scope.attacks.alias(_human=scope.human)
            .filter(_human__isnull=False)
            .values(
                scorer=F("last_score__scorer_class_identifier__class_name"),
                machine=F("outcome"),
                human=F("_human"),
            )
            .annotate(count=Count("*"))
            .order_by()
        )
        for row in rows:
            per_scorer[row["scorer"]].append((row["machine"], row["human"], row["count"]))
    out = []
    for scorer, triples in per_scorer.items():
        if _restricted(scope, dimension, scorer, None):
            continue
        matrix = agreement(triples, ATTACK_CATEGORIES)
        scorer_params = dimension.group_params(scorer)
        cell_params: dict[tuple[str, str], Params | None] = {}
        for machine in matrix.categories:
            for human in matrix.categories:
                cell_params[(machine, human)] = (
                    None
                    if scorer_params is None
                    else (
                        *scorer_params,
                        ("outcome", machine),
                        ("has_human_verdict", "true"),
                        ("effective_outcome", human),
                    )
                )
        out.append(
            ScorerAgreement(dimension.none_label if scorer is None else scorer, matrix, cell_params)
        )
    return sorted(out, key=lambda a: a.scorer)


SCORE_CATEGORIES = ("true", "false")
#: A float-scale score counts as "true" (harmful, objective met) from this value up.
FLOAT_THRESHOLD = 0.5


def _score_label(score_type: str, value: float | None) -> str | None:
    if value is None:
        return None
    if score_type == ScoreType.FLOAT_SCALE:
        return "true" if value >= FLOAT_THRESHOLD else "false"
    if score_type == ScoreType.TRUE_FALSE:
        return "true" if value >= 1 else "false"
    return None


def score_agreement(scope: Scope) -> list[ScorerAgreement]:
    """Automated scores vs human scores (``Score.reviewer`` set) on the same piece, per scorer.

    Pairs a human score with every automated score of the same type on the same piece
    (``message_piece_id``); float-scale values count as true from ``FLOAT_THRESHOLD``. The
    filter contract has no score-level parameters, so cells carry no drill-down. Two queries
    (three with filters): the human scores, which of their pieces are in scope, the automated
    scores on those pieces.
    """
    # Human scores are few (reviewers write them by hand): read them all through the
    # reviewer index, then keep those whose piece is in scope, by id. Joined in one query,
    # PostgreSQL hashes every piece of the scope instead.
    human_scores = Score.objects.filter(reviewer__isnull=False, numeric_value__isnull=False)
    humans = list(human_scores.values_list("message_piece_id", "score_type", "numeric_value"))
    pieces = {piece_id for piece_id, _, _ in humans if piece_id is not None}
    if scope.filtered:
        # Correlated EXISTS, so both databases start from these few pieces (by index) and ask
        # of each whether an attack in scope owns its conversation, main or related.
        conversation = OuterRef("message__conversation_id")
        main = scope.attacks.filter(conversation_id=conversation)
        related = RelatedConversation.objects.filter(conversation_id=conversation).filter(
            Exists(scope.attacks.filter(pk=OuterRef("attack_result_id")))
        )
        pieces = set(
            MessagePiece.objects.filter(original_prompt_id__in=list(pieces) or [uuid.UUID(int=0)])
            .filter(Exists(main) | Exists(related))
            .values_list("original_prompt_id", flat=True)
        )
    by_piece: dict[Any, list[tuple[str, float]]] = defaultdict(list)
    for piece_id, score_type, value in humans:
        if piece_id in pieces:
            by_piece[piece_id].append((score_type, value))
    if scope.filtered:
        # The nil UUID is never a piece id: it keeps the query (and the count) when empty.
        on_pieces: Any = list(by_piece) or [uuid.UUID(int=0)]
    else:
        # Every human score's piece: as a subquery, not a parameter per piece.
        on_pieces = human_scores.values("message_piece_id")
    machine_scores = (
        Score.objects.filter(
            message_piece_id__in=on_pieces, reviewer__isnull=True, numeric_value__isnull=False
        )
        .values_list(
            "message_piece_id", "score_type", "numeric_value", "scorer_class_identifier__class_name"
        )
        .order_by()
    )
    triples: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    for piece_id, score_type, value, scorer in machine_scores:
        machine = _score_label(score_type, value)
        for human_type, human_value in by_piece.get(piece_id, []):
            human = _score_label(human_type, human_value)
            if human_type != score_type or machine is None or human is None:
                continue
            triples[scorer][(machine, human)] += 1
    return [
        ScorerAgreement(
            scorer,
            agreement(((m, h, c) for (m, h), c in pairs.items()), SCORE_CATEGORIES),
            {},
        )
        for scorer, pairs in sorted(triples.items())
    ]
