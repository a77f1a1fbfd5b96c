"""Review queues (reads): which attacks a queue holds, who still has to review which, progress,
agreement and disagreements.

**Items.** A queue holds the attacks its saved filter (``ReviewQueue.filter_query``, the
attack list's query string) matches *now*, in the filter's sort order (``sort=``, else newest
first), ties broken by id as on the list.

**Reviews.** A review of an item is an assignee's newest verdict on the attack, whenever and
wherever it was recorded (in the queue, on the attack page, in a bulk verdict, before the
queue existed), except verdicts that are a lead's resolution (``QueueResolution``), which
count for nobody. Verdicts by users who are not assignees do not count. An item is
*complete* when it has ``required_reviews`` reviews; it *needs* an assignee when it is not
complete and that assignee has not reviewed it. A *disagreement* is an item whose reviews do
not all give the same outcome.

**Cost.** :func:`queue_state` reads a queue in a fixed number of queries whatever its size:
the assignees, the items as ``(id, automated outcome)`` pairs in order, the assignees'
verdicts on them, and the resolutions (plus one per label or target-model filter, which look
their ids up first). It holds every item id in memory: meant for review work lists (thousands
of attacks), not for the whole memory.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db.models import Case, CharField, F, Q, QuerySet, Value, When
from django.http import QueryDict

from memory.models import AttackResult, HumanOutcome, HumanVerdict, QueueResolution, ReviewQueue
from memory.storage.filters import (
    ATTACK_DEFAULT_SORT,
    ATTACK_SORTS,
    SEEN_HUMAN_OUTCOME,
    AttackResultFilter,
)
from redteam.core.choices import AttackOutcome
from redteam.core.errors import Problem
from redteam.core.filters import ordering
from redteam.core.stats import (
    Agreement,
    FleissAgreement,
    fleiss_agreement,
    paired_agreement,
)

#: Parameters a queue's filter may hold besides the filters.
QUEUE_EXTRA_PARAMETERS = ("sort",)
#: Filters a queue may not use: its items would leave it as they are reviewed.
QUEUE_REFUSED_FILTERS = ("has_human_verdict", "effective_outcome")
#: Categories of reviewer agreement, in display order.
HUMAN_CATEGORIES = tuple(HumanOutcome.values)
#: Reviewer against the automated outcome: PyRIT's ``error`` is a category reviewers never give.
AUTOMATED_CATEGORIES = (*HUMAN_CATEGORIES, AttackOutcome.ERROR.value)


# --- the saved filter ---------------------------------------------------------------------------


def queue_filter_params(filter_query: str) -> QueryDict:
    """A queue's filter as parameters: a pasted ``/attacks/?…`` URL, ``?…`` or ``…`` alike,
    empty values dropped."""
    text = filter_query.strip()
    if "?" in text:
        text = text.split("?", 1)[1]
    params = QueryDict(text, mutable=True)
    for key in list(params):
        values = [value for value in params.getlist(key) if value != ""]
        if values:
            params.setlist(key, values)
        else:
            del params[key]
    return params


def queue_filter_problems(filter_query: str) -> list[Problem]:
    """Why ``filter_query`` cannot be a queue's filter (empty list: it can). No queries."""
    params = queue_filter_params(filter_query)
    known = AttackResultFilter.base_filters
    problems = []
    for key in params:
        if key in QUEUE_REFUSED_FILTERS:
            problems.append(
                Problem(
                    "filter_query",
                    f"{key}: a queue cannot filter on human verdicts (its attacks would leave it "
                    "as they are reviewed); filter on the automated outcome (outcome=) instead",
                )
            )
        elif key not in known and key not in QUEUE_EXTRA_PARAMETERS:
            problems.append(Problem("filter_query", f"{key}: not a filter of the attack list"))
    sort = params.get("sort")
    if sort is not None and sort.lstrip("-") not in ATTACK_SORTS:
        choices = ", ".join(sorted(ATTACK_SORTS))
        problems.append(Problem("filter_query", f"sort: {sort!r} is not one of {choices}"))
    filterset = AttackResultFilter(params, queryset=AttackResult.objects.none())
    if not filterset.is_valid():
        for key, errors in filterset.errors.items():
            for error in errors:
                problems.append(Problem("filter_query", f"{key}: {error}"))
    return problems


def queue_attacks(queue: ReviewQueue) -> QuerySet[AttackResult]:
    """The queue's attacks in its order; none when the stored filter no longer validates."""
    params = queue_filter_params(queue.filter_query)
    filterset = AttackResultFilter(params, queryset=AttackResult.objects.all())
    if queue_filter_problems(queue.filter_query) or not filterset.is_valid():
        return AttackResult.objects.none()
    _, order = ordering(ATTACK_SORTS, params.get("sort", ""), ATTACK_DEFAULT_SORT)
    return filterset.qs.order_by(*order)


