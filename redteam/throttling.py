"""API rate limits per token (``API_RATE``, docs/deployment.md)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from redteam.models import ApiToken
from redteam.proxies import client_address


class TokenRateThrottle(SimpleRateThrottle):
    """Requests per period per API token; a signed-in browser session counts per user, an
    anonymous request per address. Over the rate: 429 with ``Retry-After``.

    Counts live in the Django cache: with several server processes, point ``CACHES`` at a
    shared cache for one count across them (docs/deployment.md).
    """

    scope = "api"

    def get_rate(self) -> str | None:
        # Read per request, not once at import (DRF's default): a changed setting applies.
        return settings.REDLINE_API_RATE or None

    def get_ident(self, request: Request) -> str:
        # DRF's own reads X-Forwarded-For from anyone (NUM_PROXIES unset), so a client could
        # pick a fresh address per request; only a trusted proxy's header counts here.
        return client_address(request) or ""

    def get_cache_key(self, request: Request, view: Any) -> str:
        if isinstance(request.auth, ApiToken):
            ident = f"token-{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
