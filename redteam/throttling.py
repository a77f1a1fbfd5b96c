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


class FailedAuthenticationThrottle(SimpleRateThrottle):
    """Failed API authentications per client address (``API_AUTH_FAILURE_RATE``).

    DRF runs throttles after authentication, so a request with a wrong token fails before any
    throttle counts it: guessing tokens would be unlimited. The bearer authentication asks
    :meth:`wait_for` before checking a token and calls :meth:`record_failure` after each
    failure; the address is the one the login lockout uses (``redteam.proxies``).
    """

    scope = "auth-failure"

    def __init__(self) -> None:
        # The rate is read per request (see ``get_rate``), not once in DRF's constructor.
        pass

    def get_rate(self) -> str | None:
        return settings.REDLINE_API_AUTH_FAILURE_RATE or None

    def get_cache_key(self, request: Request, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_address(request) or ""}

    def _load(self, request: Request) -> bool:
        """Read the rate and this address's failures inside the period; False: no limit."""
        self.rate = self.get_rate()
        if self.rate is None:
            return False
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.key = self.get_cache_key(request, None)
        self.now = self.timer()
        self.history = [t for t in self.cache.get(self.key, []) if t > self.now - self.duration]
        return True

    def wait_for(self, request: Request) -> float | None:
        """Seconds until this address may try again, or None while it is under the limit."""
        if not self._load(request) or len(self.history) < self.num_requests:
            return None
        return self.wait()

    def record_failure(self, request: Request) -> None:
        """Count one failed authentication of this address."""
        if self._load(request):
            self.throttle_success()
