"""Human review: verdicts on attacks and human scores on pieces.

Both work as plain form posts (redirect back to the page) and with htmx (the changed part of
the page comes back and is swapped in). A verdict posted from a review queue's attack page
moves on to the queue's next attack; a bulk verdict records one verdict on every attack
selected in the attack list. Users without ``memory.add_humanverdict`` /
``memory.add_score`` (the ``viewer`` group) get 403 and never see the forms.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from memory.models import AttackResult, MessagePiece
from memory.review.detail import attack_detail
from memory.review.forms import SCORE_PERMISSION, VERDICT_PERMISSION, HumanScoreForm, VerdictForm
from memory.review.panels import verdict_context
from memory.review.queue_mode import queue_next_url, queue_param
from memory.review.thread import piece_scores, render_scores
from memory.storage.services import (
    human_score_add,
    human_verdict_record,
    human_verdicts_record_bulk,
)
from redteam.core.errors import InvalidMemory
from redteam.core.htmx import wants_fragment
from redteam.core.uuids import parse_uuid


def _add_problems(form: forms.Form, error: InvalidMemory) -> None:
    """Show a service's validation problems on the form fields they concern."""
    fields = {"value": "float_value", "outcome": "outcome", "reason": "reason"}
    for problem in error.problems:
        field = fields.get(problem.path, problem.path)
        form.add_error(field if field in form.fields else None, problem.message)


# --- verdicts -------------------------------------------------------------------------------


@login_required
@require_POST
def verdict_record(request: HttpRequest, attack_result_id) -> HttpResponse:
    """Record a human verdict on an attack (htmx: the verdict panel comes back)."""
    if not request.user.has_perm(VERDICT_PERMISSION):
        raise PermissionDenied("Recording verdicts needs the reviewer role.")
    attack = get_object_or_404(AttackResult, pk=attack_result_id)
    form = VerdictForm(request.POST)
    if form.is_valid():
        try:
            human_verdict_record(
                attack_result=attack,
                outcome=form.cleaned_data["outcome"],
                reason=form.cleaned_data["reason"],
                reviewer=request.user,
            )
        except InvalidMemory as error:
            _add_problems(form, error)
    queue_id = queue_param(request)
    if form.is_valid():
        if queue_id is not None:
            # From a review queue: straight on to the next attack that needs this reviewer.
            messages.success(request, "Verdict recorded.")
            return redirect(queue_next_url(queue_id, after=attack.pk))
        if wants_fragment(request):
            return render(
                request,
                "review/parts/verdicts.html",
                verdict_context(request, attack, form=VerdictForm(), recorded=True, oob=True),
            )
        messages.success(request, "Verdict recorded.")
        return redirect(reverse("attack-detail", args=[attack.pk]) + "#verdicts")
    if wants_fragment(request) and queue_id is None:
        # htmx swaps 2xx responses only; the form comes back with its errors.
        return render(request, "review/parts/verdicts.html", verdict_context(request, attack, form))
    return attack_detail(request, attack.pk, verdict_form=form, status=400)


#: The most attacks one bulk verdict may select (the list shows 50 a page).
BULK_LIMIT = 200


@login_required
@require_POST
def verdicts_bulk(request: HttpRequest) -> HttpResponse:
    """One verdict with one reason on every attack selected in the attack list; back to the
    list (``next``) with a message. All or none (``human_verdicts_record_bulk``)."""
    if not request.user.has_perm(VERDICT_PERMISSION):
        raise PermissionDenied("Recording verdicts needs the reviewer role.")
    back = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("attack-list")
    raw = request.POST.getlist("attack")[: BULK_LIMIT + 1]
    ids = [pk for pk in (parse_uuid(value) for value in raw) if pk is not None]
    attacks = list(AttackResult.objects.filter(pk__in=ids)) if len(ids) <= BULK_LIMIT else []
    if len(ids) > BULK_LIMIT:
        messages.error(request, f"Select at most {BULK_LIMIT} attacks at once.")
        return redirect(back)
    try:
        recorded = human_verdicts_record_bulk(
            attack_results=attacks,
            outcome=request.POST.get("outcome", ""),
            reason=request.POST.get("reason", ""),
            reviewer=request.user,
        )
    except InvalidMemory as error:
        messages.error(request, f"No verdict recorded: {error}")
    else:
        count = len(recorded)
        messages.success(request, f"Verdict recorded on {count} attack{'s' if count != 1 else ''}.")
    return redirect(back)


# --- human scores ---------------------------------------------------------------------------


def _back_url(request: HttpRequest, piece: MessagePiece) -> str:
    """Where a plain form post returns: ``next`` when it is ours, else the piece's page."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if wanted and url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    conversation = piece.message.conversation
    attack = AttackResult.objects.filter(conversation=conversation).order_by("-timestamp").first()
    if attack is not None:
        return reverse("attack-detail", args=[attack.pk]) + f"#piece-{piece.pk}"
    return (
        reverse("conversation-detail", args=[conversation.conversation_id]) + f"#piece-{piece.pk}"
    )


@login_required
@require_http_methods(["GET", "POST"])
def human_score(request: HttpRequest, piece_id) -> HttpResponse:
    """The human-score form of a piece (GET) and recording it (POST).

    htmx: GET returns the form fragment, a successful POST the piece's updated score list.
    Without JavaScript: GET is a page with the form, POST redirects back.
    """
    if not request.user.has_perm(SCORE_PERMISSION):
        raise PermissionDenied("Adding human scores needs the reviewer role.")
    piece = get_object_or_404(
        MessagePiece.objects.select_related("message__conversation"), pk=piece_id
    )
    form = HumanScoreForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        attack = (
            AttackResult.objects.filter(conversation_id=piece.message.conversation_id)
            .order_by("-timestamp")
            .first()
        )
        try:
            human_score_add(
                piece=piece,
                score_type=form.cleaned_data["score_type"],
                value=form.value,
                rationale=form.cleaned_data["rationale"],
                categories=form.category_list,
                reviewer=request.user,
                objective=attack.objective if attack else None,
            )
        except InvalidMemory as error:
            _add_problems(form, error)
        else:
            if wants_fragment(request):
                html = render_scores(
                    piece_id=str(piece.pk),
                    scores=piece_scores(piece=piece),
                    attack_list_url=reverse("attack-list"),
                    clear_form=True,
                )
                return HttpResponse(html)
            messages.success(request, "Human score added.")
            return redirect(_back_url(request, piece))
    context = {
        "piece": piece,
        "form": form,
        "next": _back_url(request, piece),
        "hx": wants_fragment(request),
    }
    status = 400 if request.method == "POST" else 200
    if wants_fragment(request):
        response = render(request, "review/parts/human_score_form.html", context)
        if request.method == "POST":
            # The form (with its errors) goes back where it was, not over the score list.
            response["HX-Retarget"] = f"#hs-{piece.pk}"
            response["HX-Reswap"] = "innerHTML"
        return response
    return render(request, "review/parts/human_score_page.html", context, status=status)