# --- one queue's state --------------------------------------------------------------------------


@dataclass(frozen=True)
class Review:
    """An assignee's review of an item: their newest verdict on it (not a resolution)."""

    reviewer_id: int
    outcome: str
    at: datetime


@dataclass(frozen=True)
class Progress:
    """How far a queue is: items by how many reviews they have, disagreements, resolutions."""

    items: int
    complete: int
    started: int
    untouched: int
    disagreements: int
    resolved: int

    @property
    def percent_complete(self) -> int:
        return round(100 * self.complete / self.items) if self.items else 0


@dataclass(frozen=True)
class ReviewerProgress:
    """One assignee's share of a queue, and how they agree with the automated outcome."""

    user: Any
    reviewed: int
    needs: int
    vs_automated: Agreement


@dataclass(frozen=True)
class PairAgreement:
    """Cohen's κ of two assignees over the items both reviewed."""

    first: Any
    second: Any
    agreement: Agreement


@dataclass(frozen=True)
class QueueAgreement:
    """Agreement figures of a queue.

    ``fleiss`` is over the items with exactly ``required_reviews`` reviews (None when the
    queue needs one review per item); ``fewer`` items with fewer reviews (still in progress)
    and ``more`` items with more (an assignee reviewed a complete item anyway) are left out
    of it and counted here.
    """

    fleiss: FleissAgreement | None
    fewer: int
    more: int
    pairs: list[PairAgreement]


@dataclass(frozen=True)
class Disagreement:
    """An item whose reviews differ, with the newest resolution if a lead recorded one."""

    attack_id: uuid.UUID
    automated: str
    reviews: list[tuple[Any, str]]
    resolution: QueueResolution | None


