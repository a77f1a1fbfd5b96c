"""DRF authentication by API token: ``Authorization: Bearer <token>``."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.request import Request

from redteam.models import ApiToken
from redteam.security import security_event
from redteam.throttling import FailedAuthenticationThrottle
from redteam.tokens import api_token_authenticate


class BearerTokenAuthentication(BaseAuthentication):
    """Authenticate a request by its bearer token; ``request.auth`` is then the ``ApiToken``.

    A request without a bearer header is left to the next authentication class. A bearer
    header that is malformed or names no active token fails the request with 401: a script
    with a bad token must hear so, not be treated as anonymous. Each such failure counts
    against the client's address; over ``API_AUTH_FAILURE_RATE`` the address gets 429 with
    ``Retry-After`` and no token is checked.
    """

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[AbstractBaseUser, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) == 1:
            raise AuthenticationFailed("Invalid Authorization header: no bearer token given.")
        if len(parts) > 2:
            raise AuthenticationFailed(
                "Invalid Authorization header: the bearer token must not contain spaces."
            )
        failures = FailedAuthenticationThrottle()
        wait = failures.wait_for(request)
        if wait is not None:
            # Too many wrong tokens from this address: no token is checked until it passes.
            raise Throttled(wait, detail="Too many failed authentications from this address.")
        try:
            raw = parts[1].decode("ascii")
        except UnicodeDecodeError:
            failures.record_failure(request)
            raise AuthenticationFailed(
                "Invalid Authorization header: the bearer token must be ASCII."
            ) from None
        token = api_token_authenticate(raw=raw)
        if token is None:
            failures.record_failure(request)
            raise AuthenticationFailed("Invalid, expired or revoked API token.")
        security_event(
            "token_used",
            request=request._request,
            user=token.user.get_username(),
            token=token.key_prefix,
            scope=token.scope,
        )
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'
