"""drf-spectacular extension: document ``BearerTokenAuthentication`` as an HTTP bearer scheme.

Imported from ``RedteamConfig.ready``; defining the class registers it.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """The ``bearerAuth`` security scheme of the OpenAPI schema."""

    target_class = "redteam.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        scheme = build_bearer_security_scheme_object(
            header_name="HTTP_AUTHORIZATION", token_prefix=self.target.keyword
        )
        scheme["description"] = (
            "An API token from `manage.py create_api_token USERNAME [--scope ingest]`."
        )
        return scheme
