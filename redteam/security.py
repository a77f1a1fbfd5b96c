"""The security log: failed logins, lockouts, API token use and refusals, permission denials.

One JSON object per line on the ``redline.security`` logger (``docs/deployment.md``), so a log
shipper can alert on it without parsing prose. Events come from Django's and django-axes'
signals and from the places that decide (token authentication, the 403 handlers).
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest

from redteam.proxies import client_address

logger = logging.getLogger("redline.security")


def client_ip(request: HttpRequest | None) -> str | None:
    """The client's address: ``REMOTE_ADDR``, or behind a proxy of ``REDLINE_TRUSTED_PROXIES``
    the address it forwarded for (``redteam.proxies``); the same address the login lockout
    and the API's anonymous rate limit count by."""
    if request is None:
        return None
    return client_address(request)


def security_event(event: str, *, request: HttpRequest | None = None, **fields: Any) -> None:
    """Log one security event with the request's address, method and path."""
    details: dict[str, Any] = {"event": event, **fields}
    if request is not None:
        details.update(ip=client_ip(request), method=request.method, path=request.path)
        user = getattr(request, "user", None)
        if user is not None and getattr(user, "is_authenticated", False):
            details.setdefault("user", user.get_username())
    level = logging.INFO if event == "token_used" else logging.WARNING
    logger.log(level, event, extra={"security": details})


@receiver(user_login_failed)
def _login_failed(sender: Any, credentials: dict[str, Any], request: Any = None, **kw: Any) -> None:
    security_event("login_failed", request=request, username=credentials.get("username"))


def connect_axes() -> None:
    """Log django-axes' lockouts (called when the app is ready)."""
    from axes.signals import user_locked_out

    @receiver(user_locked_out, weak=False)
    def _locked_out(sender: Any, request: Any, username: Any, ip_address: Any, **kw: Any) -> None:
        security_event("login_locked_out", request=request, username=username)
