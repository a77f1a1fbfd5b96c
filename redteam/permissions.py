"""DRF permissions: token scopes on top of Django model permissions.

The API's default classes are ``IsAuthenticated``, ``TokenScope`` and ``ModelPermissions``.
Views without a queryset (ingestion) use ``RequiredPermissions`` instead of
``ModelPermissions``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured
from rest_framework.permissions import SAFE_METHODS, BasePermission, DjangoModelPermissions

from redteam.models import ApiToken, ApiTokenScope

if TYPE_CHECKING:
    # Only for annotations: importing DRF's views here is circular (they read these settings).
    from rest_framework.request import Request
    from rest_framework.views import APIView


class TokenScope(BasePermission):
    """A token's scope limits what its user may do: read tokens only read.

    Safe methods need a read or ingest token; unsafe ones an ingest token. Requests
    authenticated otherwise (a session) pass: their rights come from model permissions.
    """

    message = "This API token has scope 'read'; writing needs a token with scope 'ingest'."

    def has_permission(self, request: Request, view: APIView) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        if request.method in SAFE_METHODS:
            return token.scope in ApiTokenScope.values
        return token.can_write


class ModelPermissions(DjangoModelPermissions):
    """DRF's model permissions, with reads (GET, HEAD, OPTIONS) needing ``view_<model>``."""

    perms_map = {
        **DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "OPTIONS": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
    }


class RequiredPermissions(BasePermission):
    """Permissions named on a view without a queryset: ``view.required_permissions``.

    Either a list of ``"app_label.codename"`` needed for every method, or a dict mapping an
    HTTP method to such a list; a method the dict does not name is refused (HEAD follows GET).
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        user = request.user
        if not user or not user.is_authenticated:
            return False
        perms = self.required_for(view, request.method or "")
        return perms is not None and user.has_perms(perms)

    @staticmethod
    def required_for(view: APIView, method: str) -> Sequence[str] | None:
        """The permissions ``view`` requires for ``method``, or ``None`` if it is not allowed."""
        required = getattr(view, "required_permissions", None)
        if required is None:
            raise ImproperlyConfigured(
                f"{type(view).__name__} uses RequiredPermissions but sets no required_permissions."
            )
        if isinstance(required, Mapping):
            if method == "HEAD" and "HEAD" not in required:
                method = "GET"
            return required.get(method)
        return required
