"""``/api/v1/review-queues/``: review queues, read-only, with progress and agreement.

The list gives each queue's rules and assignees; a queue's detail adds its progress (as on
its page: items, complete, started, not started, disagreements, resolutions, how many need
the requesting user), each assignee's share with κ against the automated outcome, Fleiss' κ
and Cohen's κ per pair of assignees. Reading a queue's progress costs a fixed number of queries
(``memory.storage.queues.queue_state``), so the list leaves it out: one queue at a time. Token
or session authentication; the user needs ``memory.view_reviewqueue``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers, viewsets

from memory.models import ReviewQueue
from memory.storage.queues import QueueState, queue_state
from redteam.core.stats import Agreement


class ReviewQueueSerializer(serializers.ModelSerializer):
    """A queue's rules: its filter (the attack list's query string), reviews per attack,
    blind or not, assignees."""

    assignees = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    url = serializers.HyperlinkedIdentityField(view_name="api-review-queue-detail")

    class Meta:
        model = ReviewQueue
        fields = [
            "id",
            "url",
            "name",
            "description",
            "filter_query",
            "required_reviews",
            "blind",
            "assignees",
            "created_by",
            "created_at",
        ]


class KappaSerializer(serializers.Serializer):
    """Cohen's κ of two raters over the items both rated."""

    n = serializers.IntegerField(help_text="Items both rated.")
    observed = serializers.FloatField(allow_null=True, help_text="Share of items they agree on.")
    kappa = serializers.FloatField(allow_null=True, help_text="Cohen's κ; null where undefined.")


class ReviewerProgressSerializer(serializers.Serializer):
    username = serializers.CharField()
    reviewed = serializers.IntegerField()
    needs = serializers.IntegerField(help_text="Items that still need this reviewer.")
    vs_automated = KappaSerializer(help_text="Against the automated outcome PyRIT recorded.")


class PairSerializer(KappaSerializer):
    reviewers = serializers.ListField(child=serializers.CharField())


class FleissSerializer(serializers.Serializer):
    kappa = serializers.FloatField(allow_null=True)
    items = serializers.IntegerField(help_text="Items with exactly required_reviews reviews.")
    fewer = serializers.IntegerField(help_text="Items left out: fewer reviews (in progress).")
    more = serializers.IntegerField(help_text="Items left out: more reviews than required.")


class ProgressSerializer(serializers.Serializer):
    items = serializers.IntegerField()
    complete = serializers.IntegerField()
    started = serializers.IntegerField()
    untouched = serializers.IntegerField()
    disagreements = serializers.IntegerField()
    resolved = serializers.IntegerField()
    needs_you = serializers.IntegerField(help_text="Items that need the requesting user.")
    reviewers = ReviewerProgressSerializer(many=True)
    fleiss = FleissSerializer(allow_null=True, help_text="Null when one review per item.")
    pairs = PairSerializer(many=True)


def _kappa(agreement: Agreement) -> dict[str, Any]:
    return {"n": agreement.n, "observed": agreement.observed, "kappa": agreement.kappa}


def progress_dict(state: QueueState, user_id: int | None) -> dict[str, Any]:
    """A queue's progress and agreement, as :class:`ProgressSerializer` describes them."""
    progress = state.progress()
    figures = state.agreement()
    return {
        "items": progress.items,
        "complete": progress.complete,
        "started": progress.started,
        "untouched": progress.untouched,
        "disagreements": progress.disagreements,
        "resolved": progress.resolved,
        "needs_you": state.needing(user_id),
        "reviewers": [
            {
                "username": row.user.get_username(),
                "reviewed": row.reviewed,
                "needs": row.needs,
                "vs_automated": _kappa(row.vs_automated),
            }
            for row in state.reviewer_progress()
        ],
        "fleiss": None
        if figures.fleiss is None
        else {
            "kappa": figures.fleiss.kappa,
            "items": figures.fleiss.items,
            "fewer": figures.fewer,
            "more": figures.more,
        },
        "pairs": [
            {
                "reviewers": [pair.first.get_username(), pair.second.get_username()],
                **_kappa(pair.agreement),
            }
            for pair in figures.pairs
        ],
    }


class ReviewQueueDetailSerializer(ReviewQueueSerializer):
    """A queue with its progress and agreement."""

    progress = serializers.SerializerMethodField()

    class Meta(ReviewQueueSerializer.Meta):
        fields = [*ReviewQueueSerializer.Meta.fields, "progress"]

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, queue: ReviewQueue) -> dict[str, Any]:
        request = self.context.get("request")
        user_id = request.user.pk if request is not None else None
        return progress_dict(queue_state(queue=queue), user_id)


class ReviewQueueViewSet(viewsets.ReadOnlyModelViewSet):
    """Review queues by id, by name; a queue's detail carries its progress."""

    queryset = (
        ReviewQueue.objects.select_related("created_by")
        # The assignees' usernames of the whole page, in one query, in a stable order
        # (PostgreSQL returns a link table's rows in no fixed order).
        .prefetch_related(
            Prefetch("assignees", queryset=get_user_model().objects.order_by("username"))
        )
        .order_by("name", "pk")
    )
    serializer_class = ReviewQueueSerializer

    def get_serializer_class(self) -> type:
        if self.action == "retrieve":
            return ReviewQueueDetailSerializer
        return ReviewQueueSerializer
