"""Reads on PyRIT memory that need more than one QuerySet."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import (
    Count,
    Exists,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Substr

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
    Score,
)
from redteam.core import identifiers as ids
from redteam.core.choices import ChatMessageRole
from redteam.core.pagination import capped_count
from redteam.core.stats import OutcomeCounts
from redteam.core.uuids import parse_uuid


def identifiers_load(*, hashes: Iterable[str]) -> dict[str, ids.ComponentIdentifier]:
    """Rebuild PyRIT identifiers (with their whole child trees) for the given hashes.

    One query per tree level: children are fetched by the hashes in their parents'
    ``children`` JSON. Hashes that are not stored are left out of the result.
    """
    rows: dict[str, ComponentIdentifier] = {}
    wanted = set(hashes)
    while wanted:
        found = ComponentIdentifier.objects.by_hash(list(wanted))
        rows.update(found)
        wanted = set()
        for row in found.values():
            for value in row.children.values():
                for child_hash in value if isinstance(value, list) else [value]:
                    if child_hash not in rows:
                        wanted.add(child_hash)

    built: dict[str, ids.ComponentIdentifier] = {}

    def build(digest: str) -> ids.ComponentIdentifier:
        if digest not in built:
            row = rows[digest]
            built[digest] = ids.ComponentIdentifier(
                class_name=row.class_name,
                class_module=row.class_module,
                params=row.params,
                children={
                    name: [build(h) for h in value] if isinstance(value, list) else build(value)
                    for name, value in row.children.items()
                },
                attributes=row.attributes,
                pyrit_version=row.pyrit_version,
                eval_hash=row.eval_hash,
                hash=row.hash,
            )
        return built[digest]

    return {digest: build(digest) for digest in rows}


def identifier_dicts_for(*, pks: Iterable[int | None]) -> dict[int, dict[str, Any]]:
    """PyRIT's flat ``to_dict()`` of the identifier rows ``pks``, with whole child trees.

    For a page of API rows: one query for the rows themselves, then one per tree level
    below them (:func:`identifiers_load`), however many rows the page has. ``None`` and
    unknown keys are skipped. The dicts may be shared between rows; treat them as read-only.
    """
    wanted = {pk for pk in pks if pk is not None}
    if not wanted:
        return {}
    return identifier_dicts_of(rows=ComponentIdentifier.objects.filter(pk__in=wanted))


def identifier_dicts_of(*, rows: Iterable[ComponentIdentifier]) -> dict[int, dict[str, Any]]:
    """:func:`identifier_dicts_for` of rows already loaded: one query per tree level below."""
    roots = list(rows)
    child_hashes = {
        child_hash
        for row in roots
        for value in row.children.values()
        for child_hash in (value if isinstance(value, list) else [value])
    }
    children = identifiers_load(hashes=child_hashes) if child_hashes else {}

    def child(digest: str) -> ids.ComponentIdentifier | None:
        return children.get(digest)

    result: dict[int, dict[str, Any]] = {}
    for row in roots:
        tree: dict[str, ids.ComponentIdentifier | list[ids.ComponentIdentifier]] = {}
        for name, value in row.children.items():
            if isinstance(value, list):
                tree[name] = [node for node in map(child, value) if node is not None]
            elif (node := child(value)) is not None:
                tree[name] = node
        result[row.pk] = ids.ComponentIdentifier(
            class_name=row.class_name,
            class_module=row.class_module,
            params=row.params,
            children=tree,
            attributes=row.attributes,
            pyrit_version=row.pyrit_version,
            eval_hash=row.eval_hash,
            hash=row.hash,
        ).to_dict()
    return result


def scores_for_pieces(*, pieces: Iterable[MessagePiece]) -> dict[uuid.UUID, list[Score]]:
    """The scores visible on ``pieces``, keyed by ``original_prompt_id`` (contract §6.4).

    One query for any number of pieces; each list is in time order.
    """
    keys = {piece.original_prompt_id for piece in pieces}
    if not keys:
        return {}
    found: dict[uuid.UUID, list[Score]] = {}
    for score in Score.objects.filter(message_piece_id__in=keys).order_by("timestamp", "id"):
        found.setdefault(score.message_piece_id, []).append(score)
    return found


def conversation_pieces(*, conversation: Conversation) -> list[MessagePiece]:
    """Every piece of ``conversation`` in PyRIT order, with its converter chain.

    Two queries: the ordered pieces (with message and media joined) and the converter links.
    """
    return list(
        MessagePiece.objects.of_conversation(conversation.conversation_id)
        .select_related("message__conversation", "original_media", "converted_media")
        .prefetch_related(piece_converters_prefetch())
    )


def piece_converters_prefetch() -> Prefetch:
    """The converter links of pieces, in applied order (``converter_identifiers``)."""
    return Prefetch("converters", queryset=PieceConverter.objects.order_by("position"))


# --- list pages: attacks, conversations, search -------------------------------------------------

#: Label pairs offered in a list's filter panel; past this many the field is typed by hand.
LABEL_OPTION_LIMIT = 300


def attack_list_queryset(*, queryset: QuerySet[AttackResult] | None = None) -> QuerySet:
    """Attack results with everything one list row shows, joined in the same query.

    The row reads the main conversation's target, the attack identifier and the last score
    with its scorer; labels and harm categories come from the attack's own JSON columns, so a
    page of any size is one query.
    """
    base = AttackResult.objects.all() if queryset is None else queryset
    return base.select_related(
        "conversation__target_identifier",
        "attack_identifier",
        "last_score__scorer_class_identifier",
        "attribution_parent",
    )


#: The identifier roles the attack list's filter panel offers choices for.
IDENTIFIER_ROLES = ("attack", "target", "scorer", "converter")


def attack_filter_options(*, roles: tuple[str, ...] = IDENTIFIER_ROLES) -> dict[str, list[Any]]:
    """The choices of the attack list's filter panel, from what is stored.

    ``roles`` narrows the identifier choices to those a panel shows (the others come back
    empty): the dashboard's offers attack classes and target models only.

    Small queries, each driven by a small table (identifiers, labels, harm categories,
    datasets) probing an index of the large one, so their cost does not grow with the number
    of attacks. The identifier query is a UNION ALL of one semi-join per role (attack,
    target, converter): as separate ``EXISTS`` columns of one SELECT, PostgreSQL ran each as
    a sequential scan per identifier (1.5 s on 100,000 attacks). Scorers come from
    :func:`last_score_scorer_classes`.
    """
    from seeds.models import SeedDataset

    def used_as(role: str, exists: Exists) -> QuerySet:
        return (
            ComponentIdentifier.objects.filter(exists)
            .annotate(role=Value(role))
            .values_list("role", "class_name", "params")
        )

    semi_joins = {
        "attack": Exists(AttackResult.objects.filter(attack_identifier=OuterRef("pk"))),
        "target": Exists(Conversation.objects.filter(target_identifier=OuterRef("pk"))),
        "converter": Exists(PieceConverter.objects.filter(identifier=OuterRef("pk"))),
    }
    wanted = [used_as(role, exists) for role, exists in semi_joins.items() if role in roles]
    used = wanted[0].union(*wanted[1:], all=True) if wanted else []
    found: dict[str, set[str]] = {"attack": set(), "target": set()}
    found |= {"converter": set(), "model": set()}
    for role, class_name, params in used:
        found[role].add(class_name)
        if role == "target":
            model = params.get("model_name") if isinstance(params, dict) else None
            if isinstance(model, str) and model:
                found["model"].add(model)
    return {
        "attack_classes": sorted(found["attack"]),
        "target_classes": sorted(found["target"]),
        "target_models": sorted(found["model"]),
        "scorer_classes": last_score_scorer_classes() if "scorer" in roles else [],
        "converter_classes": sorted(found["converter"]),
        "labels": _used_labels(AttackResult.label_index.through, "attackresult_id"),
        "harm_categories": _used_harm_categories(AttackResult.harm_category_index.through),
        "datasets": list(SeedDataset.objects.order_by("name").values_list("name", flat=True)),
    }


def last_score_scorer_classes() -> list[str]:
    """The class names of the scorers of attacks' last scores (the ``scorer_class`` filter's
    choices).

    Read from the attacks' own ``last_scorer``: each scorer identifier probes the index
    (last scorer, time, id), so the query does not grow with the number of attacks. (Through
    the last scores, a scorer none of whose scores is a last score could only be ruled out by
    visiting each of its scores; that needed a cache, which this column made unnecessary.)
    """
    used = Exists(AttackResult.objects.filter(last_scorer=OuterRef("pk")))
    return sorted(
        set(ComponentIdentifier.objects.filter(used).values_list("class_name", flat=True))
    )


def conversation_filter_options() -> dict[str, list[Any]]:
    """The choices of the conversation list's filter panel (targets, labels, harm categories)."""
    targets = ComponentIdentifier.objects.filter(
        Exists(Conversation.objects.filter(target_identifier=OuterRef("pk")))
    ).values_list("class_name", "params")
    target_classes: set[str] = set()
    target_models: set[str] = set()
    for class_name, params in targets:
        target_classes.add(class_name)
        model = params.get("model_name") if isinstance(params, dict) else None
        if isinstance(model, str) and model:
            target_models.add(model)
    return {
        "target_classes": sorted(target_classes),
        "target_models": sorted(target_models),
        "labels": _used_labels(Conversation.label_index.through, "conversation_id"),
        "harm_categories": _used_harm_categories(Conversation.harm_category_index.through),
    }


