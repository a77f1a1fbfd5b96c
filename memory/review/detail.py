"""The attack page and the conversation page, addressed by PyRIT's own ids.

One attack also downloads as Markdown, a standalone HTML file or the export API's JSON.
The views stay thin: :mod:`memory.review.thread` builds the view model with a fixed number of
queries (pinned in ``tests/review/test_detail.py``), the templates lay it out.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import urlencode

from memory.models import Conversation
from memory.review.attack_export import attack_html, attack_markdown, hide_human_scores
from memory.review.attack_tree import attack_branches, branch_wording
from memory.review.forms import SCORE_PERMISSION, VerdictForm
from memory.review.panels import verdict_context
from memory.review.preferences import blur_harmful_media
from memory.review.queue_mode import queue_bar
from memory.review.thread import attack_page, attack_queryset, conversation_page, gc_paused
from memory.storage.queues import blind_hidden_attacks, with_seen_human_outcome
from redteam.core.choices import ConversationType
from redteam.core.downloads import as_attachment


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
    one; ``?queue=<id>`` shows it as an item of that review queue (``queue_mode``).
    ``verdict_form`` is a bound form with errors after a failed plain form post.
    """
    attack = get_object_or_404(attack_queryset(), pk=attack_result_id)
    common = _common(request)
    with gc_paused():
        page = attack_page(attack=attack, side=request.GET.get("side"), **common)
    bar = queue_bar(request, attack)
    context = {
        **common,
        **verdict_context(
            request,
            attack,
            verdict_form,
            verdicts=page.verdicts,
            queue_id=bar.queue.pk if bar else None,
        ),
        "page": page,
        "thread": page.thread,
        "queue_bar": bar,
        # Only a tree-of-attacks run has pruned branches: other pages pay no query for it.
        "branches": attack_branches(attack=attack, related=[r.related for r in page.related])
        if any(r.related.conversation_type == ConversationType.PRUNED for r in page.related)
        else [],
        # Titled by the attack's class: PyRIT prunes retries and backtracks too (issue 34).
        "branch_words": branch_wording(
            attack.attack_identifier.class_name if attack.attack_identifier else None
        ),
    }
    return render(request, "review/attack_detail.html", context, status=status)


#: ``export.<fmt>`` of an attack -> content type.
DOWNLOADS = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8"}


@login_required
@permission_required("memory.view_attackresult", raise_exception=True)
def attack_download(request: HttpRequest, attack_result_id, fmt: str) -> HttpResponse:
    """One attack as a file: ``export.md`` (Markdown), ``export.html`` (opens without a
    server) or ``export.json`` (the export API's document of its conversation)."""
    # Blind review: the same rule as the attack list decides what the file may show.
    hidden = blind_hidden_attacks(user=request.user)
    attack = get_object_or_404(
        with_seen_human_outcome(attacks=attack_queryset(), hidden=hidden), pk=attack_result_id
    )
    blind = hidden is not None and hidden.filter(pk=attack.pk).exists()
    if fmt == "json":
        query = urlencode({"conversation_id": attack.conversation.conversation_id})
        return HttpResponseRedirect(f"{reverse('api-export')}?{query}")
    if fmt not in DOWNLOADS:
        raise Http404("No such download format")
    blur = blur_harmful_media(request.user)
    with gc_paused():
        page = attack_page(attack=attack, side=None, blur_harmful_media=blur)
    if blind:
        hide_human_scores(thread=page.thread, reader_id=request.user.pk)
    url = request.build_absolute_uri(reverse("attack-detail", args=[attack.pk]))
    if fmt == "md":
        body = attack_markdown(page=page, url=url, blind=blind)
    else:
        body = attack_html(
            page=page,
            url=url,
            attack_list_url=request.build_absolute_uri(reverse("attack-list")),
            absolute=request.build_absolute_uri,
            blind=blind,
        )
    response = HttpResponse(body, content_type=DOWNLOADS[fmt])
    return as_attachment(response, f"redline-attack-{attack.pk}.{fmt}")


@login_required
@permission_required("memory.view_conversation", raise_exception=True)
def conversation_detail(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """One conversation (with or without an attack result) as a thread."""
    conversation = get_object_or_404(
        Conversation.objects.select_related("target_identifier", "push_source"),
        conversation_id=conversation_id,
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
