"""The webhook outbox: events queued as delivery rows, and the passes that send them.

An event becomes one ``WebhookDelivery`` per active endpoint subscribed to it, written in bulk
(``webhook_deliveries_queue``). ``webhook_deliveries_send_due`` is one pass of the worker
(``manage.py deliver_webhooks``): it claims the due deliveries, so two workers never send the
same one, and sends each. A failed attempt is tried again after an exponential delay with
jitter (:func:`retry_delay`); after :data:`MAX_ATTEMPTS` the delivery has failed. The clock and
the random source are parameters, so the schedule is tested without waiting.
"""

from __future__ import annotations

import http.client
import logging
import random
import secrets
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from memory.findings.webhooks import payloads, signing, transport
from memory.models import DeliveryState, WebhookDelivery, WebhookEndpoint, WebhookEvent

logger = logging.getLogger(__name__)

#: Attempts before a delivery has failed: the first and five retries.
MAX_ATTEMPTS = 6
#: The delay after the first failed attempt; each further one doubles it (2, 4, 8, 16, 32
#: minutes: the sixth attempt comes about an hour after the first).
FIRST_RETRY = timedelta(minutes=2)
#: Each delay is stretched or shrunk by up to this fraction at random, so endpoints that were
#: down together are not all retried in the same second.
JITTER = 0.2
#: How long a worker owns the deliveries it claimed; a worker that died mid-pass leaves them
#: to the next pass after this.
LEASE = timedelta(minutes=2)
#: Deliveries one pass claims at most.
PASS_SIZE = 50
#: Deliveries the admin sends within its request (the rest wait for the worker).
SEND_NOW_LIMIT = 5
#: Deliveries written per INSERT.
INSERT_BATCH = 500

Clock = Callable[[], datetime]
Sender = Callable[..., transport.Response]


def webhook_secret_new() -> str:
    """A fresh signing secret (256 random bits)."""
    return "whsec_" + secrets.token_urlsafe(32)


def webhook_endpoint_save(
    *,
    endpoint: WebhookEndpoint,
    actor: AbstractBaseUser,
    new_secret: str | None = None,
    generate_secret: bool = False,
) -> str | None:
    """Save an endpoint (new or changed) with its secret: ``new_secret`` when given, a
    generated one when asked or when a new endpoint has none. Returns a generated secret, to be
    shown once; a secret the user typed is never shown back."""
    generated = None
    if new_secret:
        endpoint.secret = new_secret
    elif generate_secret or not endpoint.secret:
        endpoint.secret = generated = webhook_secret_new()
    if endpoint._state.adding and endpoint.created_by_id is None:
        endpoint.created_by = actor
    endpoint.updated_at = timezone.now()
    endpoint.save()
    return generated


def retry_delay(*, attempt: int, rng: random.Random) -> timedelta:
    """The wait after failed attempt number ``attempt`` (1 for the first)."""
    return FIRST_RETRY * (2 ** (attempt - 1)) * rng.uniform(1 - JITTER, 1 + JITTER)


def webhook_endpoints_subscribed(*, event: str) -> list[WebhookEndpoint]:
    """The active endpoints that receive ``event`` (few rows: filtered in Python, since the
    JSON list lookups differ between SQLite and PostgreSQL)."""
    return [e for e in WebhookEndpoint.objects.filter(active=True) if e.subscribes_to(event)]


def webhook_deliveries_queue(
    *,
    event: str,
    endpoints: Sequence[WebhookEndpoint],
    items: Iterable[dict[str, Any]],
    now: datetime,
) -> list[WebhookDelivery]:
    """One event per item of ``items`` (its data), each queued once per endpoint, due now."""
    rows = []
    for data in items:
        payload = payloads.envelope(event=event, data=data, at=now)
        for endpoint in endpoints:
            rows.append(
                WebhookDelivery(
                    endpoint=endpoint,
                    event=event,
                    event_id=payload["id"],
                    payload=payload,
                    next_attempt_at=now,
                    created_at=now,
                )
            )
    return WebhookDelivery.objects.bulk_create(rows, batch_size=INSERT_BATCH)


def webhook_endpoints_ping(
    *,
    endpoints: Iterable[WebhookEndpoint],
    clock: Clock = timezone.now,
    sender: Sender = transport.post,
) -> list[WebhookDelivery]:
    """Send each endpoint a ``ping`` now, inactive ones too (to try one before switching it
    on); the deliveries are logged like any other and retried if they fail."""
    queued = webhook_deliveries_queue(
        event=WebhookEvent.PING,
        endpoints=list(endpoints),
        items=[payloads.ping_data()],
        now=clock(),
    )
    return _send_now([d.pk for d in queued], clock=clock, sender=sender)


def webhook_deliveries_retry(
    *,
    deliveries: QuerySet[WebhookDelivery],
    clock: Clock = timezone.now,
    sender: Sender = transport.post,
) -> tuple[int, list[WebhookDelivery]]:
    """Queue these deliveries again, due now (delivered ones are left alone): a failed one
    gets one more attempt, and the usual retries if that fails too. The first
    :data:`SEND_NOW_LIMIT` are sent at once, the rest by the worker. Returns how many were
    queued and the ones sent."""
    ids = list(deliveries.exclude(state=DeliveryState.DELIVERED).values_list("pk", flat=True))
    WebhookDelivery.objects.filter(pk__in=ids).update(
        state=DeliveryState.PENDING, next_attempt_at=clock()
    )
    return len(ids), _send_now(ids, clock=clock, sender=sender)


