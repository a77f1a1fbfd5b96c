"""Deployment checks of the findings capability (``manage.py check --deploy``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

#: Below this many characters a seal key is guessable offline from any one seal.
SEAL_KEY_MIN_LENGTH = 32


@checks.register(checks.Tags.security, deploy=True)
def seal_key_check(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Warn when evidence seals use a key derived from ``SECRET_KEY`` or a short key."""
    key = settings.REDLINE_SEAL_KEY
    if not key:
        return [
            checks.Warning(
                "REDLINE_SEAL_KEY is not set: evidence seals use a key derived from SECRET_KEY.",
                hint="Anyone holding SECRET_KEY can forge seals, and rotating SECRET_KEY "
                "without keeping the old one in SECRET_KEY_FALLBACKS leaves every seal "
                "unverifiable. Set REDLINE_SEAL_KEY to a random value of its own "
                "(docs/deployment.md).",
                id="redline.W001",
            )
        ]
    if len(key) < SEAL_KEY_MIN_LENGTH:
        return [
            checks.Warning(
                f"REDLINE_SEAL_KEY is shorter than {SEAL_KEY_MIN_LENGTH} characters.",
                hint="A short key can be guessed offline from a seal; use 32 random bytes "
                "or more (python -c 'import secrets; print(secrets.token_urlsafe(48))').",
                id="redline.W002",
            )
        ]
    return []
