"""The attack page opened from a review queue (``/attacks/<id>/?queue=<queue id>``): the queue
bar with progress, previous and next, and the keyboard shortcuts (``queues.js``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.http import urlencode

from memory.models import AttackResult, ReviewQueue
from memory.storage.queues import queue_state


def queue_param(request: HttpRequest) -> int | None:
    """The ``queue`` id a request carries (query string or form), or None."""
    raw = request.POST.get("queue") or request.GET.get("queue") or ""
    return int(raw) if raw.isdigit() and len(raw) < 19 else None


def queue_attack_url(queue_id: int, attack_id: Any) -> str:
    """An attack's page in a queue's mode."""
    return f"{reverse('attack-detail', args=[attack_id])}?{urlencode({'queue': queue_id})}"


def queue_next_url(queue_id: int, after: Any = None) -> str:
    """The queue's Next: the next attack that needs the signed-in reviewer."""
    url = reverse("queue-next", args=[queue_id])
    return f"{url}?{urlencode({'after': after})}" if after else url


@dataclass(frozen=True)
class QueueBar:
    """What the queue bar on an attack page shows."""

    queue: ReviewQueue
    items: int
    needing: int
    #: 1-based place of this attack in the queue; None when the queue no longer holds it.
    position: int | None
    reviews: int
    assignee: bool
    reviewed_by_you: bool
    next_url: str
    previous_url: str | None


def queue_bar(request: HttpRequest, attack: AttackResult) -> QueueBar | None:
    """The bar of the queue named by ``?queue=``, or None (no such queue: the page is plain).

    Queries: the queue, then :func:`memory.storage.queues.queue_state` (assignees, items,
    verdicts, resolutions), whatever the queue's size.
    """
    queue_id = queue_param(request)
    if queue_id is None:
        return None
    queue = ReviewQueue.objects.filter(pk=queue_id).first()
    if queue is None:
        return None
    state = queue_state(queue=queue)
    position = state.position(attack.pk)
    previous = state.previous(attack.pk)
    user_id = request.user.pk
    return QueueBar(
        queue=queue,
        items=len(state.order),
        needing=state.needing(user_id),
        position=None if position is None else position + 1,
        reviews=state.review_count(attack.pk),
        assignee=state.is_assignee(user_id),
        reviewed_by_you=user_id in state.reviews.get(attack.pk, {}),
        next_url=queue_next_url(queue.pk, after=attack.pk),
        previous_url=queue_attack_url(queue.pk, previous) if previous else None,
    )
