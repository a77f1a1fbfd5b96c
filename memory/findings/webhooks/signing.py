"""The ``X-Redline-Signature`` header: HMAC-SHA256 of the timestamp, a dot and the body.

Pure Python, so a receiver can copy it (docs/webhooks.md has the same code as a snippet).
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Redline-Signature"
TIMESTAMP_HEADER = "X-Redline-Timestamp"
EVENT_HEADER = "X-Redline-Event"
DELIVERY_HEADER = "X-Redline-Delivery"
#: How old a signed request a receiver should still accept, in seconds (replays are refused).
TOLERANCE_SECONDS = 300


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The header's value: ``sha256=`` and the hex HMAC-SHA256 of ``"<timestamp>." + body``."""
    message = str(timestamp).encode("ascii") + b"." + body
    return "sha256=" + hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def verify(
    *,
    secret: str,
    body: bytes,
    timestamp: str,
    header: str,
    now: float,
    tolerance: int = TOLERANCE_SECONDS,
) -> bool:
    """True when ``header`` signs ``body`` at ``timestamp`` with ``secret`` and the timestamp
    is within ``tolerance`` seconds of ``now`` (what a receiver checks)."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs(now - sent) > tolerance:
        return False
    expected = signature(secret=secret, timestamp=sent, body=body)
    return hmac.compare_digest(expected, header)