def _used_labels(through: type, owner_column: str) -> list[str]:
    """``key:value`` of labels linked through ``through`` (an index probe per label)."""
    rows = (
        Label.objects.filter(Exists(through.objects.filter(label_id=OuterRef("pk"))))
        .order_by("key", "value")
        .values_list("key", "value")[:LABEL_OPTION_LIMIT]
    )
    return [f"{key}:{value}" for key, value in rows]


def _used_harm_categories(through: type) -> list[str]:
    """Names of harm categories linked through ``through``."""
    return list(
        HarmCategory.objects.filter(Exists(through.objects.filter(harmcategory_id=OuterRef("pk"))))
        .order_by("name")
        .values_list("name", flat=True)
    )


def scenario_outcomes(*, scenario_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, OutcomeCounts]:
    """Outcome counts of each scenario's attack results (human verdict first, as lists show
    them): one grouped query. Scenarios without attack results are left out."""
    rows = (
        AttackResult.objects.filter(attribution_parent__in=list(scenario_ids))
        .values("attribution_parent")
        .annotate(effective=Coalesce("human_outcome", "outcome"), n=Count("pk"))
        .values_list("attribution_parent", "effective", "n")
        .order_by()
    )
    counts: dict[uuid.UUID, OutcomeCounts] = {}
    for scenario_id, outcome, n in rows:
        counts[scenario_id] = counts.get(scenario_id, OutcomeCounts()).with_outcome(outcome, n)
    return counts


