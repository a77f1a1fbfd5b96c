"""Dashboard pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """The dashboard page."""
    return render(request, "placeholder.html", {"title": "Dashboards"})
