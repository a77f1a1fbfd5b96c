"""Project-level views: the landing page and a health check."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from memory.models import AttackResult, Conversation
from seeds.models import Seed


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Landing page: what is stored, and where to go next."""
    context = {
        "attack_count": AttackResult.objects.count(),
        "conversation_count": Conversation.objects.count(),
        "seed_count": Seed.objects.count(),
    }
    return render(request, "home.html", context)


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and database reachability, for load balancers; reveals nothing else."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
