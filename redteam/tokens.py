"""Services for API tokens: create (the only time the plain token exists), revoke, authenticate."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils import timezone

from redteam.models import ApiToken, ApiTokenScope

#: Marks our tokens in logs and secret scanners.
TOKEN_PREFIX = "rl_"
#: Characters of the token kept in clear to identify it (``rl_`` plus five random ones).
KEY_PREFIX_LENGTH = 8
#: Longer values are not our tokens; rejecting them early saves hashing attacker input.
MAX_TOKEN_LENGTH = 100
#: ``last_used_at`` is written at most this often, not once per request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_hash(raw: str) -> str:
    """Hex SHA-256 of a plain token: what is stored and looked up (see ``ApiToken``)."""
    return hashlib.sha256(raw.encode()).hexdigest()


def api_token_create(
    *,
    user: AbstractBaseUser,
    scope: str,
    name: str = "",
    expires_at: datetime | None = None,
) -> tuple[ApiToken, str]:
    """Create a token for ``user``; return it with the plain token, which is never stored."""
    if scope not in ApiTokenScope.values:
        raise ValueError(f"unknown token scope {scope!r}; expected one of {ApiTokenScope.values}")
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        scope=scope,
        name=name,
        expires_at=expires_at,
        key_prefix=raw[:KEY_PREFIX_LENGTH],
        key_hash=token_hash(raw),
    )
    return token, raw


def api_tokens_revoke(*, tokens: QuerySet[ApiToken]) -> int:
    """Revoke every token of ``tokens`` not revoked yet; return how many were revoked."""
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke ``token``; it stops authenticating at once. Revoking twice keeps the first time."""
    api_tokens_revoke(tokens=ApiToken.objects.filter(pk=token.pk))
    token.refresh_from_db(fields=["revoked_at"])


def api_token_authenticate(*, raw: str) -> ApiToken | None:
    """The active token whose plain value is ``raw`` (with its user loaded), else ``None``.

    Revoked and expired tokens and tokens of inactive users are rejected. The lookup is by hash,
    so its timing can only reveal something about the hash of the guess, never about a stored
    token; the final ``compare_digest`` keeps the comparison itself constant-time anyway.
    """
    if not raw or len(raw) > MAX_TOKEN_LENGTH:
        return None
    digest = token_hash(raw)
    token = ApiToken.objects.active().select_related("user").filter(key_hash=digest).first()
    if token is None or not hmac.compare_digest(token.key_hash, digest):
        return None
    _touch(token)
    return token


def _touch(token: ApiToken) -> None:
    """Record that ``token`` was used, at most once per ``LAST_USED_RESOLUTION``.

    The conditional UPDATE makes concurrent requests of the same token write at most once.
    """
    now = timezone.now()
    stale = now - LAST_USED_RESOLUTION
    if token.last_used_at is not None and token.last_used_at > stale:
        return
    ApiToken.objects.filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lte=stale), pk=token.pk
    ).update(last_used_at=now)
    token.last_used_at = now