@dataclass
class QueueState:
    """A queue read once: its items in order and every review of them (see module docstring)."""

    queue: ReviewQueue
    assignees: list[Any]
    order: list[uuid.UUID]
    automated: dict[uuid.UUID, str]
    reviews: dict[uuid.UUID, dict[int, Review]]
    resolutions: dict[uuid.UUID, QueueResolution]
    _position: dict[uuid.UUID, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._position = {pk: index for index, pk in enumerate(self.order)}

    @property
    def required(self) -> int:
        return self.queue.required_reviews

    def is_assignee(self, user_id: int | None) -> bool:
        return any(user.pk == user_id for user in self.assignees)

    def review_count(self, pk: uuid.UUID) -> int:
        return len(self.reviews.get(pk, {}))

    def needs(self, user_id: int | None, pk: uuid.UUID) -> bool:
        """The item still needs ``user_id``'s review: an assignee who has not reviewed it, and
        it is short of the reviews it needs."""
        done = self.reviews.get(pk, {})
        return self.is_assignee(user_id) and user_id not in done and len(done) < self.required

    def needing(self, user_id: int | None) -> int:
        """How many items need ``user_id``."""
        if not self.is_assignee(user_id):
            return 0
        return sum(1 for pk in self.order if self.needs(user_id, pk))

    def position(self, pk: uuid.UUID) -> int | None:
        """The item's 0-based place in the queue; None when the queue does not hold it."""
        return self._position.get(pk)

    def next_for(self, user_id: int | None, *, after: uuid.UUID | None = None) -> uuid.UUID | None:
        """The next item that needs ``user_id``: the first after ``after`` in queue order, else
        the first from the start (``after`` itself never); None when nothing needs them."""
        start = self._position.get(after, -1) + 1 if after is not None else 0
        for pk in (*self.order[start:], *self.order[:start]):
            if pk != after and self.needs(user_id, pk):
                return pk
        return None

    def previous(self, pk: uuid.UUID) -> uuid.UUID | None:
        """The item before ``pk`` in queue order (whatever its state)."""
        index = self._position.get(pk)
        return self.order[index - 1] if index else None

    def progress(self) -> Progress:
        complete = started = disagreements = 0
        for pk in self.order:
            done = self.reviews.get(pk, {})
            if len(done) >= self.required:
                complete += 1
            elif done:
                started += 1
            if len({review.outcome for review in done.values()}) > 1:
                disagreements += 1
        return Progress(
            items=len(self.order),
            complete=complete,
            started=started,
            untouched=len(self.order) - complete - started,
            disagreements=disagreements,
            resolved=sum(1 for pk in self.order if pk in self.resolutions),
        )

    def reviewer_progress(self) -> list[ReviewerProgress]:
        """Per assignee: items reviewed, items that still need them, κ against the automated
        outcome over the items they reviewed."""
        out = []
        for user in self.assignees:
            pairs = [
                (self.automated[pk], self.reviews[pk][user.pk].outcome)
                for pk in self.order
                if user.pk in self.reviews.get(pk, {})
            ]
            out.append(
                ReviewerProgress(
                    user=user,
                    reviewed=len(pairs),
                    needs=self.needing(user.pk),
                    vs_automated=paired_agreement(pairs, AUTOMATED_CATEGORIES),
                )
            )
        return out

    def agreement(self) -> QueueAgreement:
        """Fleiss' κ over the complete items, Cohen's κ for every pair of assignees."""
        exact, fewer, more = [], 0, 0
        for pk in self.order:
            done = self.reviews.get(pk, {})
            if len(done) == self.required:
                exact.append([review.outcome for review in done.values()])
            elif len(done) < self.required:
                fewer += 1
            else:
                more += 1
        fleiss = fleiss_agreement(exact, HUMAN_CATEGORIES) if self.required >= 2 else None
        pairs = []
        for first, second in combinations(self.assignees, 2):
            both = [
                (done[first.pk].outcome, done[second.pk].outcome)
                for done in (self.reviews.get(pk, {}) for pk in self.order)
                if first.pk in done and second.pk in done
            ]
            pairs.append(PairAgreement(first, second, paired_agreement(both, HUMAN_CATEGORIES)))
        return QueueAgreement(fleiss=fleiss, fewer=fewer, more=more, pairs=pairs)

    def disagreements(self) -> list[Disagreement]:
        """Items whose reviews differ, unresolved first, then in queue order."""
        by_id = {user.pk: user for user in self.assignees}
        out = []
        for pk in self.order:
            done = self.reviews.get(pk, {})
            if len({review.outcome for review in done.values()}) < 2:
                continue
            reviews = sorted(
                ((by_id[reviewer_id], review.outcome) for reviewer_id, review in done.items()),
                key=lambda pair: pair[0].get_username(),
            )
            out.append(Disagreement(pk, self.automated[pk], reviews, self.resolutions.get(pk)))
        out.sort(key=lambda item: item.resolution is not None)
        return out


def queue_state(*, queue: ReviewQueue) -> QueueState:
    """Read ``queue`` (module docstring: what counts, and the queries it costs)."""
    assignees = sorted(queue.assignees.all(), key=lambda user: user.get_username())
    attacks = queue_attacks(queue)
    rows = list(attacks.values_list("pk", "outcome"))
    order = [pk for pk, _ in rows]
    automated = dict(rows)
    reviews: dict[uuid.UUID, dict[int, Review]] = defaultdict(dict)
    if assignees and order:
        verdicts = (
            HumanVerdict.objects.filter(
                attack_result__in=attacks.order_by().values("pk"),
                reviewer__in=[user.pk for user in assignees],
                resolution__isnull=True,
            )
            .order_by("created_at", "pk")
            .values_list("attack_result_id", "reviewer_id", "outcome", "created_at")
        )
        # Oldest first: each reviewer's newer verdict on an item replaces their older one.
        for attack_id, reviewer_id, outcome, at in verdicts:
            reviews[attack_id][reviewer_id] = Review(reviewer_id, outcome, at)
    resolutions: dict[uuid.UUID, QueueResolution] = {}
    if order:
        for resolution in (
            QueueResolution.objects.filter(queue=queue)
            .select_related("verdict", "resolved_by")
            .order_by("created_at", "pk")
        ):
            resolutions[resolution.attack_result_id] = resolution
    return QueueState(
        queue=queue,
        assignees=assignees,
        order=order,
        automated=automated,
        reviews=dict(reviews),
        resolutions=resolutions,
    )


def attack_in_queue(*, queue: ReviewQueue, attack_id: uuid.UUID) -> bool:
    """Whether the queue holds the attack now (one query, or a few with label filters)."""
    return queue_attacks(queue).filter(pk=attack_id).exists()


def reviewers_queryset() -> QuerySet:
    """Active users who may record verdicts (directly, through a group, or as superusers): the
    people a queue may be assigned to."""
    permission = Permission.objects.filter(
        content_type__app_label="memory", codename="add_humanverdict"
    )
    return (
        get_user_model()
        .objects.filter(
            Q(groups__permissions__in=permission)
            | Q(user_permissions__in=permission)
            | Q(is_superuser=True),
            is_active=True,
        )
        .distinct()
        .order_by("username")
    )


# --- blind queues -------------------------------------------------------------------------------
#
# The one rule of blind review, used by every surface that shows verdicts (the attack page,
# the human-label download, the admin): an assignee of a blind queue who may record verdicts,
# and is not a lead who resolves, sees no other reviewer's verdict on an attack the queue
# holds until they have recorded one of their own on it.

#: Who records verdicts (``memory.storage.services.VERDICT_PERMISSION``).
_VERDICT_PERMISSION = "memory.add_humanverdict"
#: Leads who resolve queues see every review (docs/review.md, "Blind queues").
_RESOLVE_PERMISSION = "memory.add_queueresolution"


def blind_applies(*, user: Any) -> bool:
    """Whether blind queues can blind ``user`` at all: a signed-in user who records verdicts
    and does not resolve queues (no query beyond the user's permissions)."""
    return bool(
        user.is_authenticated
        and user.has_perm(_VERDICT_PERMISSION)
        and not user.has_perm(_RESOLVE_PERMISSION)
    )


def blind_queues_of(*, user: Any) -> list[ReviewQueue]:
    """The blind queues ``user`` is assigned to and blinded by (one query; none when
    :func:`blind_applies` says no)."""
    if not blind_applies(user=user):
        return []
    return list(ReviewQueue.objects.filter(blind=True, assignees=user))


def blind_hidden_attacks(*, user: Any) -> QuerySet | None:
    """The attacks whose other reviewers' verdicts are hidden from ``user``, as a subquery of
    primary keys (the attacks of the user's blind queues they have no verdict on yet); None
    when nothing is hidden. One query (the queues) to build."""
    queues = blind_queues_of(user=user)
    if not queues:
        return None
    holding = Q()
    for queue in queues:
        holding |= Q(pk__in=queue_attacks(queue).order_by().values("pk"))
    own = HumanVerdict.objects.filter(reviewer=user).values("attack_result_id")
    return AttackResult.objects.filter(holding).exclude(pk__in=own).order_by().values("pk")


def with_seen_human_outcome(
    *, attacks: QuerySet[AttackResult], hidden: QuerySet | None, select: bool = True
) -> QuerySet[AttackResult]:
    """``attacks`` annotated with :data:`SEEN_HUMAN_OUTCOME`: ``human_outcome``, except None
    for the attacks of ``hidden`` (:func:`blind_hidden_attacks`), so those read as not
    reviewed — in rows, in the filters on human outcomes and in counts. ``select=False``
    only aliases it (for the filters of a query that groups, not rows). No query."""
    add = attacks.annotate if select else attacks.alias
    if hidden is None:
        return add(**{SEEN_HUMAN_OUTCOME: F("human_outcome")})
    return add(
        **{
            SEEN_HUMAN_OUTCOME: Case(
                When(pk__in=hidden, then=Value(None)),
                default=F("human_outcome"),
                output_field=CharField(),
            )
        }
    )


def attacks_seen_by(*, user: Any, attacks: QuerySet[AttackResult]) -> QuerySet[AttackResult]:
    """``attacks`` with the human outcome ``user`` may see (:func:`with_seen_human_outcome`
    over :func:`blind_hidden_attacks`; one query for a user blind review can apply to)."""
    return with_seen_human_outcome(attacks=attacks, hidden=blind_hidden_attacks(user=user))


def attacks_with_visible_verdicts(
    *, user: Any, attacks: QuerySet[AttackResult]
) -> QuerySet[AttackResult]:
    """``attacks`` without those whose verdicts blind review hides from ``user``: for what
    lists verdicts per attack (the human-label download)."""
    hidden = blind_hidden_attacks(user=user)
    return attacks if hidden is None else attacks.exclude(pk__in=hidden)


def verdicts_visible_to(*, user: Any, verdicts: QuerySet[HumanVerdict]) -> QuerySet[HumanVerdict]:
    """``verdicts`` without those blind review hides from ``user`` (other reviewers' verdicts
    on the attacks of :func:`blind_hidden_attacks`; the user has none of their own there)."""
    hidden = blind_hidden_attacks(user=user)
    if hidden is None:
        return verdicts
    return verdicts.exclude(attack_result__in=hidden)


def hidden_by_blind_queue(
    *, queues: Iterable[ReviewQueue], attack_id: uuid.UUID
) -> ReviewQueue | None:
    """The first of ``queues`` (blind queues of one user who has not reviewed the attack yet)
    that holds the attack: other reviewers' verdicts stay hidden from that user. One query."""
    queues = list(queues)
    if not queues:
        return None
    holding = Q()
    for queue in queues:
        holding |= Q(pk__in=queue_attacks(queue).order_by().values("pk"))
    if not AttackResult.objects.filter(pk=attack_id).filter(holding).exists():
        return None
    if len(queues) == 1:
        return queues[0]
    for queue in queues:  # rare: several blind queues; name the first that holds it
        if attack_in_queue(queue=queue, attack_id=attack_id):
            return queue
    return None
