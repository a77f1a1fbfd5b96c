"""Review queues: saved attack-list filters that assigned reviewers work through, and the
resolutions a lead records where the reviewers of a queue disagree."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from simple_history.models import HistoricalRecords

from redteam.core import nul


class ReviewQueue(models.Model):
    """A saved attack-list filter, who reviews it, and how many reviews each attack needs.

    ``filter_query`` is the attack list's query string (``outcome=success&labels=op:x``,
    optionally ``sort=…``), validated against ``AttackResultFilter`` when saved; the queue
    holds whatever attacks it matches now, in its sort order. A review of an item is an
    assignee's newest verdict on the attack that is not a lead's resolution (docs/review.md,
    "Review queues"). ``blind``: an assignee sees no other reviewer's verdict on an attack of
    the queue before recording their own.
    """

    name = nul.CharField(max_length=200, unique=True)
    description = nul.TextField(blank=True, default="")
    filter_query = nul.TextField(blank=True, default="")
    required_reviews = models.PositiveSmallIntegerField(default=1)
    blind = models.BooleanField(default=False)
    assignees = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="review_queues", blank=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="created_review_queues",
    )
    created_at = models.DateTimeField(default=timezone.now)
    # Who changed the filter, the assignees or the rules, and when (docs/deployment.md, "Audit").
    history = HistoricalRecords(m2m_fields=[assignees])

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(required_reviews__gte=1),
                name="%(app_label)s_%(class)s_required_reviews_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("queue-detail", args=[self.pk])


class QueueResolution(models.Model):
    """A lead's final verdict on an attack of a queue, usually where its reviewers disagree.

    The verdict itself is an ordinary ``HumanVerdict`` (so it becomes the attack's human
    outcome); this row says it was a resolution, of which queue. Resolution verdicts never
    count as reviews of any queue.
    """

    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="resolutions")
    attack_result = models.ForeignKey(
        "memory.AttackResult", on_delete=models.CASCADE, related_name="queue_resolutions"
    )
    verdict = models.OneToOneField(
        "memory.HumanVerdict", on_delete=models.CASCADE, related_name="resolution"
    )
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="queue_resolutions",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # A queue page's resolutions, newest first.
            models.Index(fields=["queue", "-created_at"], name="memory_resolution_queue_time"),
        ]

    def __str__(self) -> str:
        return f"resolution of {self.attack_result_id} in {self.queue_id}"
