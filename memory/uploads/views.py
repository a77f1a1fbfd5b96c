"""Upload pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def import_list(request: HttpRequest) -> HttpResponse:
    """Upload form and the list of import jobs."""
    return render(request, "placeholder.html", {"title": "Imports"})
