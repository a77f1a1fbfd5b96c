"""Which stored objects an export holds, as QuerySets (nothing is loaded here).

An export is a set of conversations with everything attached to them, plus the objects that
refer to or are referred to by what is in it, so that the document ingests into an empty
database on its own:

* no filter: everything — every conversation, attack result, scenario result, seed and seed
  group, the scores that no exported piece shows (scores of pieces never stored, scores of
  loose content) and every verbatim PyRIT row (``PyritRecord``);
* ``since`` alone: conversations that started, attack results and scores recorded, scenario
  results created and seeds added on or after that moment, and verbatim rows Redline received
  (or saw change) since then;
* ``conversation_id``, ``labels`` or ``attack_class`` (with or without ``since``): the attack
  results and the conversations matching them (the attack-list filterset and the conversation
  filterset, ``timestamp_after`` = ``since``); seeds and verbatim rows are left out.

Then the closure: the scenario results owning a selected attack result come along with all
their attack results (a scenario embeds them), and every attack result brings its main,
related and last-response conversations. Everything stays a QuerySet evaluated in chunks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.http import QueryDict
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from memory.models import (
    AttackResult,
    Conversation,
    MessagePiece,
    PyritRecord,
    RelatedConversation,
    ScenarioResult,
    ScorableContent,
    Score,
)
from memory.storage.filters import AttackResultFilter, ConversationFilter
from seeds.models import Seed, SeedDataset, SeedGroup


class ExportFilterError(ValueError):
    """A filter value that does not parse; the message names the filter."""


@dataclass(frozen=True)
class ExportFilters:
    """What to export. Empty: the whole memory."""

    conversation_id: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    attack_class: str | None = None
    since: dt.datetime | None = None

    @property
    def narrowed(self) -> bool:
        """A filter other than ``since`` is set: the export is a slice of the memory."""
        return bool(self.conversation_id or self.labels or self.attack_class)

    def as_query(self) -> QueryDict:
        """The filters as attack-list / conversation-list query parameters."""
        query = QueryDict(mutable=True)
        if self.conversation_id:
            query["conversation_id"] = self.conversation_id
        for key, value in self.labels:
            query.appendlist("labels", f"{key}:{value}")
        if self.attack_class:
            query["attack_class"] = self.attack_class
        if self.since is not None:
            query["timestamp_after"] = self.since.isoformat()
        return query


def parse_since(value: str) -> dt.datetime:
    """A date (``2026-01-31``, midnight UTC) or an ISO date-time (naive means UTC)."""
    text = value.strip()
    try:
        moment = parse_datetime(text)
        day = None if moment is not None else parse_date(text)
    except ValueError:
        moment = day = None
    if moment is None and day is not None:
        moment = dt.datetime.combine(day, dt.time.min)
    if moment is None:
        raise ExportFilterError(
            f"since: {value!r} is not a date; use YYYY-MM-DD or an ISO date-time "
            "(2026-01-31T12:00:00Z)"
        )
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=dt.UTC)
    return moment


def parse_label(value: str) -> tuple[str, str]:
    """``key:value`` (the value may contain colons)."""
    key, sep, label_value = value.partition(":")
    if not sep or not key:
        raise ExportFilterError(
            f"label: {value!r} is not a label filter; expected key:value, e.g. operator:alice"
        )
    return key, label_value


def export_filters(
    *,
    conversation_id: str | None = None,
    labels: list[str] | tuple[str, ...] = (),
    attack_class: str | None = None,
    since: str | None = None,
) -> ExportFilters:
    """Parse the filters as the command and the API receive them (raises ExportFilterError)."""
    given = {"conversation_id": conversation_id, "attack_class": attack_class, "since": since}
    for name, value in [*given.items(), *(("label", label) for label in labels)]:
        if value and "\x00" in value:
            raise ExportFilterError(f"{name}: null characters are not allowed")
    return ExportFilters(
        conversation_id=(conversation_id or "").strip() or None,
        labels=tuple(parse_label(label) for label in labels if label),
        attack_class=(attack_class or "").strip() or None,
        since=parse_since(since) if since and since.strip() else None,
    )


@dataclass
class ExportSelection:
    """The QuerySets of one export (unordered; the writer orders them)."""

    conversations: QuerySet[Conversation]
    scorable_contents: QuerySet[ScorableContent]
    scores: QuerySet[Score]
    scenario_results: QuerySet[ScenarioResult]
    attack_results: QuerySet[AttackResult]
    seed_datasets: QuerySet[SeedDataset]
    seeds: QuerySet[Seed]
    seed_groups: QuerySet[SeedGroup]
    pyrit_records: QuerySet[PyritRecord]


def _filtered(filterset_class: type, queryset: QuerySet, query: QueryDict) -> QuerySet:
    filterset = filterset_class(data=query, queryset=queryset)
    if not filterset.is_valid():
        messages = [
            f"{name}: {' '.join(str(e) for e in errors)}"
            for name, errors in filterset.errors.items()
        ]
        raise ExportFilterError("; ".join(messages))
    return filterset.qs


def _loose_scores() -> QuerySet[Score]:
    """Scores not written under a piece: those whose piece (an original, contract §6.4) is not
    stored. The others go under their piece, so each score is exported once."""
    own = MessagePiece.objects.filter(pk=OuterRef("message_piece_id"), original_prompt_id=F("pk"))
    return Score.objects.filter(~Exists(own))


def with_piece_scores(selection: ExportSelection) -> ExportSelection:
    """``selection`` whose ``scores`` also hold the scores written under the exported pieces.

    For profiles whose pieces carry no scores (PyRIT 1.x): each score is still written once,
    now in ``scores`` — the loose ones as selected, plus those of the exported conversations'
    original pieces (a score names the original, contract §6.4).
    """
    originals = MessagePiece.objects.filter(
        message__conversation__in=selection.conversations.values("pk"), original_prompt_id=F("pk")
    )
    scores = Score.objects.filter(
        Q(pk__in=selection.scores.values("pk")) | Q(message_piece_id__in=originals.values("pk"))
    )
    return replace(selection, scores=scores)


def export_selection(*, filters: ExportFilters) -> ExportSelection:
    """The QuerySets an export with ``filters`` writes (see the module docstring)."""
    since = filters.since
    if not filters.narrowed and since is None:
        return ExportSelection(
            conversations=Conversation.objects.all(),
            scorable_contents=ScorableContent.objects.all(),
            scores=_loose_scores(),
            scenario_results=ScenarioResult.objects.all(),
            attack_results=AttackResult.objects.all(),
            seed_datasets=SeedDataset.objects.all(),
            seeds=Seed.objects.filter(group__isnull=True),
            seed_groups=SeedGroup.objects.all(),
            pyrit_records=PyritRecord.objects.all(),
        )

    query = filters.as_query()
    chosen_attacks = _filtered(AttackResultFilter, AttackResult.objects.all(), query)
    chosen_conversations = _filtered(ConversationFilter, Conversation.objects.all(), query)
    scenario_match = Q(pk__in=chosen_attacks.values("attribution_parent"))
    if not filters.narrowed:
        scenario_match |= Q(creation_time__gte=since)
    scenarios = ScenarioResult.objects.filter(scenario_match)
    attacks = AttackResult.objects.filter(
        Q(pk__in=chosen_attacks.values("pk")) | Q(attribution_parent__in=scenarios.values("pk"))
    )
    conversations = Conversation.objects.filter(
        Q(pk__in=chosen_conversations.values("pk"))
        | Q(pk__in=attacks.values("conversation"))
        | Q(
            pk__in=RelatedConversation.objects.filter(
                attack_result__in=attacks.values("pk")
            ).values("conversation")
        )
        | Q(
            pk__in=MessagePiece.objects.filter(pk__in=attacks.values("last_response")).values(
                "message__conversation"
            )
        )
    )
    if filters.narrowed:
        return ExportSelection(
            conversations=conversations,
            scorable_contents=ScorableContent.objects.none(),
            scores=Score.objects.none(),
            scenario_results=scenarios,
            attack_results=attacks,
            seed_datasets=SeedDataset.objects.none(),
            seeds=Seed.objects.none(),
            seed_groups=SeedGroup.objects.none(),
            pyrit_records=PyritRecord.objects.none(),
        )
    recent_seeds = Seed.objects.filter(date_added__gte=since)
    return ExportSelection(
        conversations=conversations,
        scorable_contents=ScorableContent.objects.filter(timestamp__gte=since),
        scores=_loose_scores().filter(timestamp__gte=since),
        scenario_results=scenarios,
        attack_results=attacks,
        seed_datasets=SeedDataset.objects.filter(pk__in=recent_seeds.values("dataset")),
        seeds=recent_seeds.filter(group__isnull=True),
        seed_groups=SeedGroup.objects.filter(
            pk__in=recent_seeds.filter(group__isnull=False).values("group")
        ),
        # verbatim rows carry no time Redline understands: those received since then
        pyrit_records=PyritRecord.objects.filter(updated_at__gte=since),
    )