def scenario_collection_outcomes(*, scenario_id: uuid.UUID) -> dict[str, OutcomeCounts]:
    """Outcome counts per atomic attack of a scenario: PyRIT files each attack result under
    its collection (``attribution_data.parent_collection``); "" holds those without one."""
    rows = (
        AttackResult.objects.filter(attribution_parent=scenario_id)
        .annotate(
            collection=Coalesce(
                KT("attribution_data__parent_collection"), Value(""), output_field=TextField()
            ),
            effective=Coalesce("human_outcome", "outcome"),
        )
        .values("collection", "effective")
        .annotate(n=Count("pk"))
        .values_list("collection", "effective", "n")
        .order_by()
    )
    counts: dict[str, OutcomeCounts] = {}
    for collection, outcome, n in rows:
        counts[collection] = counts.get(collection, OutcomeCounts()).with_outcome(outcome, n)
    return counts


def converter_chains(*, conversation_pks: Iterable[int]) -> dict[int, list[str]]:
    """The converter classes each conversation's prompts went through, in chain order and
    without repeats (one query)."""
    rows = (
        PieceConverter.objects.filter(
            piece__message__conversation_id__in=list(conversation_pks),
            piece__message__role=ChatMessageRole.USER,
        )
        .order_by("piece__message__conversation_id", "position", "identifier__class_name")
        .values_list("piece__message__conversation_id", "identifier__class_name")
        .distinct()
    )
    chains: dict[int, list[str]] = {}
    for conversation_pk, class_name in rows:
        chain = chains.setdefault(conversation_pk, [])
        if class_name not in chain:
            chain.append(class_name)
    return chains


def message_counts(*, conversation_pks: Iterable[int]) -> dict[int, int]:
    """How many messages each conversation holds (one grouped query)."""
    return dict(
        Message.objects.filter(conversation_id__in=list(conversation_pks))
        .values("conversation_id")
        .annotate(n=Count("pk"))
        .values_list("conversation_id", "n")
        .order_by()
    )


def conversations_without_attack() -> QuerySet[Conversation]:
    """Conversations that are no attack's main conversation."""
    return Conversation.objects.filter(
        ~Exists(AttackResult.objects.filter(conversation=OuterRef("pk")))
    )


@dataclass
class ConversationSummary:
    """What a conversation list row shows beyond the conversation itself."""

    message_count: int = 0
    preview: str = ""
    preview_role: str = ""
    preview_type: str = ""
    related: list[RelatedConversation] = field(default_factory=list)