def _send_now(ids: list[Any], *, clock: Clock, sender: Sender) -> list[WebhookDelivery]:
    """Send some deliveries in the admin's request (a test event, "retry now"): a few, so the
    page answers within a minute even when every endpoint times out."""
    claimed = _claim(WebhookDelivery.objects.filter(pk__in=ids), now=clock(), limit=SEND_NOW_LIMIT)
    rng = random.Random()
    return [webhook_delivery_send(delivery=d, clock=clock, rng=rng, sender=sender) for d in claimed]


def webhook_deliveries_send_due(
    *,
    clock: Clock = timezone.now,
    rng: random.Random | None = None,
    sender: Sender = transport.post,
    limit: int = PASS_SIZE,
) -> Counter[str]:
    """One pass of the worker: send up to ``limit`` due deliveries, oldest due first. Returns
    how many ended in each state."""
    rng = rng or random.Random()
    claimed = _claim(WebhookDelivery.objects.all(), now=clock(), limit=limit)
    return Counter(
        webhook_delivery_send(delivery=d, clock=clock, rng=rng, sender=sender).state
        for d in claimed
    )


def _claim(
    deliveries: QuerySet[WebhookDelivery], *, now: datetime, limit: int
) -> list[WebhookDelivery]:
    """Take the due pending ones of ``deliveries`` for this worker: their next attempt moves
    :data:`LEASE` ahead, so another worker's pass skips them. PostgreSQL skips rows another
    worker is claiming (``SKIP LOCKED``); SQLite has one writer at a time anyway."""
    with transaction.atomic():
        ids = list(
            deliveries.filter(state=DeliveryState.PENDING, next_attempt_at__lte=now)
            .order_by("next_attempt_at")
            .select_for_update(skip_locked=True)
            .values_list("pk", flat=True)[:limit]
        )
        if not ids:
            return []
        WebhookDelivery.objects.filter(pk__in=ids).update(next_attempt_at=now + LEASE)
    return list(
        WebhookDelivery.objects.filter(pk__in=ids)
        .select_related("endpoint")
        .order_by("created_at", "pk")
    )


def _headers(delivery: WebhookDelivery, body: bytes, timestamp: int) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": "Redline-Webhooks/1",
        signing.EVENT_HEADER: delivery.event,
        signing.DELIVERY_HEADER: str(delivery.pk),
        signing.TIMESTAMP_HEADER: str(timestamp),
        signing.SIGNATURE_HEADER: signing.signature(
            secret=delivery.endpoint.secret, timestamp=timestamp, body=body
        ),
    }


def webhook_delivery_send(
    *,
    delivery: WebhookDelivery,
    clock: Clock = timezone.now,
    rng: random.Random,
    sender: Sender = transport.post,
) -> WebhookDelivery:
    """Make one attempt and record it: delivered on a 2xx answer; otherwise retried later,
    or failed after the last attempt or when the URL is refused (retrying cannot help)."""
    endpoint = delivery.endpoint
    now = clock()
    delivery.attempts += 1
    delivery.last_attempt_at = now
    delivery.status_code = None
    delivery.response_excerpt = ""
    final = False
    if not endpoint.active and delivery.event != WebhookEvent.PING:
        error, final = "the endpoint is inactive", True
    else:
        body = payloads.body(payload=delivery.payload, fmt=endpoint.format)
        try:
            response = sender(
                endpoint.url,
                body=body,
                headers=_headers(delivery, body, int(now.timestamp())),
                allow_private=settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES,
            )
        except transport.Refused as refused:
            error, final = f"refused: {refused}", True
        except (OSError, http.client.HTTPException) as problem:
            error = f"{type(problem).__name__}: {problem}"
        else:
            delivery.status_code = response.status
            delivery.response_excerpt = response.excerpt
            if 200 <= response.status < 300:
                error = ""
            elif 300 <= response.status < 400:
                error = f"redirect to {response.location or '(no Location)'} not followed"
            else:
                error = f"HTTP {response.status}"
    delivery.error = error[:1000]
    if not error:
        delivery.state, delivery.delivered_at, delivery.next_attempt_at = (
            DeliveryState.DELIVERED,
            now,
            None,
        )
    elif final or delivery.attempts >= MAX_ATTEMPTS:
        delivery.state, delivery.next_attempt_at = DeliveryState.FAILED, None
    else:
        delivery.state = DeliveryState.PENDING
        delivery.next_attempt_at = now + retry_delay(attempt=delivery.attempts, rng=rng)
    delivery.save(
        update_fields=[
            "attempts",
            "last_attempt_at",
            "status_code",
            "response_excerpt",
            "error",
            "state",
            "delivered_at",
            "next_attempt_at",
        ]
    )
    # The endpoint by name and id only: URLs of chat webhooks are secrets themselves.
    logger.info(
        "webhook %s %s to endpoint %s (%s), attempt %d: %s",
        delivery.event,
        delivery.pk,
        endpoint.pk,
        endpoint.name,
        delivery.attempts,
        delivery.state if not error else f"{delivery.state} ({delivery.error[:200]})",
    )
    return delivery
