"""The attack page and the conversation page, addressed by PyRIT's own ids.

The views stay thin: :mod:`memory.review.thread` builds the view model with a fixed number of
queries (pinned in ``tests/review/test_detail.py``), the templates lay it out.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from memory.models import Conversation
from memory.review.forms import SCORE_PERMISSION, VerdictForm
from memory.review.panels import verdict_context
from memory.review.preferences import blur_harmful_media
from memory.review.thread import attack_page, attack_queryset, conversation_page, gc_paused


def _common(request: HttpRequest) -> dict:
    return {
        "can_score": request.user.has_perm(SCORE_PERMISSION),
        # Reversed once: the thread links every converter and scorer to the attack list.
        "attack_list_url": reverse("attack-list"),
        "blur_harmful_media": blur_harmful_media(request.user),
    }


@login_required
@permission_required("memory.view_attackresult", raise_exception=True)
def attack_detail(
    request: HttpRequest,
    attack_result_id,
    *,
    verdict_form: VerdictForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """One attack: header, the conversation thread with scores, verdicts, inspector.

    ``?side=<conversation_id>`` shows a related (adversarial) conversation beside the main
    one. ``verdict_form`` is a bound form with errors after a failed plain form post.
    """
    attack = get_object_or_404(attack_queryset(), pk=attack_result_id)
    common = _common(request)
    with gc_paused():
        page = attack_page(attack=attack, side=request.GET.get("side"), **common)
    context = {
        **common,
        **verdict_context(request, attack, verdict_form, verdicts=page.verdicts),
        "page": page,
        "thread": page.thread,
    }
    return render(request, "review/attack_detail.html", context, status=status)


@login_required
@permission_required("memory.view_conversation", raise_exception=True)
def conversation_detail(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """One conversation (with or without an attack result) as a thread."""
    conversation = get_object_or_404(
        Conversation.objects.select_related("target_identifier"), conversation_id=conversation_id
    )
    common = _common(request)
    with gc_paused():
        page = conversation_page(conversation=conversation, **common)
    context = {
        **common,
        "page": page,
        "thread": page.thread,
    }
    return render(request, "review/conversation_detail.html", context)
