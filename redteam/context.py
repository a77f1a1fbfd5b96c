"""Template context shared by every server-rendered page."""

from __future__ import annotations

from django.http import HttpRequest

#: First path segment -> the top-navigation entry it belongs to.
_SECTIONS = {
    "attacks": "attacks",
    "conversations": "conversations",
    "dashboards": "dashboards",
    "imports": "imports",
}


def navigation(request: HttpRequest) -> dict[str, str]:
    """Which top-navigation entry is current, so the layout can mark it."""
    first = request.path.strip("/").split("/", 1)[0]
    return {"nav_section": _SECTIONS.get(first, "")}
