"""Review queue pages: the list, a queue's progress and agreement, creating and changing a
queue (leads), Next, and resolving a disagreement (leads).

What counts as a review, the order and the cost of reading a queue: ``memory.storage.queues``.
The views stay thin; writes go through ``memory.storage.services``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from memory.models import AttackResult, ReviewQueue
from memory.review.forms import (
    QUEUE_CHANGE_PERMISSION,
    QUEUE_CREATE_PERMISSION,
    RESOLVE_PERMISSION,
    QueueForm,
    VerdictForm,
)
from memory.review.queue_mode import queue_attack_url, queue_next_url
from memory.storage.queues import QueueState, queue_filter_params, queue_state
from memory.storage.services import queue_resolution_record, review_queue_save
from redteam.core.errors import InvalidMemory
from redteam.core.stats import percent_text
from redteam.core.uuids import parse_uuid

VIEW_PERMISSION = "memory.view_reviewqueue"
#: Disagreements listed on a queue's page (unresolved first); the count says how many in all.
DISAGREEMENTS_SHOWN = 100


def kappa_text(value: float | None) -> str:
    """κ to two decimals, or an en dash where it is undefined."""
    return "–" if value is None else f"{value:.2f}"


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def queue_list(request: HttpRequest) -> HttpResponse:
    """Every review queue: its rules and assignees, Next for the signed-in assignee.

    Queries: session, user, permissions, the queues (+ creator), their assignees.
    """
    queues = list(ReviewQueue.objects.select_related("created_by").prefetch_related("assignees"))
    for queue in queues:
        queue.people = sorted(user.get_username() for user in queue.assignees.all())
        queue.mine = any(user.pk == request.user.pk for user in queue.assignees.all())
    context = {
        "queues": queues,
        "can_create": request.user.has_perm(QUEUE_CREATE_PERMISSION),
    }
    return render(request, "review/queue_list.html", context)


def _can_see_reviews(state: QueueState, user: Any, attack_id: Any, can_resolve: bool) -> bool:
    """Blind queues keep an assignee from other reviews of an item they have not reviewed."""
    if not state.queue.blind or can_resolve or not state.is_assignee(user.pk):
        return True
    return user.pk in state.reviews.get(attack_id, {})


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def queue_detail(request: HttpRequest, queue_id: int) -> HttpResponse:
    """A queue: progress overall and per reviewer, agreement, the disagreement list.

    Queries: session, user, permissions, the queue, its state (assignees, items, verdicts,
    resolutions; see ``queue_state``) and the objectives of the listed disagreements, whatever
    the number of items.
    """
    queue = get_object_or_404(ReviewQueue.objects.select_related("created_by"), pk=queue_id)
    state = queue_state(queue=queue)
    user = request.user
    can_resolve = user.has_perm(RESOLVE_PERMISSION) and user.has_perm("memory.add_humanverdict")
    disagreements = state.disagreements()
    shown = disagreements[:DISAGREEMENTS_SHOWN]
    objectives = dict(
        AttackResult.objects.filter(pk__in=[item.attack_id for item in shown]).values_list(
            "pk", "objective"
        )
    )
    rows = [
        {
            "item": item,
            "objective": objectives.get(item.attack_id, ""),
            "url": queue_attack_url(queue.pk, item.attack_id),
            "visible": _can_see_reviews(state, user, item.attack_id, can_resolve),
        }
        for item in shown
    ]
    figures = state.agreement()
    reviewers = [
        {
            "row": row,
            "kappa": kappa_text(row.vs_automated.kappa),
            "observed": percent_text(row.vs_automated.observed),
        }
        for row in state.reviewer_progress()
    ]
    pairs = [
        {
            "pair": pair,
            "kappa": kappa_text(pair.agreement.kappa),
            "observed": percent_text(pair.agreement.observed),
        }
        for pair in figures.pairs
    ]
    filter_query = queue_filter_params(queue.filter_query).urlencode()
    context = {
        "queue": queue,
        "state": state,
        "progress": state.progress(),
        "needing": state.needing(user.pk),
        "assignee": state.is_assignee(user.pk),
        "next_url": queue_next_url(queue.pk),
        "reviewers": reviewers,
        "figures": figures,
        "fleiss_kappa": kappa_text(figures.fleiss.kappa) if figures.fleiss else None,
        "pairs": pairs,
        "disagreements": rows,
        "disagreement_count": len(disagreements),
        "can_resolve": can_resolve,
        "can_change": user.has_perm(QUEUE_CHANGE_PERMISSION),
        "attacks_url": reverse("attack-list") + (f"?{filter_query}" if filter_query else ""),
        "resolution_form": VerdictForm(),
    }
    return render(request, "review/queue_detail.html", context)


def _form_problems(form: QueueForm, error: InvalidMemory) -> None:
    for problem in error.problems:
        form.add_error(problem.path if problem.path in form.fields else None, problem.message)


@login_required
@require_http_methods(["GET", "POST"])
def queue_edit(request: HttpRequest, queue_id: int | None = None) -> HttpResponse:
    """Create a queue (``/queues/new/``, ``?filter=`` prefills the filter) or change one."""
    needed = QUEUE_CREATE_PERMISSION if queue_id is None else QUEUE_CHANGE_PERMISSION
    if not request.user.has_perm(needed):
        raise PermissionDenied("Creating and changing review queues needs the lead role.")
    queue = get_object_or_404(ReviewQueue, pk=queue_id) if queue_id is not None else None
    if request.method == "POST":
        form = QueueForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                queue = review_queue_save(
                    queue=queue,
                    user=request.user,
                    name=data["name"],
                    description=data["description"],
                    filter_query=data["filter_query"],
                    required_reviews=data["required_reviews"],
                    blind=data["blind"],
                    assignees=list(data["assignees"]),
                )
            except InvalidMemory as error:
                _form_problems(form, error)
            else:
                messages.success(request, f"Queue “{queue.name}” saved.")
                return redirect(queue.get_absolute_url())
    elif queue is not None:
        form = QueueForm(
            initial={
                "name": queue.name,
                "description": queue.description,
                "filter_query": queue.filter_query,
                "required_reviews": queue.required_reviews,
                "blind": queue.blind,
                "assignees": list(queue.assignees.all()),
            }
        )
    else:
        form = QueueForm(initial={"filter_query": request.GET.get("filter", "")})
    status = 400 if request.method == "POST" else 200
    return render(request, "review/queue_form.html", {"form": form, "queue": queue}, status=status)


@login_required
@permission_required(VIEW_PERMISSION, raise_exception=True)
def queue_next(request: HttpRequest, queue_id: int) -> HttpResponse:
    """To the next attack of the queue that needs the signed-in reviewer (after ``?after=``,
    wrapping round), or back to the queue when nothing does."""
    queue = get_object_or_404(ReviewQueue, pk=queue_id)
    state = queue_state(queue=queue)
    if not state.is_assignee(request.user.pk):
        messages.info(request, "You are not assigned to this queue.")
        return redirect(queue.get_absolute_url())
    attack_id = state.next_for(request.user.pk, after=parse_uuid(request.GET.get("after")))
    if attack_id is None:
        messages.success(request, "Nothing in this queue needs your review any more.")
        return redirect(queue.get_absolute_url())
    return redirect(queue_attack_url(queue.pk, attack_id))


@login_required
@require_POST
def queue_resolve(request: HttpRequest, queue_id: int, attack_result_id) -> HttpResponse:
    """A lead's final verdict on a disagreement of the queue (back to the queue's page)."""
    queue = get_object_or_404(ReviewQueue, pk=queue_id)
    attack = get_object_or_404(AttackResult, pk=attack_result_id)
    form = VerdictForm(request.POST)
    back = reverse("queue-detail", args=[queue.pk]) + "#disagreements"
    if not form.is_valid():
        messages.error(request, "Choose an outcome and give a reason to resolve.")
        return redirect(back)
    try:
        queue_resolution_record(
            queue=queue,
            attack_result=attack,
            outcome=form.cleaned_data["outcome"],
            reason=form.cleaned_data["reason"],
            resolved_by=request.user,
        )
    except InvalidMemory as error:
        messages.error(request, f"Not resolved: {error}")
    else:
        messages.success(request, "Disagreement resolved: the attack's human outcome is yours.")
    return redirect(back)
