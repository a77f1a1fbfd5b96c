"""htmx requests, as django-htmx's middleware describes them (``request.htmx``)."""

from __future__ import annotations

from django.http import HttpRequest


def wants_fragment(request: HttpRequest) -> bool:
    """Whether htmx asked for a part of a page (a swap) rather than the whole page.

    A history restore (htmx missing the page in its cache) is an htmx request that needs the
    whole page, so it counts as a page request.
    """
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request
