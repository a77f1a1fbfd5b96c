"""The findings' and ingestion's signals, queued as webhook deliveries.

The signals are sent inside the transaction that makes the change, so the delivery rows are
written in it and commit with the change or not at all (a transactional outbox): nothing is
announced for a rolled-back change, and no crash between a commit and the queuing can lose an
event. The worker (``deliver_webhooks``) sees the rows only once they are committed. Each
receiver first asks which endpoints want the event, so with no endpoint subscribed an event
costs one small query. The rows are written in a savepoint: an error here is logged and rolls
back only the queuing, never the ingestion or finding change that caused the event.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory.findings import events as finding_events
from memory.findings.webhooks import payloads
from memory.findings.webhooks.services import webhook_deliveries_queue, webhook_endpoints_subscribed
from memory.models import AttackResult, Finding, WebhookEvent
from memory.storage import events as ingest_events

logger = logging.getLogger(__name__)

#: Attacks loaded per query when a large import announces its successes.
ATTACK_CHUNK = 1000


def _queue(event: str, items: Any) -> None:
    try:
        endpoints = webhook_endpoints_subscribed(event=event)
        if not endpoints:
            return
        with transaction.atomic():
            webhook_deliveries_queue(
                event=event, endpoints=endpoints, items=items(), now=timezone.now()
            )
    except Exception:
        logger.exception("could not queue %s webhook deliveries", event)


def finding_created(sender: Any, *, finding: Finding, **kwargs: Any) -> None:
    """``finding.created``."""
    _queue(
        WebhookEvent.FINDING_CREATED,
        lambda: [payloads.finding_data(finding=finding)],
    )


def finding_status_changed(sender: Any, *, finding: Finding, previous: str, **kwargs: Any) -> None:
    """``finding.status_changed``, with the status it left."""
    _queue(
        WebhookEvent.FINDING_STATUS_CHANGED,
        lambda: [payloads.finding_data(finding=finding, previous_status=previous)],
    )


def _attacks(ids: Sequence[uuid.UUID]) -> Iterator[dict[str, Any]]:
    for start in range(0, len(ids), ATTACK_CHUNK):
        chunk = (
            AttackResult.objects.filter(pk__in=ids[start : start + ATTACK_CHUNK])
            # what each payload names: the conversation and its target, the attack strategy
            .select_related("conversation__target_identifier", "attack_identifier")
            .order_by("timestamp", "pk")
        )
        for attack in chunk:
            yield payloads.attack_data(attack=attack)


def attacks_succeeded(sender: Any, *, attack_ids: Sequence[uuid.UUID], **kwargs: Any) -> None:
    """``attack.succeeded``, one event per attack of the batch."""
    _queue(WebhookEvent.ATTACK_SUCCEEDED, lambda: _attacks(list(attack_ids)))


def connect() -> None:
    """Connect the receivers (``MemoryConfig.ready``)."""
    finding_events.created.connect(finding_created, dispatch_uid="webhooks.finding_created")
    finding_events.status_changed.connect(
        finding_status_changed, dispatch_uid="webhooks.finding_status_changed"
    )
    ingest_events.attacks_succeeded.connect(
        attacks_succeeded, dispatch_uid="webhooks.attacks_succeeded"
    )
