"""The landing page: what is stored, and where to go next."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.models import AttackResult, Conversation
from seeds.models import Seed


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Counts of what is stored and links to the pages the user may open."""
    context = {
        "attack_count": AttackResult.objects.count(),
        "conversation_count": Conversation.objects.count(),
        "seed_count": Seed.objects.count(),
    }
    return render(request, "home.html", context)
