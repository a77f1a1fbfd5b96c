"""The landing page: what is stored, and where to go next; the push guide."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from memory.models import AttackResult, Conversation
from memory.review.rendering import render_markdown
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


#: The push guide, shown as a page of the app to those who may push.
PUSH_GUIDE = settings.BASE_DIR / "docs" / "push.md"


@login_required
@permission_required("memory.add_importjob", raise_exception=True)
def push_guide(request: HttpRequest) -> HttpResponse:
    """``docs/push.md`` rendered (as any Markdown here: no raw HTML, sanitised), so the home
    page can link the guide to the people who push memory."""
    try:
        text = PUSH_GUIDE.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Http404("This installation ships without docs/push.md") from None
    return render(request, "push_guide.html", {"guide": mark_safe(render_markdown(text))})