#: Characters of the first message shown in a conversation list row.
PREVIEW_CHARS = 240


def conversation_summaries(
    *, conversations: Iterable[Conversation]
) -> dict[int, ConversationSummary]:
    """Message counts, first non-system message and attack references of a page of rows.

    Three queries for any page: counts grouped by conversation, the first piece per
    conversation (a correlated subquery evaluated only for the page's rows), and the
    related-conversation links with their attacks.
    """
    pks = [conversation.pk for conversation in conversations]
    summaries = {pk: ConversationSummary() for pk in pks}
    if not pks:
        return summaries
    counts = (
        Message.objects.filter(conversation_id__in=pks)
        .order_by()
        .values_list("conversation_id")
        .annotate(n=Count("pk"))
    )
    for pk, n in counts:
        summaries[pk].message_count = n
    first = (
        MessagePiece.objects.filter(message__conversation=OuterRef("pk"))
        .exclude(message__role=ChatMessageRole.SYSTEM)
        .order_by("message__sequence", "position")
    )
    previews = Conversation.objects.filter(pk__in=pks).values_list(
        "pk",
        Subquery(first.values(text=Substr("converted_value", 1, PREVIEW_CHARS))[:1]),
        Subquery(first.values("message__role")[:1]),
        Subquery(first.values("converted_value_data_type")[:1]),
    )
    for pk, text, role, data_type in previews:
        summaries[pk].preview = text or ""
        summaries[pk].preview_role = role or ""
        summaries[pk].preview_type = data_type or ""
    links = RelatedConversation.objects.filter(conversation_id__in=pks).select_related(
        "attack_result"
    )
    for link in links.order_by("attack_result__timestamp"):
        summaries[link.conversation_id].related.append(link)
    return summaries


# --- global search ------------------------------------------------------------------------------

#: Hits shown per group on the search page.
SEARCH_GROUP_LIMIT = 20
#: Newest pieces whose text the search scans; older ones are found through the lists' ``q``.
SEARCH_PIECE_SCAN = 20_000
#: Shortest text the substring search runs for.
SEARCH_MIN_TEXT = 3
#: Objective matches counted exactly up to this many ("1,000+" beyond).
SEARCH_COUNT_CAP = 1000


@dataclass
class SearchResults:
    """The global search's hits, grouped; exact id matches come first on the page."""

    query: str
    attacks_by_id: list[AttackResult] = field(default_factory=list)
    conversations_by_id: list[Conversation] = field(default_factory=list)
    pieces_by_id: list[MessagePiece] = field(default_factory=list)
    attacks_by_objective: list[AttackResult] = field(default_factory=list)
    pieces_by_text: list[MessagePiece] = field(default_factory=list)
    objective_more: bool = False
    pieces_more: bool = False
    text_searched: bool = False
    #: The query read as the start of an id (hex digits): matches are by prefix.
    id_prefix: bool = False
    #: Attacks whose objective contains the query, counted up to ``SEARCH_COUNT_CAP`` + 1.
    objective_count: int = 0

    @property
    def exact_count(self) -> int:
        """Number of exact id matches."""
        return len(self.attacks_by_id) + len(self.conversations_by_id) + len(self.pieces_by_id)

    @property
    def total(self) -> int:
        """Number of hits shown."""
        return self.exact_count + len(self.attacks_by_objective) + len(self.pieces_by_text)


