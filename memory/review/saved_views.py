"""Each reviewer's own list settings: saved views (a list's filters under a name) and the
attack list's columns.

A saved view is a name for a query string of a list page; opening it is following the link,
so it means exactly what the filters mean at that moment. Columns are a preference, read
with the user at login (no query per page).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from memory.review.lists import OPTIONAL_ATTACK_COLUMNS
from redteam.core.errors import InvalidMemory, Problem
from redteam.models import SavedView, UserPreference

#: Pages a view can be saved for (URL names), with their labels.
SAVABLE_PAGES = {
    "attack-list": "Attacks",
    "conversation-list": "Conversations",
    "scenario-list": "Scenario runs",
}
NAME_MAX = 120
QUERY_MAX = 4000
#: Query parameters that are a position in a list, not part of what is viewed.
_NOT_SAVED = {"page", "format"}


def saved_view_save(*, user, page: str, name: str, query: str) -> SavedView:
    """Save ``query`` (a list's query string) under ``name`` for ``user`` on ``page``;
    the same name again replaces the stored query. Raises ``InvalidMemory`` with every
    problem."""
    problems: list[Problem] = []
    name = (name or "").strip()
    if page not in SAVABLE_PAGES:
        problems.append(Problem("page", f"views cannot be saved for {page!r}"))
    if not name:
        problems.append(Problem("name", "is required"))
    elif len(name) > NAME_MAX:
        problems.append(Problem("name", f"must be at most {NAME_MAX} characters"))
    params = QueryDict(query.lstrip("?"), mutable=True)
    for key in _NOT_SAVED:
        params.pop(key, None)
    clean_query = params.urlencode()
    if len(clean_query) > QUERY_MAX:
        problems.append(Problem("query", f"must be at most {QUERY_MAX} characters"))
    if "\x00" in name or "\x00" in clean_query:
        problems.append(Problem("name", "null characters are not allowed"))
    if problems:
        raise InvalidMemory(problems)
    with transaction.atomic():
        view, _ = SavedView.objects.update_or_create(
            user=user, page=page, name=name, defaults={"query": clean_query}
        )
    return view


def saved_views_for(*, user, page: str) -> list[SavedView]:
    """``user``'s views of ``page``, by name (one query)."""
    return list(SavedView.objects.filter(user=user, page=page))


def attack_columns_save(*, user, columns: list[str]) -> list[str]:
    """Store the attack-list columns ``user`` shows (unknown keys are dropped), in display
    order; returns them."""
    chosen = [key for key in OPTIONAL_ATTACK_COLUMNS if key in set(columns)]
    preference, _ = UserPreference.objects.get_or_create(user=user)
    preference.attack_columns = chosen
    preference.save(update_fields=["attack_columns"])
    return chosen


def _back(request: HttpRequest, fallback: str) -> HttpResponseRedirect:
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = fallback
    return HttpResponseRedirect(target)


@login_required
@require_POST
def save_view(request: HttpRequest) -> HttpResponse:
    """Save the list the user is on under a name (POST ``page``, ``name``, ``query``)."""
    page = request.POST.get("page", "")
    try:
        saved_view_save(
            user=request.user,
            page=page,
            name=request.POST.get("name", ""),
            query=request.POST.get("query", ""),
        )
    except InvalidMemory as exc:
        message = "; ".join(f"{p.path}: {p.message}" for p in exc.problems)
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    except IntegrityError:
        return HttpResponse("could not save the view", status=409, content_type="text/plain")
    fallback = reverse(page) if page in SAVABLE_PAGES else reverse("home")
    return _back(request, fallback)


@login_required
@require_POST
def delete_view(request: HttpRequest, view_id: int) -> HttpResponse:
    """Forget one of the user's own saved views."""
    deleted, _ = SavedView.objects.filter(pk=view_id, user=request.user).delete()
    if not deleted:
        raise Http404("No such saved view")
    return _back(request, reverse("attack-list"))


@login_required
@require_POST
def save_attack_columns(request: HttpRequest) -> HttpResponse:
    """Store which optional columns the attack list shows for this user."""
    attack_columns_save(user=request.user, columns=request.POST.getlist("columns"))
    return _back(request, reverse("attack-list"))
