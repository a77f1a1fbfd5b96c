"""Redline's API as the push client uses it: limits, ingestion, media; retries built in.

Retried with exponential backoff (capped at 30 s): connection errors and timeouts, 5xx, and
429 (after its ``Retry-After``). Not retried — a :class:`Fatal` with one clear line: 401 and
403 (wrong token, missing scope or group), a server too old to know what the client sends,
and anything else a retry cannot mend.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests

from redline_push import __version__

#: What the client needs from the server (``GET /api/v1/ingest/limits/``, ``features``).
NEEDED_FEATURES = ("push_source", "media_link")


class Fatal(Exception):
    """Stop: one line for the user, exit status 2."""


class Interrupted(Exception):
    """Ctrl-C while waiting to retry: the batch was not sent, nothing is lost."""


@dataclass(frozen=True)
class Limits:
    """The server's ingestion limits (``GET /api/v1/ingest/limits/``)."""

    max_body_bytes: int
    max_items: int
    max_media_bytes: int


class Api:
    """One Redline server, one token."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        retries: int = 8,
        stop: threading.Event | None = None,
        log: Any = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.retries = retries
        self.stop = stop or threading.Event()
        self.log = log or (lambda message: None)
        self.session = requests.Session()
        self.session.headers.update(
            {"Authorization": f"Bearer {token}", "User-Agent": f"redline-push/{__version__}"}
        )

    def close(self) -> None:
        self.session.close()

    # --- endpoints --------------------------------------------------------------------------

    def limits(self) -> Limits:
        """The server's limits; :class:`Fatal` if it is too old or the token cannot push."""
        response = self._call("GET", "/api/v1/ingest/limits/", what="reading the limits")
        if response.status_code == 404:
            raise Fatal(
                f"{self.url} has no /api/v1/ingest/limits/: this Redline is too old for "
                "redline-push (or the URL is not a Redline); upgrade it"
            )
        body = self._json(response, "reading the limits")
        missing = [f for f in NEEDED_FEATURES if f not in body.get("features", [])]
        if missing:
            raise Fatal(
                f"{self.url} is too old for this redline-push (it lacks {', '.join(missing)}); "
                "upgrade Redline"
            )
        if not body.get("can_ingest", False):
            raise Fatal(
                "this token may read but not push: it needs the ingest scope "
                "(create_api_token USER --scope ingest) and its user the ingest group"
            )
        return Limits(
            max_body_bytes=int(body["max_body_bytes"]),
            max_items=int(body["max_items"]),
            max_media_bytes=int(body["max_media_bytes"]),
        )

    def ingest(self, body: bytes) -> dict[str, Any]:
        """POST one batch (``partial=true``: good items are written, bad ones listed)."""
        response = self._call(
            "POST",
            "/api/v1/ingest/?partial=true",
            what="sending a batch",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        if response.status_code in (200, 207):
            return self._json(response, "sending a batch")
        detail = _detail(response)
        if response.status_code == 400 and "push_source" in detail:
            raise Fatal(f"{self.url} is too old for redline-push (it refused push_source)")
        raise Fatal(f"Redline refused a batch (HTTP {response.status_code}): {detail}")

    def media(self, *, sha256: str, location: str, content: bytes | None) -> int:
        """PUT one media file; without ``content`` only link bytes the server already has.
        Returns the status (200/201 stored or linked, 404 bytes wanted, 413 too large)."""
        files = {"sha256": (None, sha256), "path": (None, location)}
        if content is not None:
            files["file"] = ("media", content)
        response = self._call("PUT", "/api/v1/media/", what="sending a media file", files=files)
        if response.status_code in (200, 201, 404, 413):
            return response.status_code
        raise Fatal(
            f"Redline refused a media file (HTTP {response.status_code}): {_detail(response)}"
        )

    # --- the retry loop -----------------------------------------------------------------------

    def _call(self, method: str, path: str, *, what: str, **kwargs: Any) -> requests.Response:
        attempt = 0
        while True:
            delay = min(30.0, 0.5 * 2**attempt) * (0.8 + 0.4 * random.random())
            try:
                response = self.session.request(
                    method, self.url + path, timeout=(10, 600), **kwargs
                )
            except requests.exceptions.SSLError as exc:
                # a certificate or protocol mismatch does not mend itself
                raise Fatal(f"{what}: TLS failed talking to {self.url} ({exc})") from exc
            except requests.RequestException as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code in (401, 403):
                    raise Fatal(_auth_message(response))
                if response.status_code == 429 or response.status_code >= 500:
                    failure = f"HTTP {response.status_code}"
                    delay = _retry_after(response) or delay
                else:
                    return response
            attempt += 1
            if attempt > self.retries:
                raise Fatal(f"{what} failed {attempt} times ({failure}); giving up")
            self.log(f"{what}: {failure}; retry {attempt}/{self.retries} in {delay:.1f} s")
            if self.stop.wait(delay):
                raise Interrupted

    @staticmethod
    def _json(response: requests.Response, what: str) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError as exc:
            raise Fatal(
                f"{what}: the answer is not JSON (HTTP {response.status_code}); "
                "is the URL a Redline?"
            ) from exc
        if not isinstance(body, dict):
            raise Fatal(f"{what}: unexpected answer (HTTP {response.status_code})")
        return body


def _detail(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict):
        if body.get("errors"):
            first = body["errors"][0]
            return f"{first.get('path')}: {first.get('message')}"[:300]
        if body.get("detail"):
            return str(body["detail"])[:300]
    return str(body)[:300]


def _auth_message(response: requests.Response) -> str:
    if response.status_code == 401:
        return (
            "Redline refused the token (HTTP 401): wrong, expired or revoked; set --token or "
            "REDLINE_TOKEN to a token made with create_api_token USER --scope ingest"
        )
    return (
        f"Redline refused this token the push (HTTP 403: {_detail(response)}); it needs the "
        "ingest scope and its user the ingest group"
    )


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
