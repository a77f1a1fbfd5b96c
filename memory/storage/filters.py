"""Filtersets of the memory models: one per model, shared by the API and (later) the pages.

Parameter names are the same on every endpoint that has the field: ``labels=key:value`` and
``harm_category`` (both repeatable, ANDed), ``timestamp_after`` / ``timestamp_before``
(ISO-8601, inclusive), ``identifier`` / ``eval_hash`` (64-hex hashes) and ``q``. A value that
does not parse is a 400 naming the parameter, never an empty result.

``q`` is a plain case-insensitive substring match (SQL ``LIKE``) over the main text fields
listed on each filterset; it scans, so narrow by an indexed filter (time range, conversation,
labels) on large memories.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import CharField, Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import Coalesce
from drf_spectacular.utils import extend_schema_field

from memory.models import (
    AttackResult,
    ComponentIdentifier,
    Conversation,
    HarmCategory,
    Label,
    Message,
    MessagePiece,
    PieceConverter,
    RelatedConversation,
    ScenarioResult,
    Score,
)
from memory.storage.crosswalk import crosswalk_current, harm_key
from redteam.core.choices import (
    AttackOutcome,
    ChatMessageRole,
    ConversationType,
    PromptDataType,
    PromptResponseError,
    ScenarioRunState,
    ScoreStatus,
    ScoreType,
)
from redteam.core.filters import (
    HarmCategoryFilter,
    HashFilter,
    IsoDateTimeFilter,
    JSONListFilter,
    LabelPairsField,
    RepeatedValueField,
    StrictBooleanFilter,
    text_search,
)

#: Above this many matching pieces an identifier-class filter walks the pieces in page order.
WALK_AFTER = 1000

# --- filters on memory's own index tables -------------------------------------------------


class LabelsFilter(django_filters.Filter):
    """``labels=key:value``, repeatable, all required: one indexed join per pair.

    ``field_name`` is the path to a ``Label`` many-to-many (``label_index``). The pairs are
    looked up first (one query) and the links filtered by label id: a constant id lets
    PostgreSQL use its statistics of that label, so a rare label is read from the link index
    (0.3 ms) instead of walking every attack in time order for a guessed-at frequency (200 ms
    at 100,000 attacks, bench/attack_list.py). Each pair is its own ``filter()`` call, so
    each gets its own join: no duplicate rows, and AND semantics. An unknown pair matches
    nothing.
    """

    field_class = LabelPairsField

    def filter(self, qs: QuerySet, value: list[tuple[str, str]]) -> QuerySet:
        if not value:
            return qs
        wanted = Q()
        for key, label_value in value:
            wanted |= Label.matching(key, label_value)
        ids = {
            (k, v): pk
            for pk, k, v in Label.objects.filter(wanted).values_list("pk", "key", "value")
        }
        for pair in value:
            if pair not in ids:
                return qs.none()
            qs = qs.filter(**{self.field_name: ids[pair]})
        return qs


class ModelNameFilter(django_filters.CharFilter):
    """``target_model=name``: ``field_name`` (a ``ComponentIdentifier`` foreign key) is one of
    the identifiers whose params name this model.

    The identifiers are looked up first (one query on the small identifier table), as labels
    are: filtered by constant ids, PostgreSQL no longer hash-joins every conversation to the
    identifier table to test a JSON value (a label + target scope: 48 → 28 ms at 100,000
    attacks). An unknown model matches nothing.
    """

    def filter(self, qs: QuerySet, value: str) -> QuerySet:
        if not value:
            return qs
        ids = list(
            ComponentIdentifier.objects.filter(params__model_name=value).values_list(
                "pk", flat=True
            )
        )
        if not ids:
            return qs.none()
        return qs.filter(**{f"{self.field_name}__in": ids})


@extend_schema_field({"type": "array", "items": {"type": "string"}})
class FrameworkFilter(django_filters.Filter):
    """``framework=owasp-llm:LLM01``, repeatable, all required: the attacks the crosswalk maps
    to that framework entry, through a targeted harm category or the attack class.

    The crosswalk (one query), the harm-category names (one query on the small lookup table,
    matched case-insensitively in Python so both databases agree on every alphabet) and the
    attack identifiers of the mapped classes (one query) are read first; the attacks are then
    ``attack identifier IN (ids) OR id IN (links of the harm ids)``. An entry nothing maps to,
    or an unknown tag, matches nothing.
    """

    field_class = RepeatedValueField
    #: Attack identifier ids sent as constants at most; beyond, the database reads them itself.
    MAX_IDS = 1000

    def filter(self, qs: QuerySet, value: list[str]) -> QuerySet:
        if not value:
            return qs
        walk = crosswalk_current()
        harm_ids: dict[str, list[int]] = {}
        for pk, name in HarmCategory.objects.values_list("pk", "name"):
            harm_ids.setdefault(harm_key(name), []).append(pk)
        links = AttackResult.harm_category_index.through.objects
        for tag in value:
            harms, techniques = walk.sources(tag)
            wanted = Q()
            ids = [pk for harm in harms for pk in harm_ids.get(harm, [])]
            if ids:
                wanted |= Q(pk__in=links.filter(harmcategory_id__in=ids).values("attackresult_id"))
            if techniques:
                classes = ComponentIdentifier.objects.filter(class_name__in=techniques)
                strategies = list(classes.values_list("pk", flat=True)[: self.MAX_IDS + 1])
                if len(strategies) > self.MAX_IDS:
                    wanted |= Q(attack_identifier_id__in=classes.values("pk"))
                elif strategies:
                    wanted |= Q(attack_identifier_id__in=strategies)
            if not wanted:
                return qs.none()
            qs = qs.filter(wanted)
        return qs


# --- filtersets ---------------------------------------------------------------------------------


class ConversationFilter(django_filters.FilterSet):
    """Conversations. ``q`` matches the original or converted value of any of their pieces.

    ``has_attack_result`` (true/false): the conversation is (or is not) the main conversation
    of an attack result. ``related_type`` (repeatable, any of): the conversation is referenced
    by an attack as that kind of related conversation (``adversarial``, ``pruned``, ``score``,
    ``converter``).
    """

    conversation_id = django_filters.CharFilter()
    labels = LabelsFilter(field_name="label_index")
    harm_category = HarmCategoryFilter(field_name="harm_category_index")
    target_class = django_filters.CharFilter(field_name="target_identifier__class_name")
    target_model = ModelNameFilter(field_name="target_identifier")
    identifier = HashFilter(field_name="target_identifier__hash")
    attack_class = django_filters.CharFilter(method="filter_attack_class")
    outcome = django_filters.MultipleChoiceFilter(
        choices=AttackOutcome.choices, method="filter_outcome"
    )
    has_attack_result = StrictBooleanFilter(method="filter_has_attack_result")
    related_type = django_filters.MultipleChoiceFilter(
        choices=ConversationType.choices, method="filter_related_type"
    )
    timestamp_after = IsoDateTimeFilter(field_name="started_at", lookup_expr="gte")
    timestamp_before = IsoDateTimeFilter(field_name="started_at", lookup_expr="lte")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = Conversation
        fields: list[str] = []

    def filter_has_attack_result(self, qs: QuerySet, name: str, value: bool | None) -> QuerySet:
        if value is None:
            return qs
        attacks = Exists(AttackResult.objects.filter(conversation=OuterRef("pk")))
        return qs.filter(attacks if value else ~attacks)

    def filter_related_type(self, qs: QuerySet, name: str, value: list[str]) -> QuerySet:
        """Conversations an attack references as one of these related-conversation types."""
        if not value:
            return qs
        links = RelatedConversation.objects.filter(
            conversation=OuterRef("pk"), conversation_type__in=value
        )
        return qs.filter(Exists(links))

    def filter_attack_class(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        """Conversations that are the main conversation of an attack of this class."""
        attacks = AttackResult.objects.filter(
            conversation=OuterRef("pk"), attack_identifier__class_name=value
        )
        return qs.filter(Exists(attacks))

    def filter_outcome(self, qs: QuerySet, name: str, value: list[str]) -> QuerySet:
        """Conversations that are the main conversation of an attack with one of these outcomes."""
        if not value:
            return qs
        attacks = AttackResult.objects.filter(conversation=OuterRef("pk"), outcome__in=value)
        return qs.filter(Exists(attacks))

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        pieces = text_search(
            MessagePiece.objects.filter(message__conversation=OuterRef("pk")),
            ("original_value", "converted_value"),
            value,
        )
        return qs.filter(Exists(pieces)) if value.strip() else qs


class MessagePieceFilter(django_filters.FilterSet):
    """Message pieces. Labels and harm categories are those of the piece's conversation.

    ``data_type`` matches the original or the converted type; ``identifier`` / ``eval_hash``
    match any identifier of the piece (target, attack, scorer or a converter);
    ``scorer_class`` keeps pieces scored by that scorer. ``q``: original or converted value.
    """

    conversation_id = django_filters.CharFilter(field_name="message__conversation__conversation_id")
    # distinct=False on the choice filters: each matches a column of the piece or of its one
    # message, so no row can repeat, and SELECT DISTINCT made the database sort every match
    # before cutting the page (18 s for role=user at 1,000,000 pieces on SQLite).
    role = django_filters.MultipleChoiceFilter(
        choices=ChatMessageRole.choices, method="filter_role", distinct=False
    )
    data_type = django_filters.MultipleChoiceFilter(
        choices=PromptDataType.choices, method="filter_data_type"
    )
    original_value_data_type = django_filters.MultipleChoiceFilter(
        choices=PromptDataType.choices, distinct=False
    )
    converted_value_data_type = django_filters.MultipleChoiceFilter(
        choices=PromptDataType.choices, distinct=False
    )
    response_error = django_filters.MultipleChoiceFilter(
        choices=PromptResponseError.choices, method="filter_response_error", distinct=False
    )
    labels = LabelsFilter(field_name="message__conversation__label_index")
    harm_category = HarmCategoryFilter(field_name="message__conversation__harm_category_index")
    attack_class = django_filters.CharFilter(method="filter_identifier_class")
    target_class = django_filters.CharFilter(method="filter_identifier_class")
    target_model = ModelNameFilter(field_name="prompt_target_identifier")
    converter_class = django_filters.CharFilter(method="filter_converter_class")
    scorer_class = django_filters.CharFilter(method="filter_scorer_class")
    identifier = HashFilter(method="filter_identifier")
    eval_hash = HashFilter(method="filter_eval_hash")
    original_prompt_id = django_filters.UUIDFilter()
    timestamp_after = IsoDateTimeFilter(field_name="timestamp", lookup_expr="gte")
    timestamp_before = IsoDateTimeFilter(field_name="timestamp", lookup_expr="lte")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = MessagePiece
        fields: list[str] = []

    def filter_data_type(self, qs: QuerySet, name: str, value: list[str]) -> QuerySet:
        if not value:
            return qs
        return qs.filter(
            Q(original_value_data_type__in=value) | Q(converted_value_data_type__in=value)
        )

    def filter_role(self, qs: QuerySet, name: str, value: list[str]) -> QuerySet:
        # A test of the piece's own message, not a join: with the join, SQLite's planner
        # drove the query from the message table (every message of that role, their pieces,
        # then a sort of all of them before the page's LIMIT: 533 ms of CPU for role=user at
        # 1,000,000 pieces); with EXISTS it walks the pieces in the page's order and stops
        # when the page is full.
        messages = Message.objects.filter(pk=OuterRef("message_id"), role__in=value)
        return qs.filter(Exists(messages))

    def filter_identifier_class(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        """The piece's attack (``attack_class``) or target (``target_class``) identifier has
        this class name.

        The identifiers are looked up first (one query on the small identifier table; an
        unknown class matches nothing). When more than :data:`WALK_AFTER` pieces have one of
        them (one capped count on the column's index), each piece is tested with ``EXISTS``
        so that SQLite walks the pieces in the page's order and stops when the page is full;
        with the join it drove the query from the identifier's pieces and sorted all of them
        before the page's ``LIMIT`` (281 ms of CPU for an attack class most of 1,000,000
        pieces have). Fewer matches keep the ``IN`` list, whose sort is small, where the walk
        would read most of the table to find them.
        """
        column = "attack_identifier_id" if name == "attack_class" else "prompt_target_identifier_id"
        ids = list(
            ComponentIdentifier.objects.filter(class_name=value).values_list("pk", flat=True)
        )
        if not ids:
            return qs.none()
        listed = {f"{column}__in": ids}
        # A sliced count stops after WALK_AFTER + 1 rows (SELECT COUNT(*) FROM (… LIMIT n)).
        if MessagePiece.objects.filter(**listed)[: WALK_AFTER + 1].count() <= WALK_AFTER:
            return qs.filter(**listed)
        identifiers = ComponentIdentifier.objects.filter(pk=OuterRef(column), pk__in=ids)
        return qs.filter(Exists(identifiers))

    def filter_response_error(self, qs: QuerySet, name: str, value: list[str]) -> QuerySet:
        qs = qs.filter(response_error__in=value)
        if PromptResponseError.NONE in value:
            return qs
        # Repeats memory_piece_error_idx's condition, which the values already imply: SQLite
        # uses a partial index only when the query spells out its WHERE term (it does not
        # infer "<> 'none'" from "= 'blocked'"), and otherwise read every piece looking for
        # an error (1 s of CPU at 1,000,000 pieces when none matches).
        return qs.exclude(response_error=PromptResponseError.NONE)

    def filter_converter_class(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        links = PieceConverter.objects.filter(piece=OuterRef("pk"), identifier__class_name=value)
        return qs.filter(Exists(links))

    def filter_scorer_class(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        scores = Score.objects.filter(
            message_piece_id=OuterRef("original_prompt_id"),
            scorer_class_identifier__class_name=value,
        )
        return qs.filter(Exists(scores))

    def _any_identifier(self, qs: QuerySet, lookup: str, value: str) -> QuerySet:
        links = PieceConverter.objects.filter(
            piece=OuterRef("pk"), **{f"identifier__{lookup}": value}
        )
        return qs.filter(
            Q(**{f"prompt_target_identifier__{lookup}": value})
            | Q(**{f"attack_identifier__{lookup}": value})
            | Q(**{f"scorer_identifier__{lookup}": value})
            | Exists(links)
        )

    def filter_identifier(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return self._any_identifier(qs, "hash", value) if value else qs

    def filter_eval_hash(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return self._any_identifier(qs, "eval_hash", value) if value else qs

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return text_search(qs, ("original_value", "converted_value"), value)


class ScoreFilter(django_filters.FilterSet):
    """Scores. ``score_value_min`` / ``_max`` bound the value as a number (true = 1, false = 0);
    ``conversation_id`` keeps scores of that conversation's pieces; ``q``: rationale or
    objective.
    """

    conversation_id = django_filters.CharFilter(method="filter_conversation_id")
    message_piece_id = django_filters.UUIDFilter()
    score_type = django_filters.MultipleChoiceFilter(choices=ScoreType.choices)
    status = django_filters.MultipleChoiceFilter(choices=ScoreStatus.choices)
    score_value_min = django_filters.NumberFilter(field_name="numeric_value", lookup_expr="gte")
    score_value_max = django_filters.NumberFilter(field_name="numeric_value", lookup_expr="lte")
    score_category = JSONListFilter(field_name="score_category")
    scorer_class = django_filters.CharFilter(field_name="scorer_class_identifier__class_name")
    identifier = HashFilter(field_name="scorer_class_identifier__hash")
    eval_hash = HashFilter(field_name="scorer_class_identifier__eval_hash")
    timestamp_after = IsoDateTimeFilter(field_name="timestamp", lookup_expr="gte")
    timestamp_before = IsoDateTimeFilter(field_name="timestamp", lookup_expr="lte")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = Score
        fields: list[str] = []

    def filter_conversation_id(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        pieces = MessagePiece.objects.filter(message__conversation__conversation_id=value)
        return qs.filter(message_piece_id__in=pieces.values("original_prompt_id"))

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return text_search(qs, ("score_rationale", "objective"), value)


#: What ``memory.storage.queues.with_seen_human_outcome`` annotates (it imports this module).
SEEN_HUMAN_OUTCOME = "seen_human_outcome"


def human_outcome_field(qs: QuerySet) -> str:
    """The human outcome the filters read: the one blind review lets the user see when the
    caller annotated it (``queues.with_seen_human_outcome``), else the stored column."""
    return SEEN_HUMAN_OUTCOME if SEEN_HUMAN_OUTCOME in qs.query.annotations else "human_outcome"


class AttackResultFilter(django_filters.FilterSet):
    """Attack results: the one filterset behind the API, the attack list and dashboard drill-down.

    ``outcome`` is the automated outcome PyRIT recorded; ``effective_outcome`` is the newest
    human verdict where one exists, else the automated outcome (what lists show).
    ``target_*`` are those of the main conversation; ``identifier`` / ``eval_hash`` match the
    attack or the atomic-attack identifier; ``scorer_*`` is the scorer of the last score;
    ``converter_class`` matches any converter in the chain of any piece of the main
    conversation; ``dataset`` is a seed dataset holding a seed whose content hash equals the
    objective's. ``framework`` is a crosswalk entry's tag (``owasp-llm:LLM01``): attacks whose
    targeted harm categories or attack class map to it. ``scenario`` is the owning scenario
    result's id, ``atomic_attack`` the collection PyRIT filed the result under in it.
    ``push_source``: the id of the ``PushSource`` (machine and database) a ``redline-push``
    created it from. ``q``: the objective.
    """

    conversation_id = django_filters.CharFilter(field_name="conversation__conversation_id")
    # distinct=False: both match a column of the attack itself, so no row can repeat, and a
    # DISTINCT made PostgreSQL de-duplicate the matches before the page's LIMIT.
    outcome = django_filters.MultipleChoiceFilter(choices=AttackOutcome.choices, distinct=False)
    effective_outcome = django_filters.MultipleChoiceFilter(
        choices=AttackOutcome.choices, method="filter_effective_outcome", distinct=False
    )
    has_human_verdict = StrictBooleanFilter(method="filter_has_human_verdict")
    labels = LabelsFilter(field_name="label_index")
    harm_category = HarmCategoryFilter(field_name="harm_category_index")
    framework = FrameworkFilter()
    attack_class = django_filters.CharFilter(field_name="attack_identifier__class_name")
    target_class = django_filters.CharFilter(
        field_name="conversation__target_identifier__class_name"
    )
    target_model = ModelNameFilter(field_name="conversation__target_identifier")
    target_hash = HashFilter(field_name="conversation__target_identifier__hash")
    converter_class = django_filters.CharFilter(method="filter_converter_class")
    scorer_class = django_filters.CharFilter(method="filter_last_scorer")
    scorer_hash = HashFilter(method="filter_last_scorer")
    dataset = django_filters.CharFilter(method="filter_dataset")
    identifier = HashFilter(method="filter_identifier")
    eval_hash = HashFilter(method="filter_eval_hash")
    timestamp_after = IsoDateTimeFilter(field_name="timestamp", lookup_expr="gte")
    timestamp_before = IsoDateTimeFilter(field_name="timestamp", lookup_expr="lte")
    scenario = django_filters.UUIDFilter(field_name="attribution_parent")
    atomic_attack = django_filters.CharFilter(field_name="attribution_data__parent_collection")
    push_source = django_filters.NumberFilter(field_name="push_source")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = AttackResult
        fields: list[str] = []

    def filter_effective_outcome(self, qs: QuerySet, name: str, value: list[str]) -> QuerySet:
        """The newest human verdict if any, else the automated outcome, is one of ``value``.

        ``COALESCE(human_outcome, outcome) IN (…)`` reads no index, so a list sorted by time
        walks the time index and stops at a page's worth of matches; the equivalent
        ``human IN v OR (human IS NULL AND outcome IN v)`` made SQLite collect and sort every
        match first (40 ms of CPU per 20,000 on SQLite, bench/attack_list.py).
        """
        if not value:
            return qs
        # output_field: the blind-review annotation is a plain CharField, unlike the columns.
        effective = Coalesce(human_outcome_field(qs), "outcome", output_field=CharField())
        return qs.alias(_effective_outcome=effective).filter(_effective_outcome__in=value)

    def filter_has_human_verdict(self, qs: QuerySet, name: str, value: bool | None) -> QuerySet:
        """Reviewed (a human outcome the user may see) or not."""
        if value is None:
            return qs
        return qs.filter(**{f"{human_outcome_field(qs)}__isnull": not value})

    def filter_converter_class(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        """Any piece of the main conversation went through a converter of this class.

        ``conversation IN (…)`` read from ``Conversation.converter_index`` (class -> identifiers
        -> indexed conversation links), which ingestion keeps; not from the converter links of
        every piece, which cost in proportion to all converted pieces (bench/attack_list.py).
        An IN list also never repeats an attack.
        """
        if not value:
            return qs
        used = Conversation.converter_index.through.objects.filter(
            componentidentifier__class_name=value
        ).values("conversation_id")
        return qs.filter(conversation_id__in=used)

    def filter_last_scorer(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        """The last score's scorer has this class name (``scorer_class``) or hash.

        The scorer identifiers are looked up first (one query on the small identifier table);
        the attacks are then those whose ``last_scorer`` (the last score's scorer, kept on the
        attack by ingestion) is one of them. A list in time order reads them from the index
        (last scorer, time) and stops at a page's worth; reaching them through the scorer's
        scores cost a visit of each of its scores, most of them not last scores (a refusal
        scorer judging every response: 1.8× the 100 ms budget, docs/performance.md,
        "Attack list"). An unknown scorer matches nothing.
        """
        if not value:
            return qs
        lookup = "class_name" if name == "scorer_class" else "hash"
        scorers = list(
            ComponentIdentifier.objects.filter(**{lookup: value}).values_list("pk", flat=True)
        )
        if not scorers:
            return qs.none()
        return qs.filter(last_scorer__in=scorers)

    def filter_dataset(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        if not value:
            return qs
        from seeds.models import Seed

        in_dataset = Seed.objects.filter(
            Q(dataset__name=value) | Q(dataset__isnull=True, dataset_name=value),
            value_sha256=OuterRef("objective_sha256"),
        )
        return qs.filter(Exists(in_dataset))

    def filter_identifier(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        if not value:
            return qs
        return qs.filter(Q(attack_identifier__hash=value) | Q(atomic_attack_identifier__hash=value))

    def filter_eval_hash(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        if not value:
            return qs
        return qs.filter(
            Q(attack_identifier__eval_hash=value) | Q(atomic_attack_identifier__eval_hash=value)
        )

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return text_search(qs, ("objective",), value)


#: Sort keys of attack lists (``sort=``) -> (column expression, may be NULL); ``-key``
#: descends. The attack list, its downloads and review queues order by them.
ATTACK_SORTS: dict[str, tuple[Any, bool]] = {
    "time": (F("timestamp"), False),
    "outcome": (Coalesce("human_outcome", "outcome"), False),
    "objective": (F("objective"), False),
    "attack": (F("attack_identifier__class_name"), True),
    "turns": (F("executed_turns"), False),
    "duration": (F("execution_time_ms"), False),
    "score": (F("last_score__numeric_value"), True),
}
ATTACK_DEFAULT_SORT = "-time"


class ComponentIdentifierFilter(django_filters.FilterSet):
    """Identifiers by class, module and hashes. ``q``: class name or module."""

    class_name = django_filters.CharFilter()
    class_module = django_filters.CharFilter()
    hash = HashFilter()
    eval_hash = HashFilter()
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = ComponentIdentifier
        fields: list[str] = []

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return text_search(qs, ("class_name", "class_module"), value)


class ScenarioResultFilter(django_filters.FilterSet):
    """Scenario runs: ``state`` (repeatable), ``scenario`` (its name), ``target_model``,
    ``created_after`` / ``created_before``, ``q`` (name or description)."""

    state = django_filters.MultipleChoiceFilter(
        field_name="scenario_run_state", choices=ScenarioRunState.choices
    )
    scenario = django_filters.CharFilter(field_name="scenario_name")
    target_model = ModelNameFilter(field_name="objective_target_identifier")
    created_after = IsoDateTimeFilter(field_name="creation_time", lookup_expr="gte")
    created_before = IsoDateTimeFilter(field_name="creation_time", lookup_expr="lte")
    q = django_filters.CharFilter(method="filter_q")

    class Meta:
        model = ScenarioResult
        fields: list[str] = []

    def filter_q(self, qs: QuerySet, name: str, value: str) -> QuerySet:
        return qs.filter(
            Q(scenario_name__icontains=value) | Q(scenario_description__icontains=value)
        )
