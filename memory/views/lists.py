"""Attack and conversation lists, and the global search."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def attack_list(request: HttpRequest) -> HttpResponse:
    """Attack results, filtered by the shared filterset."""
    return render(request, "placeholder.html", {"title": "Attacks"})


@login_required
def conversation_list(request: HttpRequest) -> HttpResponse:
    """Conversations without an attack result."""
    return render(request, "placeholder.html", {"title": "Conversations"})


@login_required
def search(request: HttpRequest) -> HttpResponse:
    """Global search over objectives, conversation ids and piece text."""
    return render(request, "placeholder.html", {"title": "Search"})