def memory_search(*, query: str) -> SearchResults:
    """Search attack ids, conversation ids, piece ids, objectives and piece text for ``query``.

    Id lookups are exact and indexed. The objective and piece-text searches are
    case-insensitive substring scans, bounded (see :func:`_objective_hits` and
    :func:`_piece_text_hits`); the lists' ``q`` filter reaches everything.
    """
    query = query.strip()
    results = SearchResults(query=query)
    if not query:
        return results
    as_uuid = parse_uuid(query)
    conversation_ids = {query}
    bounds = _uuid_prefix_bounds(query) if as_uuid is None else None
    if bounds is not None:
        results.id_prefix = True
        low, high = bounds
        limit = SEARCH_GROUP_LIMIT
        results.attacks_by_id = list(
            attack_list_queryset().filter(pk__gte=low, pk__lte=high).order_by("pk")[:limit]
        )
        results.pieces_by_id = list(
            MessagePiece.objects.filter(pk__gte=low, pk__lte=high)
            .select_related("message__conversation")
            .order_by("pk")[:limit]
        )
        results.conversations_by_id = list(
            Conversation.objects.filter(conversation_id__istartswith=query)
            .select_related("target_identifier")
            .order_by("conversation_id")[:limit]
        )
        return results
    if as_uuid is not None:
        conversation_ids |= {str(as_uuid), as_uuid.hex}
        results.attacks_by_id = list(attack_list_queryset().filter(pk=as_uuid))
        results.pieces_by_id = list(
            MessagePiece.objects.filter(pk=as_uuid).select_related("message__conversation")
        )
    results.conversations_by_id = list(
        Conversation.objects.filter(conversation_id__in=conversation_ids).select_related(
            "target_identifier"
        )
    )
    if len(query) < SEARCH_MIN_TEXT or as_uuid is not None:
        return results
    results.text_searched = True
    results.attacks_by_objective, results.objective_more = _objective_hits(query)
    # Always counted (capped), so the page costs the same queries however many match.
    results.objective_count = capped_count(
        AttackResult.objects.filter(objective__icontains=query), SEARCH_COUNT_CAP
    )
    results.pieces_by_text, results.pieces_more = _piece_text_hits(query)
    return results


#: Hex digits (dashes allowed where a UUID has them) that start an id.
_ID_PREFIX = re.compile(r"[0-9a-f]{8}(-?[0-9a-f]{0,4}){0,6}", re.IGNORECASE)


def _uuid_prefix_bounds(query: str) -> tuple[uuid.UUID, uuid.UUID] | None:
    """The lowest and highest UUID starting with ``query`` (8 to 31 hex digits), or None.

    A range on the key rather than a text match: a UUID column is text on SQLite and a native
    type on PostgreSQL, but both order UUIDs as their hex digits, so the same range finds the
    same rows on both, through the primary key index.
    """
    if not _ID_PREFIX.fullmatch(query):
        return None
    digits = query.replace("-", "").lower()
    if not 8 <= len(digits) < 32:
        return None
    return uuid.UUID(digits.ljust(32, "0")), uuid.UUID(digits.ljust(32, "f"))


def _objective_hits(query: str) -> tuple[list[AttackResult], bool]:
    """The newest ``SEARCH_GROUP_LIMIT`` attacks whose objective contains ``query``, and
    whether there are more. Two queries, whatever the number of matches.

    A probe without ORDER BY reads the table in storage order and stops after
    ``SEARCH_GROUP_LIMIT + 1`` matches. When it found fewer, those are all the matches;
    otherwise matches are common and the newest are found quickly in time order. Scanning in
    time order straight away costs a random read per attack when nothing matches: 200 ms of
    CPU against 35 ms on 100,000 attacks in SQLite (bench/attack_list.py).
    """
    matching = AttackResult.objects.filter(objective__icontains=query)
    probe = list(matching.values_list("pk", flat=True)[: SEARCH_GROUP_LIMIT + 1])
    more = len(probe) > SEARCH_GROUP_LIMIT
    if more:
        newest = matching.order_by("-timestamp", "-pk").values("pk")[:SEARCH_GROUP_LIMIT]
        rows = attack_list_queryset().filter(pk__in=Subquery(newest))
    else:
        rows = attack_list_queryset().filter(pk__in=probe)
    hits = sorted(rows, key=lambda row: (row.timestamp, str(row.pk)), reverse=True)
    return hits[:SEARCH_GROUP_LIMIT], more


def _piece_text_hits(query: str) -> tuple[list[MessagePiece], bool]:
    """The newest pieces among the latest ``SEARCH_PIECE_SCAN`` whose original or converted
    value contains ``query``, and whether there are more. Two queries.

    The bound is a time: the timestamp of the ``SEARCH_PIECE_SCAN``-th newest piece (read from
    the time index alone), so the scan is one index range, not an id list to probe.
    """
    bound = (
        MessagePiece.objects.order_by("-timestamp")
        .values_list("timestamp", flat=True)[SEARCH_PIECE_SCAN : SEARCH_PIECE_SCAN + 1]
        .first()
    )
    pieces = MessagePiece.objects.filter(
        Q(converted_value__icontains=query) | Q(original_value__icontains=query)
    )
    if bound is not None:
        pieces = pieces.filter(timestamp__gte=bound)
    found = list(
        pieces.select_related("message__conversation").order_by("-timestamp", "-pk")[
            : SEARCH_GROUP_LIMIT + 1
        ]
    )
    return found[:SEARCH_GROUP_LIMIT], len(found) > SEARCH_GROUP_LIMIT
