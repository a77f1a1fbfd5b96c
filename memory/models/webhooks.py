"""Signed webhooks: the endpoints Redline notifies and the outbox of deliveries to them.

An event (a finding created, a finding's status changed, an attack that succeeded) becomes one
``WebhookDelivery`` row per active endpoint subscribed to it; ``manage.py deliver_webhooks``
sends the rows that are due, signed with the endpoint's secret (docs/webhooks.md).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from redteam.core import nul
from redteam.core.constraints import choice_check


class WebhookEvent(models.TextChoices):
    """What an endpoint can subscribe to; ``ping`` is the admin's test event, always sent."""

    FINDING_CREATED = "finding.created", "Finding created"
    FINDING_STATUS_CHANGED = "finding.status_changed", "Finding status changed"
    ATTACK_SUCCEEDED = "attack.succeeded", "Attack succeeded"
    PING = "ping", "Test event"


#: The events an endpoint may subscribe to (``ping`` reaches every endpoint it is sent to).
SUBSCRIBABLE_EVENTS = tuple(e for e in WebhookEvent if e != WebhookEvent.PING)


class WebhookFormat(models.TextChoices):
    """The body an endpoint receives: Redline's JSON envelope, or a Slack message."""

    JSON = "json", "JSON (Redline)"
    SLACK = "slack", "Slack-compatible"


class DeliveryState(models.TextChoices):
    """Where a delivery is: waiting for its next attempt, delivered, or given up on."""

    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class WebhookEndpoint(models.Model):
    """A URL that receives the events it subscribes to, signed with its secret.

    The secret signs every body (``X-Redline-Signature``); it is shown once, when the endpoint
    is created or the secret replaced, and never again (the admin's field is write-only).
    """

    name = nul.CharField(max_length=128, unique=True)
    url = models.URLField(max_length=2000)
    secret = nul.CharField(max_length=128)
    events = nul.JSONField(default=list, blank=True, help_text="The events it receives.")
    format = nul.CharField(max_length=8, choices=WebhookFormat.choices, default=WebhookFormat.JSON)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            choice_check("format", WebhookFormat, "%(app_label)s_%(class)s_format_valid"),
            models.CheckConstraint(
                condition=~models.Q(secret=""), name="%(app_label)s_%(class)s_secret_required"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def subscribes_to(self, event: str) -> bool:
        """True when the endpoint receives ``event`` (test pings reach every endpoint)."""
        return event == WebhookEvent.PING or event in self.events


class WebhookDelivery(models.Model):
    """One event on its way to one endpoint: the outbox row and its delivery log.

    ``id`` is the ``X-Redline-Delivery`` header; ``event_id`` is the same for every endpoint
    the event went to. ``payload`` is Redline's JSON envelope; a Slack endpoint receives it
    rendered as a message. ``next_attempt_at`` is set while the delivery is pending.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = nul.CharField(max_length=32, choices=WebhookEvent.choices)
    event_id = models.UUIDField(default=uuid.uuid4)
    payload = nul.JSONField(default=dict)
    state = nul.CharField(
        max_length=16, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_excerpt = nul.TextField(blank=True, default="")
    error = nul.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            # The worker's pass: pending deliveries whose next attempt is due, soonest first.
            models.Index(
                fields=["next_attempt_at"],
                name="memory_webhook_due_idx",
                condition=models.Q(state="pending"),
            ),
            # The delivery log: newest first.
            models.Index(fields=["-created_at"], name="memory_webhook_created_idx"),
        ]
        constraints = [
            choice_check("event", WebhookEvent, "%(app_label)s_%(class)s_event_valid"),
            choice_check("state", DeliveryState, "%(app_label)s_%(class)s_state_valid"),
            # A pending delivery always knows when to try next; a finished one never does.
            models.CheckConstraint(
                condition=models.Q(state="pending", next_attempt_at__isnull=False)
                | (~models.Q(state="pending") & models.Q(next_attempt_at__isnull=True)),
                name="%(app_label)s_%(class)s_next_attempt_when_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} → {self.endpoint_id} ({self.state})"
