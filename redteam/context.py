"""Template context shared by every server-rendered page: the navigation the user may open,
and the user's theme.

``NAVIGATION`` is the one list of top-level destinations. Each names the permission its page
checks, so the layout, the home page and the error pages show a link exactly when following it
would not end in a 403 (``tests/redteam/test_navigation.py`` walks every entry as every shipped
group to hold the two together).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.urls import reverse

from redteam.models import Theme, UserPreference


@dataclass(frozen=True)
class Destination:
    """A top-level page: where it is, and who may open it."""

    key: str
    label: str
    url_name: str
    #: Permissions the page checks (all of them); empty: any signed-in user.
    permissions: tuple[str, ...] = ()
    #: Pages inside the Django admin also need ``is_staff``.
    staff: bool = False
    #: Path prefixes that mark the entry as current.
    prefixes: tuple[str, ...] = ()

    def allowed(self, user) -> bool:
        """Whether ``user`` may open the page."""
        if not user.is_authenticated or (self.staff and not user.is_staff):
            return False
        return user.has_perms(self.permissions)


VIEW_ATTACKS = "memory.view_attackresult"
VIEW_CONVERSATIONS = "memory.view_conversation"

NAVIGATION: tuple[Destination, ...] = (
    Destination("attacks", "Attacks", "attack-list", (VIEW_ATTACKS,), prefixes=("/attacks/",)),
    Destination(
        "conversations",
        "Conversations",
        "conversation-list",
        (VIEW_CONVERSATIONS,),
        prefixes=("/conversations/",),
    ),
    Destination(
        "scenarios",
        "Scenarios",
        "scenario-list",
        ("memory.view_scenarioresult",),
        prefixes=("/scenarios/",),
    ),
    Destination(
        "seeds",
        "Seeds",
        "admin:seeds_seeddataset_changelist",
        ("seeds.view_seeddataset",),
        staff=True,
        prefixes=("/admin/seeds/",),
    ),
    Destination(
        "queues",
        "Queues",
        "queue-list",
        ("memory.view_reviewqueue",),
        prefixes=("/queues/",),
    ),
    Destination(
        "dashboards", "Dashboards", "dashboards", (VIEW_ATTACKS,), prefixes=("/dashboards/",)
    ),
    Destination(
        "findings",
        "Findings",
        "finding-list",
        ("memory.view_finding",),
        prefixes=("/findings/", "/operations/", "/reports/"),
    ),
    Destination(
        "imports", "Imports", "import-list", ("memory.add_importjob",), prefixes=("/imports/",)
    ),
    Destination("admin", "Admin", "admin:index", staff=True),
    Destination("api", "API docs", "api-docs", prefixes=("/api/docs/",)),
)

#: What the global search reads (objectives, conversation ids, piece text).
SEARCH_PERMISSIONS = (VIEW_ATTACKS, VIEW_CONVERSATIONS)


def destinations_for(user) -> dict[str, Destination]:
    """The destinations ``user`` may open, by key, in navigation order."""
    return {d.key: d for d in NAVIGATION if d.allowed(user)}


def user_theme(user) -> str:
    """The user's theme (``redteam.models.Theme``): "system" unless they chose otherwise.

    Reads ``user.preference`` as the login backend loaded it with the user (no query); a user
    loaded another way costs one query.
    """
    if user is None or not user.is_authenticated:
        return Theme.SYSTEM
    try:
        return user.preference.theme
    except UserPreference.DoesNotExist:
        return Theme.SYSTEM


def theme(request: HttpRequest) -> dict[str, str]:
    """``theme`` for ``<html data-theme>``: system, light or dark."""
    return {"theme": user_theme(getattr(request, "user", None))}


def navigation(request: HttpRequest) -> dict[str, object]:
    """The navigation entries the signed-in user may open, with the current one marked."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_entries": [], "nav_allowed": {}, "can_search": False}
    allowed = destinations_for(user)
    entries = []
    for destination in allowed.values():
        current = any(request.path.startswith(prefix) for prefix in destination.prefixes)
        entries.append(
            {
                "key": destination.key,
                "label": destination.label,
                "url": reverse(destination.url_name),
                "current": current,
            }
        )
    return {
        "nav_entries": entries,
        "nav_allowed": {key: True for key in allowed},
        "can_search": user.has_perms(SEARCH_PERMISSIONS),
    }
