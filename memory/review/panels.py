"""Context of page parts that render both inside a page and alone (an htmx swap)."""

from __future__ import annotations

from django.http import HttpRequest

from memory.models import AttackResult, HumanVerdict, ReviewQueue
from memory.review.forms import VERDICT_PERMISSION, VerdictForm
from memory.storage.queues import blind_queues_of, hidden_by_blind_queue


def blind_queue_hiding(
    request: HttpRequest, attack: AttackResult, verdicts: list[HumanVerdict]
) -> ReviewQueue | None:
    """The blind queue that hides other reviewers' verdicts on ``attack`` from this user, if any.

    Blind queues blind their assignees, who record verdicts, until they have recorded one on
    the attack themselves; nobody else. Costs a query for reviewers, and one more when they
    are assigned to a blind queue and have not judged the attack.
    """
    user = request.user
    if not user.has_perm(VERDICT_PERMISSION) or any(v.reviewer_id == user.pk for v in verdicts):
        return None
    return hidden_by_blind_queue(queues=blind_queues_of(user=user), attack_id=attack.pk)


def verdict_context(
    request: HttpRequest,
    attack: AttackResult,
    form: VerdictForm | None,
    *,
    recorded: bool = False,
    oob: bool = False,
    verdicts: list | None = None,
    queue_id: int | None = None,
) -> dict:
    """Context of the verdict panel: automated vs human outcome, history and the form.

    ``verdicts`` is the history when the caller has already read it. ``queue_id``: the page
    was opened from that review queue (the form posts back to it, saving moves to the next
    item). In a blind queue the human outcome and the history stay hidden (``blind_queue``).
    """
    can_review = request.user.has_perm(VERDICT_PERMISSION)
    if verdicts is None:
        verdicts = list(attack.human_verdicts.select_related("reviewer").order_by("-created_at"))
    blind_queue = blind_queue_hiding(request, attack, verdicts)
    return {
        "attack": attack,
        "verdicts": [] if blind_queue else verdicts,
        "hidden_verdicts": len(verdicts) if blind_queue else 0,
        "blind_queue": blind_queue,
        "can_review": can_review,
        "verdict_form": (form or VerdictForm()) if can_review else None,
        "recorded": recorded,
        "oob": oob,
        "queue_id": queue_id,
    }
